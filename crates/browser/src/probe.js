// Installed in every frame at document start (main world). It only observes:
// DOM mutations, short timers scheduled by event handlers, running animations.
// Sightline reads it after an action to decide when the page is stable.
//
// The page's own scripts run in this world after it and may replace any global
// or prototype method. So what the probe calls later is taken now (Promise,
// requestAnimationFrame, Reflect.apply, performance.now), its API object is
// frozen, and its lists grow by index, not through Array.prototype.push. What
// the page can still do is make the probe misreport (redefine getters it reads,
// such as document.readyState); Sightline bounds every read and believes no
// more than the probe itself would record.
(() => {
  if (window.__sightline) return;
  const P = Promise, WR = WeakRef, raf = window.requestAnimationFrame, apply = Reflect.apply, ownKeys = Object.keys;
  const perfNow = Performance.prototype.now, perf = performance;
  const now = () => apply(perfNow, perf, []);
  let lastMutation = -1, markedAt = 0, inTimer = 0;
  const pending = new Set();
  const st = window.setTimeout, ct = window.clearTimeout;
  window.setTimeout = function (fn, delay, ...args) {
    const short = !inTimer && typeof fn === 'function' && (+delay || 0) <= 1000;
    let id;
    const wrapped = function () {
      pending.delete(id);
      inTimer++;
      try { return fn.apply(this, args); } finally { inTimer--; }
    };
    id = apply(st, window, [typeof fn === 'function' ? wrapped : fn, delay]);
    if (short) pending.add(id);
    return id;
  };
  window.clearTimeout = function (id) { pending.delete(id); return apply(ct, window, [id]); };
  // A fast interval started by an event handler is an animation in progress
  // (jQuery 1.x steps every animation from one 13 ms interval, cleared when the
  // last one ends): pending while it runs, for at most a second, so a page
  // clock that ticks forever holds nothing for long.
  const si = window.setInterval, ci = window.clearInterval;
  const intervals = new Map();
  window.setInterval = function (fn, delay, ...args) {
    const id = apply(si, window, [fn, delay, ...args]);
    if (!inTimer && (+delay || 0) <= 50) {
      const running = {};
      intervals.set(id, running);
      pending.add(running);
      apply(st, window, [() => { pending.delete(running); intervals.delete(id); }, 1000]);
    }
    return id;
  };
  window.clearInterval = function (id) {
    const running = intervals.get(id);
    if (running) { pending.delete(running); intervals.delete(id); }
    return apply(ci, window, [id]);
  };
  try {
    const native = (f, name) => Object.defineProperty(f, 'toString', { value: () => `function ${name}() { [native code] }` });
    native(window.setTimeout, 'setTimeout'); native(window.clearTimeout, 'clearTimeout');
    native(window.setInterval, 'setInterval'); native(window.clearInterval, 'clearInterval');
  } catch (e) {}
  // Elements given pointer/touch/dblclick/contextmenu/drop listeners (a drop zone is a target too): the DOM snapshot
  // reports click and mousedown listeners, not these. Weakly held, so detached nodes can go.
  const pointerTargets = [];
  const POINTER = new Set(['pointerdown', 'pointerup', 'touchstart', 'touchend', 'dblclick', 'contextmenu', 'mouseup', 'drop']);
  // Elements given click/mousedown/mouseup listeners: the DOM snapshot reports
  // these itself, the viewport walk (in another world) cannot see them.
  const clickTargets = [], clickSeen = new WeakSet();
  const CLICK = new Set(['click', 'mousedown', 'mouseup', 'DOMActivate']);
  const noteClick = (el) => {
    if (!clickSeen.has(el) && clickTargets.length < 20000) { clickSeen.add(el); clickTargets[clickTargets.length] = new WR(el); }
  };
  // React (16 and later) listens on the document or its root container and finds
  // the handler in the props it keeps on each element (`__reactProps$…`, in 16
  // `__reactEventHandlers$…`): a `<label onDoubleClick>` has no listener of its own.
  // Once a delegating listener appears, those props are read as evidence.
  let delegated = false, reactKey = null, reactTargets = [];
  const REACT_HANDLERS = ['onClick', 'onDoubleClick', 'onMouseDown', 'onMouseUp', 'onPointerDown', 'onPointerUp',
    'onTouchStart', 'onTouchEnd', 'onContextMenu'];
  // The key is an own property of each element React renders: only those are
  // read (a `for…in` also lists the few hundred an element inherits, and on a
  // page with a delegating listener but no React this ran on every capture).
  const findReactKey = () => {
    const walker = document.createTreeWalker(document.body || document.documentElement, NodeFilter.SHOW_ELEMENT);
    for (let n = walker.currentNode, i = 0; n && i < 200; n = walker.nextNode(), i++) {
      const keys = ownKeys(n);
      for (let j = 0; j < keys.length; j++) {
        const k = keys[j];
        if (k.startsWith('__reactProps$') || k.startsWith('__reactEventHandlers$')) return k;
      }
    }
    return null;
  };
  const readReactTargets = () => {
    reactTargets = [];
    if (!delegated) return;
    if (!reactKey) reactKey = findReactKey();
    if (!reactKey) return;
    const all = document.getElementsByTagName('*');
    for (let i = 0; i < all.length && i < 50000 && reactTargets.length < 5000; i++) {
      const p = all[i][reactKey];
      if (p && REACT_HANDLERS.some((h) => typeof p[h] === 'function')) reactTargets[reactTargets.length] = all[i];
    }
  };
  const ael = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function (type, listener, options) {
    try {
      if ((POINTER.has(type) || CLICK.has(type)) && (this === document || (this instanceof Element && !this.parentElement) ||
        (this instanceof Element && this.parentElement === document.body))) delegated = true;
      if (this instanceof Element) {
        if (POINTER.has(type) && pointerTargets.length < 5000) pointerTargets[pointerTargets.length] = new WR(this);
        if (CLICK.has(type) && listener) noteClick(this);
      }
    } catch (e) {}
    return apply(ael, this, [type, listener, options]);
  };
  for (const prop of ['onclick', 'onmousedown', 'onmouseup']) {
    try {
      const d = Object.getOwnPropertyDescriptor(HTMLElement.prototype, prop);
      const set = d.set;
      Object.defineProperty(HTMLElement.prototype, prop, { ...d, set(v) { try { if (v) noteClick(this); } catch (e) {} return apply(set, this, [v]); } });
    } catch (e) {}
  }
  try { Object.defineProperty(EventTarget.prototype.addEventListener, 'toString', { value: () => 'function addEventListener() { [native code] }' }); } catch (e) {}
  // A worker just started: its first message (or error) is part of settling, for
  // at most two seconds, so a page that shows what its worker answers at start is
  // read after the answer. An idle worker holds nothing after that.
  const NativeWorker = window.Worker;
  if (typeof NativeWorker === 'function') {
    const Worker = function Worker(...args) {
      const w = Reflect.construct(NativeWorker, args, new.target || Worker);
      const started = {};
      const done = () => pending.delete(started);
      pending.add(started);
      try { ael.call(w, 'message', done, { once: true }); ael.call(w, 'error', done, { once: true }); } catch (e) {}
      st.call(window, done, 2000);
      return w;
    };
    Worker.prototype = NativeWorker.prototype;
    try {
      Object.defineProperty(Worker, 'toString', { value: () => 'function Worker() { [native code] }' });
      Object.defineProperty(window, 'Worker', { value: Worker, writable: true, configurable: true, enumerable: false });
    } catch (e) {}
  }
  new MutationObserver(() => { lastMutation = now(); })
    .observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  const api = {
    mark() { markedAt = now(); lastMutation = -1; pending.clear(); },
    pointerCount() { readReactTargets(); return pointerTargets.length + reactTargets.length; },
    clickCount() { return clickTargets.length; },
    // `margin`: a fraction of the viewport added on each side (semantic_v2's near margin).
    clickElementsInView(margin) {
      const out = [], m = +margin || 0, w = innerWidth, h = innerHeight, mx = w * m, my = h * m;
      for (let i = 0; i < clickTargets.length; i++) {
        const e = clickTargets[i].deref();
        if (!e || !e.isConnected) continue;
        const b = e.getBoundingClientRect();
        // Without a box (display: none, a collapsed list) it is nowhere, not at (0, 0).
        if (b.width === 0 && b.height === 0 && e.getClientRects().length === 0) continue;
        if (b.right >= -mx && b.bottom >= -my && b.left <= w + mx && b.top <= h + my) out[out.length] = e;
      }
      return out;
    },
    // Where every element with a click or pointer listener is in
    // document.getElementsByTagName('*'): [its length, ...positions], so that
    // a script in another world finds the same elements. Null when one is not
    // there (in a shadow tree).
    listenerOrdinals() {
      readReactTargets();
      const want = new Set();
      for (const list of [clickTargets, pointerTargets]) {
        for (let i = 0; i < list.length; i++) { const e = list[i].deref(); if (e && e.isConnected) want.add(e); }
      }
      for (let i = 0; i < reactTargets.length; i++) if (reactTargets[i].isConnected) want.add(reactTargets[i]);
      const all = document.getElementsByTagName('*'), out = [all.length];
      if (want.size) for (let i = 0; i < all.length; i++) if (want.has(all[i])) out[out.length] = i;
      return out.length - 1 === want.size ? out : null;
    },
    pointerElements() {
      const out = [];
      for (let i = 0; i < pointerTargets.length; i++) {
        const e = pointerTargets[i].deref();
        if (e && e.isConnected) out[out.length] = e;
      }
      for (let i = 0; i < reactTargets.length; i++) if (reactTargets[i].isConnected) out[out.length] = reactTargets[i];
      return out;
    },
    // Resolves after the next frame and one task: whatever the action queued has started by then.
    afterFrame() {
      return new P((resolve) => {
        let done = false;
        const finish = () => { if (!done) { done = true; resolve(api.probe()); } };
        apply(raf, window, [() => apply(st, window, [finish, 0])]);
        apply(st, window, [finish, 100]);
      });
    },
    probe() {
      let anims = 0;
      try {
        for (const a of document.getAnimations()) {
          const end = a.effect && a.effect.getComputedTiming().endTime;
          if (a.playState === 'running' && isFinite(end) && end < 10000) anims++;
        }
      } catch (e) {}
      const quietFor = lastMutation < 0 ? 1e9 : now() - lastMutation;
      return [pending.size, Math.round(quietFor), anims, document.readyState === 'complete' ? 1 : 0];
    },
  };
  Object.freeze(api);
  Object.defineProperty(window, '__sightline', { value: api, enumerable: false, configurable: false, writable: false });
})();
