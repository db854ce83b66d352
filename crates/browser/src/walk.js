// The viewport walk: runs in Sightline's isolated world (page scripts cannot see
// it or redefine what it reads). It returns, as a JSON string, one document shaped
// like `DOMSnapshot.captureSnapshot`'s reply, holding only what the page model
// reads for the element-index state: the nodes whose boxes meet the viewport,
// their ancestors, small subtrees in view whole, what has no box under kept
// elements (options, <head>), the text in view, and what kept elements refer to
// by id (labels, aria-labelledby…). Paint order is computed from the CSS stacking
// rules. It returns `[json, ...roots]` (the elements to describe for the kept
// elements' backend ids, see `describe`), or the JSON alone when it knows every
// kept element's id (see `learned`), or null where it could not give what the full snapshot
// gives (a frame in view, generated content it cannot read, too many nodes): the
// caller then takes the full snapshot.
(function (frameId, styleNames, semantic, far, learned) {
  'use strict';
  // Backend ids: the caller hands back the ids it described for the last
  // call's kept elements when that call did not know them all (`learned`: that
  // call's `gen`, the ids in its `kept` order). They are remembered per element:
  // a node's backend id never changes while it lives, and the map lets go of an
  // element that is gone.
  // A subtree described whole is read back by position: if elements were added,
  // removed or moved in one since the walk returned it (`ID.moved`, watched from
  // then on), positions may have shifted, and nothing of that call is learned.
  const ID = globalThis.__sightlineIds || (globalThis.__sightlineIds =
    { gen: Math.floor(Math.random() * 2 ** 52), last: null, of: new WeakMap(), watch: null, moved: false });
  if (ID.watch) {
    if (ID.watch.takeRecords().length) ID.moved = true;
    ID.watch.disconnect();
    ID.watch = null;
  }
  if (learned && ID.last && !ID.moved && learned.gen === ID.gen && learned.ids.length === ID.last.length) {
    for (let i = 0; i < ID.last.length; i++) ID.of.set(ID.last[i], learned.ids[i]);
  }
  ID.last = null;
  ID.moved = false;
  const doc = document;
  const T0 = performance.now(), TM = {};
  const VW = innerWidth, VH = innerHeight, SX = scrollX, SY = scrollY;
  // What is kept: the viewport, and for semantic_v2 its near margin too.
  const MX = semantic ? VW * semantic.margin : 0, MY = semantic ? VH * semantic.margin : 0;
  const meets = (r) => r.right >= -MX && r.bottom >= -MY && r.left <= VW + MX && r.top <= VH + MY;
  // The elements a selector's pseudo-elements belong to: each selector of the
  // list without them, `*` where a compound is left empty (`div > ::before`).
  const elementOf = (list) => {
    const out = [];
    let depth = 0, from = 0;
    const piece = (p) => {
      p = p.replace(/::[a-z-]+(\([^)]*\))?|:(before|after|first-line|first-letter|-webkit-[a-z-]+|-moz-[a-z-]+)(\([^)]*\))?/gi, '').trimStart();
      out.push(p.trim() === '' ? '*' : /[\s>+~]$/.test(p) ? p + '*' : p);
    };
    for (let k = 0; k < list.length; k++) {
      const ch = list[k];
      if (ch === '(') depth++;
      else if (ch === ')') depth--;
      else if (ch === ',' && depth === 0) { piece(list.slice(from, k)); from = k + 1; }
    }
    piece(list.slice(from));
    return out.join(',');
  };
  const SMALL = 64, MAX_KEPT = 6000;
  const ELEMENT = 1, TEXT = 3, DOCUMENT = 9, FRAGMENT = 11;
  const NO_TEXT = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE']);
  const FRAMES = new Set(['IFRAME', 'FRAME', 'OBJECT', 'EMBED', 'FENCEDFRAME', 'PORTAL']);
  const REFS = ['for', 'aria-labelledby', 'aria-describedby', 'aria-controls', 'aria-owns', 'aria-activedescendant',
    'aria-details', 'aria-errormessage', 'list', 'form', 'popovertarget', 'commandfor', 'headers'];

  // A long run of children in normal block flow is laid out in document order:
  // a binary search on their tops finds the ones in view without reading every
  // box (a feed, a table body, a page of 5,000 cards). Returns the childNodes
  // range to visit, or null where the order cannot be relied on.
  const RUN = 32;
  const FLOW = new Set(['block', 'flow-root', 'list-item', 'inline-block', 'table-row-group']);
  function visibleRun(node, kids) {
    const cs = getComputedStyle(node);
    if (!FLOW.has(cs.display) || cs.writingMode !== 'horizontal-tb') return null;
    const els = [];
    for (let k = 0; k < kids.length; k++) if (kids[k].nodeType === ELEMENT) els.push(k);
    const seen = new Map();
    let broken = false;
    const rect = (j) => {
      let r = seen.get(j);
      if (r === undefined) {
        const e = kids[els[j]];
        r = e.getBoundingClientRect();
        if (r.width === 0 && r.height === 0 && r.x === 0 && r.y === 0) broken = true;
        const ps = getComputedStyle(e).position;
        if (ps === 'absolute' || ps === 'fixed') broken = true;
        seen.set(j, r);
      }
      return r;
    };
    // First child whose top is below the viewport, and first whose top is in or below it.
    const search = (pred) => { let lo = 0, hi = els.length; while (lo < hi) { const m = (lo + hi) >> 1; if (pred(rect(m))) hi = m; else lo = m + 1; } return lo; };
    let below = search((r) => r.top > VH + MY);
    let start = search((r) => r.top >= -MY);
    // Boxes of one line differ in top (baseline alignment), and children that
    // start above the viewport can reach into it: step out from both ends until
    // eight in a row are wholly outside.
    for (let out = 0; start > 0 && out < 8; ) { start--; if (rect(start).bottom < -MY) out++; else out = 0; }
    for (let out = 0, j = below; j < els.length && out < 8; j++) {
      if (rect(j).top > VH + MY) out++; else { out = 0; below = j + 1; }
    }
    if (broken) return null;
    // In flow, a later child never sits wholly above an earlier one.
    const probes = [...seen.entries()].sort((a, b) => a[0] - b[0]);
    for (let q = 1; q < probes.length; q++) if (probes[q][1].bottom < probes[q - 1][1].top) return null;
    return [start === 0 ? 0 : els[start - 1] + 1, below >= els.length ? kids.length : els[below]];
  }

  // Every style rule of the document's style sheets and adopted ones, in
  // order, through @import and grouping rules: `visit(rule, selectorText,
  // relative)` (the selector read once: each read serializes it anew), where
  // `relative` is 'nested' for a rule nested in a style rule (its selector is
  // relative to its parent's), 'scope' for one right inside @scope (its
  // `:scope` and scoping root are not what the document's query sees), else ''.
  // A visit returns false to give up. Returns false where one gave up or a
  // sheet cannot be read (another origin's), else true.
  const eachRule = (visit) => {
    // `relative` is the rules' parent's: a list's rules have the rule holding it as their parentRule.
    const scan = (rules, relative) => {
      for (const r of rules) {
        const sel = r.selectorText;
        if (sel !== undefined && r.style && visit(r, sel, relative) === false) return false;
        const inner = r.cssRules;
        if (inner && inner.length &&
          !scan(inner, sel !== undefined ? 'nested' : r.constructor.name === 'CSSScopeRule' ? 'scope' : '')) return false;
        if (r.styleSheet && !scan(r.styleSheet.cssRules, '')) return false;
      }
      return true;
    };
    try {
      for (const sheet of doc.styleSheets) if (!scan(sheet.cssRules, '')) return false;
      for (const sheet of doc.adoptedStyleSheets || []) if (!scan(sheet.cssRules, '')) return false;
    } catch (e) { return false; }
    return true;
  };

  // A fixed box is not where its place in a run says: a fixed bar inside the
  // first of a thousand rows is in view wherever the page is scrolled. The
  // selectors of the rules that could fix an element, from every style sheet;
  // null when a sheet cannot be read (another origin's, a nested rule): then no
  // run is searched and every box is read. (A sticky box stays in its parent's;
  // an absolute one beyond the siblings read around the viewport, or a fixed one
  // in a shadow root, is not looked for.)
  function fixedSelectors() {
    const sels = [];
    const read = eachRule((r, sel, relative) => {
      const pos = r.style.getPropertyValue('position');
      if (pos === 'fixed' || pos.includes('var(')) {
        // A nested rule's selector is relative to its parent's; a pseudo-element is no element.
        if (relative === 'nested') return false;
        sels.push(elementOf(sel));
      }
    });
    return read ? sels : null;
  }
  // The elements those rules, style attributes or the UA sheet (dialogs,
  // popovers) could fix: a superset, whatever overrides the rules.
  function fixable(sels) {
    const all = [...sels, '[style*="fixed" i]', '[popover]'];
    const found = new Set(doc.getElementsByTagName('dialog'));
    try {
      for (const el of doc.querySelectorAll(all.join(','))) found.add(el);
    } catch (e) {
      for (const sel of all) { try { for (const el of doc.querySelectorAll(sel)) found.add(el); } catch (e2) {} }
    }
    return found;
  }
  // Read once, when the first long run is met: most pages have none.
  let fixedSels;
  const searchable = () => {
    if (fixedSels === undefined) fixedSels = fixedSelectors();
    return fixedSels !== null;
  };

  // Pass 1: every node in pre-order (shadow roots before children), with its
  // parent, and for elements whether their box meets the viewport.
  const nodes = [], parent = [], flag = [], pruned = [];
  const IN_VIEW = 1, NO_BOX = 2;
  const stack = [doc, -1];
  let shadows = false;
  while (stack.length) {
    const p = stack.pop(), node = stack.pop();
    const i = nodes.length;
    nodes.push(node); parent.push(p); flag.push(0);
    const t = node.nodeType;
    if (t === ELEMENT) {
      const r = node.getBoundingClientRect();
      if (r.width === 0 && r.height === 0 && r.x === 0 && r.y === 0 && node.getClientRects().length === 0) {
        flag[i] = NO_BOX;
      } else if (meets(r)) {
        flag[i] = IN_VIEW;
      }
    }
    if (t === TEXT || (t === ELEMENT && NO_TEXT.has(node.nodeName))) continue;
    const kids = node.childNodes;
    let from = 0, to = kids.length;
    if (t === ELEMENT && node.childElementCount >= RUN && searchable()) {
      const run = visibleRun(node, kids);
      if (run) { from = run[0]; to = run[1]; if (from > 0 || to < kids.length) pruned.push(i); }
    }
    for (let k = to - 1; k >= from; k--) {
      const c = kids[k], ct = c.nodeType;
      if (ct === ELEMENT || ct === TEXT) stack.push(c, i);
    }
    if (t === ELEMENT && node.shadowRoot) { stack.push(node.shadowRoot, i); shadows = true; }
  }
  const n = nodes.length;
  TM.pass1 = performance.now() - T0; TM.visited = n; TM.pruned = pruned.length;
  // What a searched run skipped and is in view all the same: only the full snapshot has it.
  if (pruned.length) {
    const t = performance.now();
    const escapees = fixable(fixedSels);
    TM.fixable = escapees.size;
    TM.fixableMs = performance.now() - t;
    const seen = escapees.size ? new Set(nodes) : null;
    for (const el of escapees) {
      if (seen.has(el)) continue;
      const r = el.getBoundingClientRect();
      if ((r.width > 0 || r.height > 0) && meets(r)) return null;
    }
  }
  const end = new Int32Array(n);
  for (let i = 0; i < n; i++) end[i] = i;
  for (let i = n - 1; i > 0; i--) if (end[i] > end[parent[i]]) end[parent[i]] = end[i];
  const index = new Map();

  // What to keep.
  const keep = new Uint8Array(n);
  const up = (i) => { while (i >= 0 && !keep[i]) { keep[i] = 1; i = parent[i]; } };
  let bail = false;
  // A subtree kept whole must be complete: not one whose children were searched.
  const complete = (i) => { for (const p of pruned) if (p >= i && p <= end[i]) return false; return true; };
  const whole = (i) => {
    up(i);
    for (let j = i; j <= end[i]; j++) keep[j] = 1;
    if (!complete(i)) bail = true;
  };
  up(0);
  for (let i = 0; i < n; i++) {
    if (flag[i] !== IN_VIEW) continue;
    if (end[i] - i <= SMALL && complete(i)) whole(i); else up(i);
  }
  // Elements without a box under kept elements (options, <head>, hidden inputs), whole.
  for (let i = 1; i < n; i++) {
    if (!keep[i] && flag[i] === NO_BOX && keep[parent[i]]) whole(i);
  }
  // What kept elements refer to by id, whole; and the labels of kept controls.
  // Without shadow roots, every label's control is looked up once (`el.labels`
  // searches the whole document for each control asked).
  let labelsOf = null;
  if (!shadows) {
    labelsOf = new Map();
    for (const l of doc.getElementsByTagName('label')) {
      const c = l.control;
      if (c) { const ls = labelsOf.get(c); if (ls) ls.push(l); else labelsOf.set(c, [l]); }
    }
  }
  const refd = [];
  for (let i = 0; i < n; i++) {
    if (!keep[i] || nodes[i].nodeType !== ELEMENT) continue;
    const el = nodes[i];
    for (const a of REFS) {
      const v = el.getAttribute(a);
      if (!v) continue;
      const root = el.getRootNode();
      for (const id of v.split(/\s+/)) {
        if (!id) continue;
        const target = root.getElementById ? root.getElementById(id) : null;
        if (target) refd.push(target);
      }
    }
    const ls = labelsOf ? labelsOf.get(el) : el.labels;
    if (ls) for (const l of ls) refd.push(l);
  }
  if (refd.length) {
    for (let i = 0; i < n; i++) index.set(nodes[i], i);
    for (const el of refd) { const i = index.get(el); if (i !== undefined) whole(i); else bail = true; }
  }
  if (bail) return null;
  // Text under kept elements: what is in view, and whitespace beside kept siblings.
  const textRects = new Map();
  const range = doc.createRange();
  for (let i = 1; i < n; i++) {
    const node = nodes[i];
    if (node.nodeType !== TEXT || !keep[parent[i]]) continue;
    range.selectNodeContents(node);
    const rects = range.getClientRects();
    textRects.set(i, rects);
    // A name is read from the start of an element's text, in view or not.
    if (keep[i] || semantic) { keep[i] = 1; continue; }
    let yes = false;
    for (const r of rects) if (meets(r)) { yes = true; break; }
    if (!yes && rects.length && node.data.trim() === '') {
      const prev = node.previousSibling, next = node.nextSibling;
      yes = (prev && keep[i - 1] && nodes[i - 1] === prev) || (next && i + 1 < n && keep[i + 1] && nodes[i + 1] === next);
    }
    if (yes) keep[i] = 1;
  }
  let kept = 0;
  for (let i = 0; i < n; i++) kept += keep[i];
  TM.keep = performance.now() - T0;
  if (kept > MAX_KEPT) return null;
  // semantic_v2 counts what the walk left out (far.js).
  let farCounts = null, farContent = null;
  if (semantic) {
    const keptSet = new Set();
    for (let i = 0; i < n; i++) if (keep[i]) keptSet.add(nodes[i]);
    const ords = semantic.listeners, all = doc.getElementsByTagName('*');
    if (all.length !== ords[0]) return null;
    const listeners = new Set();
    for (let k = 1; k < ords.length; k++) listeners.add(all[ords[k]]);
    const got = far(keptSet, semantic.tables, listeners, elementOf, eachRule);
    TM.far = performance.now() - T0;
    if (!got) return null;
    farCounts = got.counts; farContent = got.content;
  }

  // The snapshot.
  const strings = [], sidx = new Map();
  const S = (s) => {
    s = s == null ? '' : String(s);
    let k = sidx.get(s);
    if (k === undefined) { k = strings.length; strings.push(s); sidx.set(s, k); }
    return k;
  };
  const N = { parentIndex: [], nodeType: [], shadowRootType: { index: [], value: [] }, nodeName: [], nodeValue: [],
    backendNodeId: [], attributes: [], textValue: { index: [], value: [] }, inputValue: { index: [], value: [] },
    inputChecked: { index: [] }, optionSelected: { index: [] }, contentDocumentIndex: { index: [], value: [] },
    isClickable: { index: [] }, pseudoType: { index: [], value: [] } };
  const L = { nodeIndex: [], styles: [], bounds: [], text: [], paintOrders: [] };
  const T = { layoutIndex: [], bounds: [] };
  const newIndex = new Int32Array(n).fill(-1);
  const keptElements = [], keptIndices = [];
  const styleOf = new Map(); // node index → style string ids
  const layerInfo = [];      // {i, k (new index), layer props}
  const layoutOfNode = new Map(); // new node index → [layout indices]
  const box = (r) => [r.left + SX, r.top + SY, r.width, r.height];
  const transform = (s, tt) => {
    if (tt === 'uppercase') return s.toUpperCase();
    if (tt === 'lowercase') return s.toLowerCase();
    if (tt === 'capitalize') return s.replace(/(^|[\s\u00a0])(\S)/g, (m, a, b) => a + b.toUpperCase());
    return s;
  };
  const addLayout = (k, bounds, styles, text) => {
    const li = L.nodeIndex.length;
    L.nodeIndex.push(k); L.styles.push(styles); L.bounds.push(bounds); L.text.push(text); L.paintOrders.push(0);
    let a = layoutOfNode.get(k); if (!a) layoutOfNode.set(k, a = []); a.push(li);
    return li;
  };
  let syntheticId = -2;
  // The elements that could have `::before` or `::after` content: those a rule
  // setting a pseudo-element's `content` (under any media) could match, and
  // <q> (the UA sheet's quotes). null where a sheet cannot be read, such a rule
  // is nested or in @scope, or there are shadow roots (`:host::before`): every
  // element is asked. far.js, where it counted, read the same selectors (it
  // gives up on every nested or scoped rule, so its list is this one).
  const contentSelectors = () => {
    const sels = ['q'];
    const read = eachRule((r, sel, relative) => {
      if (!/::?(before|after)\b/i.test(sel)) return;
      if (relative) return false;
      const st = r.style;
      if (st.getPropertyValue('content') !== '' || st.getPropertyValue('all') !== '') sels.push(elementOf(sel));
    });
    return read ? sels : null;
  };
  const pseudoHolders = (() => {
    if (shadows) return null;
    const sels = farContent || contentSelectors();
    if (sels === null) return null;
    try { return new Set(doc.querySelectorAll(sels.join(','))); } catch (e) { return null; }
  })();
  const textTransformOf = new Map();

  for (let i = 0; i < n && !bail; i++) {
    if (!keep[i]) continue;
    const node = nodes[i], t = node.nodeType;
    const k = N.parentIndex.length;
    newIndex[i] = k;
    N.parentIndex.push(i === 0 ? -1 : newIndex[parent[i]]);
    N.nodeType.push(t);
    N.backendNodeId.push(t === ELEMENT ? -1 : syntheticId--);
    if (t === DOCUMENT) {
      N.nodeName.push(S('#document')); N.nodeValue.push(S('')); N.attributes.push([]);
      const se = doc.scrollingElement || doc.documentElement;
      const li = addLayout(k, [0, 0, se ? se.scrollWidth : VW, se ? se.scrollHeight : VH], styleNames.map(() => S('')), -1);
      styleOf.set(i, L.styles[li]);
      continue;
    }
    if (t === FRAGMENT) {
      N.nodeName.push(S('#document-fragment')); N.nodeValue.push(S('')); N.attributes.push([]);
      N.shadowRootType.index.push(k); N.shadowRootType.value.push(S(node.mode));
      continue;
    }
    if (t === TEXT) {
      N.nodeName.push(S('#text')); N.nodeValue.push(S(node.data)); N.attributes.push([]);
      const rects = textRects.get(i);
      let p = parent[i];
      while (p >= 0 && !styleOf.has(p)) p = parent[p];
      if (rects && rects.length && p >= 0) {
        range.selectNodeContents(node);
        const li = addLayout(k, box(range.getBoundingClientRect()), styleOf.get(p), S(transform(node.data, textTransformOf.get(p))));
        for (const r of rects) { T.layoutIndex.push(li); T.bounds.push(box(r)); }
      }
      continue;
    }
    // An element.
    const el = node, name = el.nodeName;
    if (FRAMES.has(name) && flag[i] !== NO_BOX) { bail = true; break; }
    N.nodeName.push(S(name)); N.nodeValue.push(S(''));
    const attrs = [];
    for (const a of el.attributes) attrs.push(S(a.name), S(a.value));
    N.attributes.push(attrs);
    keptElements.push(el); keptIndices.push(k);
    if (name === 'INPUT') {
      N.inputValue.index.push(k); N.inputValue.value.push(S(el.value));
      if ((el.type === 'checkbox' || el.type === 'radio') && el.checked) N.inputChecked.index.push(k);
    } else if (name === 'TEXTAREA') {
      N.textValue.index.push(k); N.textValue.value.push(S(el.value));
    } else if (name === 'OPTION' && el.selected) {
      N.optionSelected.index.push(k);
    }
    let disabled = false;
    try { disabled = el.matches(':disabled'); } catch (e) {}
    let clickable = false;
    if (!disabled) {
      clickable = el.isContentEditable || el.hasAttribute('onclick') || el.hasAttribute('onmousedown') ||
        el.hasAttribute('onmouseup');
      if (!clickable && (name === 'A' || name === 'AREA' || name === 'a')) clickable = el.hasAttribute('href');
      // Chromium's snapshot reports every enabled <input> as clickable (a hidden one too).
      if (name === 'INPUT') clickable = true;
    }
    if (clickable) N.isClickable.index.push(k);
    if (flag[i] === NO_BOX) continue;
    const cs = getComputedStyle(el);
    const styles = styleNames.map((s) => S(cs.getPropertyValue(s)));
    styleOf.set(i, styles);
    textTransformOf.set(i, cs.textTransform);
    addLayout(k, box(el.getBoundingClientRect()), styles, name === 'BR' ? S('\n') : -1);
    layerInfo.push({ i, k, cs, el, parentLayer: null, children: [], order: -1 });
    // Generated content before and after, where a rule could give it.
    if (pseudoHolders !== null && !pseudoHolders.has(el)) continue;
    for (const which of ['before', 'after']) {
      const ps = getComputedStyle(el, '::' + which);
      const content = ps.content;
      if (!content || content === 'none' || content === 'normal' || ps.display === 'none') continue;
      let text = '';
      const re = /\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|attr\(\s*([^)\s]+)\s*\))/y;
      let m, at = 0;
      re.lastIndex = 0;
      while ((m = re.exec(content))) {
        at = re.lastIndex;
        if (m[3] !== undefined) text += el.getAttribute(m[3]) || '';
        else text += (m[1] !== undefined ? m[1] : m[2]).replace(/\\(.)/g, '$1');
      }
      if (content.slice(at).trim() !== '') { bail = true; break; }
      const pk = N.parentIndex.length;
      N.parentIndex.push(k); N.nodeType.push(ELEMENT); N.backendNodeId.push(syntheticId--);
      N.nodeName.push(S('::' + which)); N.nodeValue.push(S('')); N.attributes.push([]);
      N.pseudoType.index.push(pk); N.pseudoType.value.push(S(which));
      const pstyles = styleNames.map((s) => S(ps.getPropertyValue(s)));
      const bounds = box(el.getBoundingClientRect());
      addLayout(pk, bounds, pstyles, -1);
      if (text !== '') addLayout(pk, bounds, pstyles, S(transform(text, ps.textTransform)));
    }
  }
  if (bail) return null;
  TM.emit = performance.now() - T0;

  // What the caller describes for backend ids, unless every kept element's is
  // known: a kept element whose small subtree is mostly kept goes whole (one
  // `DOM.describeNode` of depth -1, its elements in tree order), any other kept
  // element on its own. Each entry pairs an element's position in its subtree
  // (0: the root) with its position in `kept`.
  const known = keptElements.map((el) => ID.of.get(el));
  const allKnown = known.every((id) => id !== undefined);
  const describe = [], describeRoots = [];
  if (!allKnown) {
    const GROUP_MAX = 300;
    const keptPos = new Map();
    keptElements.forEach((el, p) => keptPos.set(el, p));
    const covered = new Uint8Array(keptElements.length);
    keptElements.forEach((el, p) => {
      if (covered[p]) return;
      const below = el.getElementsByTagName('*');
      // Indexing stops counting where the index is: a big subtree is not counted whole.
      const small = below[0] !== undefined && below[GROUP_MAX - 1] === undefined;
      const size = small ? below.length + 1 : 0;
      if (small) {
        const pairs = [[0, p]];
        for (let j = 0; j < below.length; j++) {
          const q = keptPos.get(below[j]);
          if (q !== undefined && !covered[q]) pairs.push([j + 1, q]);
        }
        if (pairs.length * 2 >= size) {
          for (const [, q] of pairs) covered[q] = 1;
          describe.push(pairs); describeRoots.push(el);
          return;
        }
      }
      covered[p] = 1;
      describe.push([[0, p]]); describeRoots.push(el);
    });
  }

  // Paint order: Chromium numbers paint layers in the order it paints them and
  // gives every box the number of its layer.
  const root = { k: 0, sc: true, stacked: true, z: 0, children: [], order: -1, top: false };
  const layerOfOld = new Map([[0, root]]);
  const topLayer = [];
  for (const info of layerInfo) {
    const cs = info.cs, el = info.el;
    const pos = cs.position, zi = cs.zIndex;
    const isRoot = el === doc.documentElement;
    let parentDisplay = '';
    const pe = el.parentElement;
    if (pe) { const pcs = getComputedStyle(pe); parentDisplay = pcs.display; }
    const flexItem = /flex|grid/.test(parentDisplay) && pos === 'static';
    const none = (v) => !v || v === 'none';
    const wc = cs.willChange;
    const contain = cs.contain;
    const effects = parseFloat(cs.opacity) < 1 || !none(cs.transform) || !none(cs.translate) || !none(cs.rotate) ||
      !none(cs.scale) || !none(cs.filter) || !none(cs.backdropFilter) || !none(cs.clipPath) ||
      !none(cs.maskImage || cs.webkitMaskImage) || cs.mixBlendMode !== 'normal' || cs.isolation === 'isolate' ||
      !none(cs.perspective) || /transform|opacity|filter|perspective|translate|rotate|scale/.test(wc) ||
      /paint|layout|strict|content/.test(contain);
    const sc = isRoot || effects || pos === 'fixed' || pos === 'sticky' ||
      ((pos === 'absolute' || pos === 'relative') && zi !== 'auto') || (flexItem && zi !== 'auto');
    const stacked = sc || pos !== 'static';
    const clips = (v) => v !== 'visible' && v !== 'clip';
    const layer = stacked || clips(cs.overflowX) || clips(cs.overflowY) ||
      ['VIDEO', 'CANVAS', 'IFRAME', 'EMBED', 'OBJECT'].includes(el.nodeName);
    if (!layer) continue;
    let top = false;
    try { top = el.matches(':modal, :popover-open, :fullscreen'); } catch (e) {}
    const L2 = { k: info.k, sc, stacked, z: zi === 'auto' ? 0 : parseInt(zi, 10) || 0, children: [], order: -1, top };
    layerOfOld.set(info.i, L2);
  }
  // Each layer's parent: the nearest ancestor with a layer (top-layer elements hang from the root).
  const enclosing = new Int32Array(n).fill(-1); // old index → old index of its enclosing layer's node
  for (let i = 0; i < n; i++) {
    if (!keep[i]) continue;
    if (layerOfOld.has(i)) { enclosing[i] = i; continue; }
    enclosing[i] = i === 0 ? 0 : enclosing[parent[i]];
  }
  for (const [i, l] of layerOfOld) {
    if (i === 0) continue;
    if (l.top) { topLayer.push(l); continue; }
    const p = layerOfOld.get(enclosing[parent[i]]) || root;
    p.children.push(l);
  }
  let counter = 0;
  const collect = (l, out) => {
    for (const c of l.children) {
      if (c.stacked) out.push(c);
      if (!c.sc) collect(c, out);
    }
  };
  const visit = (l) => {
    l.order = counter++;
    let zs = [];
    if (l.sc) { collect(l, zs); if (l === root) zs = zs.concat(topLayer); }
    const neg = zs.filter((c) => c.z < 0).map((c, j) => [c, j]).sort((a, b) => a[0].z - b[0].z || a[1] - b[1]);
    const pos = zs.filter((c) => c.z >= 0).map((c, j) => [c, j]).sort((a, b) => a[0].z - b[0].z || a[1] - b[1]);
    for (const [c] of neg) visit(c);
    for (const c of l.children) if (!c.stacked) visit(c);
    for (const [c] of pos) visit(c);
  };
  visit(root);
  for (let i = 0; i < n; i++) {
    if (!keep[i]) continue;
    const l = layerOfOld.get(enclosing[i]) || root;
    const lis = layoutOfNode.get(newIndex[i]);
    if (lis) for (const li of lis) L.paintOrders[li] = l.order;
  }
  // Pseudo-elements paint in their element's layer.
  for (const k of N.pseudoType.index) {
    const owner = layoutOfNode.get(N.parentIndex[k]);
    const lis = layoutOfNode.get(k);
    if (owner && lis) for (const li of lis) L.paintOrders[li] = L.paintOrders[owner[0]];
  }

  TM.paint = performance.now() - T0;
  const se = doc.scrollingElement || doc.documentElement;
  ID.gen++;
  ID.last = keptElements;
  const grouped = describe.filter((pairs) => pairs.length > 1);
  if (grouped.length) {
    ID.watch = new MutationObserver(() => { ID.moved = true; });
    describe.forEach((pairs, j) => {
      if (pairs.length > 1) ID.watch.observe(describeRoots[j], { childList: true, subtree: true });
    });
  }
  const json = JSON.stringify({
    documents: [{
      documentURL: S(doc.URL), title: S(doc.title), baseURL: S(doc.baseURI), frameId: S(frameId),
      nodes: N, layout: L, textBoxes: T, scrollOffsetX: SX, scrollOffsetY: SY,
      contentWidth: se ? se.scrollWidth : VW, contentHeight: se ? se.scrollHeight : VH,
    }],
    strings,
    kept: keptIndices,
    describe,
    gen: ID.gen,
    ids: allKnown ? known : null,
    far: farCounts,
    timing: TM,
  });
  return allKnown ? json : [json, ...describeRoots];
})
