// The semantic_v2 count of what the viewport walk left out: for every element
// the walk did not keep, whether `semantic::build` would make it a node, and
// if so why the viewport scope omits it (css_hidden, no_layout, offscreen).
// It mirrors the rules of `facts/candidates.rs` (why an element is
// interactive), `semantic/build.rs` (action, content and text nodes, hidden
// subtrees) and `semantic/name.rs` (`direct_text`, `is_block`), over the whole
// document; the equivalence test `semantic::walk_counts_equal_the_full_capture_s`
// holds the two together. Where it cannot mirror them exactly (a shadow root, a
// frame, an open modal dialog, a style sheet it cannot read, generated content
// other than text, a kept element whose targets are out of the walk) it returns
// null and the caller takes the full snapshot.
//
// Called from the walk (same isolated world) with the kept nodes, the tables of
// roles and tags from Rust, and the elements the page's own world saw get
// click or pointer listeners, the walk's `elementOf` (what element a
// selector's pseudo-elements belong to) and `eachRule` (every style rule).
// Returns the counts and the selectors of the rules that could give
// `::before`/`::after` content (the walk asks those elements for it).
(function (kept, T, listeners, elementOf, eachRule) {
  'use strict';
  const doc = document;
  const SKIP = new Set(T.skip), NATIVE = new Set(T.native), LABELABLE = new Set(T.labelable);
  const INTERACTIVE = new Set(T.interactive), CONTENT = new Set(T.content), TEXT_ROLE = new Set(T.text);
  const FRAMES = new Set(['iframe', 'frame', 'object', 'embed', 'fencedframe', 'portal']);
  if (doc.querySelector('dialog:modal')) return null;

  // Which elements style rules could give a `cursor: pointer`, a `display`
  // of none or contents, a hidden `visibility`, a zero `opacity`, or generated
  // `::before`/`::after` content: reading every element's style would cost as
  // much as the snapshot. A superset: a rule under any media query counts, and
  // the computed style of each element found decides.
  // `layout` holds every rule that sets `display` at all, or a float or an
  // absolute position (which make an element a block), for `fullDisplay`.
  const sels = { cursor: [], display: [], visibility: [], opacity: [], content: ['q'], layout: [] };
  const KEYWORD = /var\(|inherit|unset|revert|initial/;
  const read = eachRule((r, sel, relative) => {
    // A nested rule's selector is relative to its parent's.
    // Within @scope, `:scope` and the scoping root are not what the document's query sees.
    if (relative) return false;
    const st = r.style, s = elementOf(sel), all = st.getPropertyValue('all') !== '';
    const cur = st.getPropertyValue('cursor'), dis = st.getPropertyValue('display');
    const vis = st.getPropertyValue('visibility'), op = st.getPropertyValue('opacity');
    if (all || cur.includes('pointer') || KEYWORD.test(cur)) sels.cursor.push(s);
    if (all || /none|contents/.test(dis) || KEYWORD.test(dis)) sels.display.push(s);
    if (all || (vis !== '' && vis !== 'visible')) sels.visibility.push(s);
    if (all || (op !== '' && !(parseFloat(op) >= 0.01))) sels.opacity.push(s);
    const fl = st.getPropertyValue('float'), pos = st.getPropertyValue('position');
    if (all || dis !== '' || (fl !== '' && fl !== 'none') || /absolute|fixed/.test(pos) || KEYWORD.test(fl) || KEYWORD.test(pos)) sels.layout.push(s);
    // The walk's own test, as it reuses this list (a rule that sets `all` sets `content` too).
    if (/::?(before|after)\b/i.test(sel) && (st.getPropertyValue('content') !== '' || all)) sels.content.push(s);
  });
  if (!read) return null;
  // Elements whose style attribute could set one of `props` (or `all`).
  const styled = [...doc.querySelectorAll('[style]')];
  const matching = (list, props) => {
    const found = new Set();
    for (const el of styled) {
      const text = el.getAttribute('style').toLowerCase();
      if (text.includes('all') || props.some((p) => text.includes(p))) found.add(el);
    }
    if (list.length === 0) return found;
    try { for (const el of doc.querySelectorAll(list.join(','))) found.add(el); } catch (e) {
      for (const s of list) { try { for (const el of doc.querySelectorAll(s)) found.add(el); } catch (e2) { return null; } }
    }
    return found;
  };
  // What the UA style sheet does not render (besides what build.rs skips) is
  // found in pass 1: these tags, `[hidden]`, `<input type=hidden>`, a closed
  // <dialog>, a popover not showing.
  const UA_NONE = new Set(['area', 'base', 'datalist', 'noembed', 'noframes', 'param', 'source', 'track', 'noscript',
    'slot', 'audio', 'ruby', 'rb', 'rp', 'rt', 'rtc']);
  // The tags Chromium's UA sheet gives a display other than inline (the rest
  // of what is not inline is in UA_NONE).
  const UA_NOT_INLINE = new Set(['address', 'article', 'aside', 'blockquote', 'body', 'center', 'dd', 'details', 'dir',
    'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure', 'footer', 'form', 'frame', 'frameset', 'h1', 'h2', 'h3', 'h4',
    'h5', 'h6', 'header', 'hgroup', 'hr', 'html', 'legend', 'listing', 'main', 'menu', 'nav', 'ol', 'optgroup', 'option',
    'p', 'plaintext', 'pre', 'search', 'section', 'summary', 'ul', 'xmp', 'button', 'input', 'marquee', 'meter',
    'progress', 'select', 'textarea', 'caption', 'col', 'colgroup', 'li', 'table', 'tbody', 'td', 'th', 'tfoot', 'thead',
    'tr', 'dialog']);
  const S = {
    cursor: matching(sels.cursor, ['cursor']),
    display: matching(sels.display, ['display']),
    visibility: matching(sels.visibility, ['visibility']),
    opacity: matching(sels.opacity, ['opacity']),
    content: matching(sels.content, ['content']),
  };
  for (const k in S) if (!S[k]) return null;
  // Rules that could set a display are matched only for the elements whose
  // display is asked (many, and often broad, on real pages).
  const layoutStyled = matching([], ['display', 'float', 'position']);
  const layoutList = sels.layout.join(',');
  try { if (layoutList) doc.createDocumentFragment().querySelector(layoutList); } catch (e) { return null; }
  // Asked of many elements, one query answers for all (the same matches, but
  // for `:scope`, which is the element itself to `matches`).
  let layoutMatched = null, layoutAsked = 0;
  const layoutQuery = !/:scope/i.test(layoutList);
  const layoutMatch = (el) => {
    if (layoutMatched === null && layoutQuery && ++layoutAsked > 500) layoutMatched = new Set(doc.querySelectorAll(layoutList));
    return layoutMatched === null ? el.matches(layoutList) : layoutMatched.has(el);
  };
  const layoutRuled = (el) => S.display.has(el) || layoutStyled.has(el) || (layoutList !== '' && layoutMatch(el));

  // Text a person could read: not white space, icon-font glyphs or U+FFFD.
  const VISIBLE_CHAR = /[^ \t\n\r\f\uE000-\uF8FF\uFFFD]/;
  // Pass 1: every element in document order, with its parent, its element
  // children (as indices: directText reads them without the DOM), where its
  // first visible text child is, and what the candidate rules read from its
  // attributes. One walk over child nodes reads elements and text alike.
  // The numbers and flags are typed arrays sized once by the document's
  // element count, not arrays grown a push at a time (on 16,000 elements that
  // was 300,000 pushes and the garbage their growth leaves).
  const cap = doc.getElementsByTagName('*').length;
  const ints = (fill) => new Int32Array(cap).fill(fill), flags = () => new Uint8Array(cap);
  const els = [], tags = [], roles = [], par = ints(-1), htmlEl = flags();
  const ownText = flags(), semantic = flags(), label = flags(), evidence = flags(), inert = flags();
  const collapsed = flags(), skipped = flags();
  // textAt: how many element children come before the first child text node
  // with visible text (-1: none). firstKid/nextKid: element children.
  const textAt = ints(-1), kids = ints(0), firstKid = ints(-1), nextKid = ints(-1), lastKid = ints(-1), end = ints(0);
  // seq: each element's place among the elements and text nodes in tree order
  // (what `laidOutInside` counts of a subtree).
  const seq = ints(0);
  let nodesSeen = 0;
  // Labels without `for`: whether they label something is read once their
  // subtree is known (a query per label cost more).
  const labelsInside = [];
  const HTML = 'http://www.w3.org/1999/xhtml';
  // The elements with an attribute pass 1 reads (one query instead of a read per element).
  const marked = new Set(doc.querySelectorAll('[role],[contenteditable],[inert],[hidden],[popover],[align]'));
  const editableAttr = (el) => {
    const ce = el.getAttribute('contenteditable');
    return ce !== null && ['', 'true', 'plaintext-only'].includes(ce.trim().toLowerCase());
  };
  // A hidden input is not labelable.
  const labelable = (t) => !!t && LABELABLE.has(t.nodeName.toLowerCase()) &&
    !(t.nodeName === 'INPUT' && (t.getAttribute('type') || '').trim().toLowerCase() === 'hidden');
  for (let el = doc.documentElement, p = -1; ; ) {
    if (el.shadowRoot) return null;
    const i = els.length;
    // More elements than the count: the tree is not what was counted.
    if (i >= cap) return null;
    const html = el.namespaceURI === HTML && el.prefix === null;
    const tag = html ? el.localName : el.nodeName.toLowerCase();
    if (FRAMES.has(tag)) return null;
    els.push(el); tags.push(tag);
    par[i] = p; htmlEl[i] = html ? 1 : 0; seq[i] = nodesSeen++; end[i] = i;
    if (p >= 0) {
      if (lastKid[p] < 0) firstKid[p] = i; else nextKid[lastKid[p]] = i;
      lastKid[p] = i;
    }
    const up = p >= 0;
    const attrs = marked.has(el);
    const hiddenInput = tag === 'input' && (el.getAttribute('type') || '').trim().toLowerCase() === 'hidden';
    let first = '';
    if (attrs) {
      const role = el.getAttribute('role');
      first = role === null ? '' : role.trim().split(/\s+/)[0].toLowerCase();
    }
    roles.push(first);
    let sem = false, lab = false;
    // An <a> without href is no link (facts/candidates.rs): only a role or evidence counts.
    if (NATIVE.has(tag) && !(tag === 'a' && !el.hasAttribute('href'))) {
      sem = !hiddenInput;
    } else if (first && INTERACTIVE.has(first)) {
      sem = true;
    } else if (tag === 'label' && !el.hasAttribute('for')) {
      labelsInside.push(i);
    } else {
      if (tag === 'label') sem = lab = labelable(doc.getElementById(el.getAttribute('for')));
      if (!sem && attrs) sem = editableAttr(el);
    }
    semantic[i] = sem ? 1 : 0; label[i] = lab ? 1 : 0;
    inert[i] = (attrs && el.hasAttribute('inert')) || (up && inert[p]) ? 1 : 0;
    // Closed <details>: Chromium lays out its content but does not render it.
    const pe = up ? els[p] : null;
    collapsed[i] = up && (collapsed[p] || (tags[p] === 'details' && !pe.hasAttribute('open') &&
      !(tag === 'summary' && pe.querySelector(':scope > summary') === el))) ? 1 : 0;
    skipped[i] = (up && skipped[p]) || SKIP.has(tag) ? 1 : 0;
    // What the UA sheet may not render, or gives a display other than its
    // tag's (a presentational `align` floats it): its computed style decides.
    if (UA_NONE.has(tag) || !html || hiddenInput || tag === 'dialog' ||
      (attrs && (el.hasAttribute('hidden') || el.hasAttribute('popover') || el.hasAttribute('align')))) S.display.add(el);

    // Its child nodes, then the next element in document order.
    let c = el.firstChild, at = i;
    for (;;) {
      for (let type; c !== null && (type = c.nodeType) !== 1; c = c.nextSibling) {
        if (type !== 3) continue;
        nodesSeen++;
        if (textAt[at] < 0 && VISIBLE_CHAR.test(c.data)) textAt[at] = kids[at];
      }
      if (c !== null) break;
      end[at] = els.length - 1;
      if (at === 0) break;
      c = els[at].nextSibling; at = par[at];
    }
    if (c === null) break;
    kids[at]++;
    el = c; p = at;
  }
  const n = els.length;
  if (n !== cap) return null;
  for (let i = 0; i < n; i++) ownText[i] = textAt[i] >= 0 || S.content.has(els[i]) ? 1 : 0;
  // Whether a descendant matches the labelable selector (`querySelector`'s
  // answer, in document order): the tag decides which to ask.
  const LABELABLE_SEL = T.labelable.join(',');
  const labelableAt = (k) => {
    const name = htmlEl[k] ? tags[k] : els[k].localName;
    // A local name of the list matches its type selector in any namespace and document.
    return LABELABLE.has(name) || (LABELABLE.has(name.toLowerCase()) && els[k].matches(LABELABLE_SEL));
  };
  for (const i of labelsInside) {
    let lab = false;
    for (let k = i + 1; k <= end[i] && !lab; k++) lab = labelableAt(k) && labelable(els[k]);
    label[i] = lab;
    semantic[i] = lab || (marked.has(els[i]) && editableAttr(els[i]));
  }

  // Computed style and layout, read only where a rule needs them.
  const styles = new Map();
  const cs = (i) => { let s = styles.get(i); if (!s) { s = getComputedStyle(els[i]); styles.set(i, s); } return s; };
  // Each read of a computed style's property computes it anew: read once.
  const displayMemo = new Array(n);
  const displayOf = (i) => {
    let d = displayMemo[i];
    if (d === undefined) displayMemo[i] = d = S.display.has(els[i]) ? cs(i).display : 'other';
    return d;
  };
  // Its computed display where it matters whether that is inline: read where
  // a rule could set it, else the UA sheet's, made a block in a flex or grid
  // container (whose children Chromium blockifies past display: contents).
  const fullMemo = new Array(n);
  const fullDisplay = (i) => {
    let d = fullMemo[i];
    if (d !== undefined) return d;
    if (layoutRuled(els[i])) d = cs(i).display;
    else if (UA_NOT_INLINE.has(tags[i])) d = 'block';
    else {
      let lp = par[i];
      while (lp >= 0 && displayOf(lp) === 'contents') lp = par[lp];
      d = lp >= 0 && /flex|grid|box/.test(fullDisplay(lp)) ? 'block' : 'inline';
    }
    fullMemo[i] = d;
    return d;
  };
  const renderedMemo = new Int8Array(n);
  // Neither it nor an ancestor is display: none (nor inside a closed <details>).
  const rendered = (i) => {
    if (i < 0) return true;
    if (renderedMemo[i]) return renderedMemo[i] > 0;
    const yes = !collapsed[i] && displayOf(i) !== 'none' && rendered(par[i]);
    renderedMemo[i] = yes ? 1 : -1;
    return yes;
  };
  // Chromium gives it a layout object (display: contents has none).
  const hasLayout = (i) => i < 0 || (rendered(i) && displayOf(i) !== 'contents');
  // Its computed visibility is visible (inherited unless a rule sets it).
  const visMemo = new Int8Array(n);
  const visible = (i) => {
    if (i < 0) return true;
    if (visMemo[i]) return visMemo[i] > 0;
    const v = S.visibility.has(els[i]) ? cs(i).visibility : null;
    const yes = v === null ? visible(par[i]) : v !== 'hidden' && v !== 'collapse';
    visMemo[i] = yes ? 1 : -1;
    return yes;
  };

  // Evidence of a click handler on a plain element (candidates.rs `has_evidence`).
  // The elements that could have it, found by queries that match a superset
  // (any namespace, any case); each found is then read as before.
  const byAttr = new Set(doc.querySelectorAll('[*|onclick],[*|onmousedown],[*|onmouseup],[*|tabindex],[*|draggable]'));
  const grips = new Set(doc.getElementsByClassName('ui-sortable-handle'));
  for (const el of doc.getElementsByClassName('ui-resizable-handle')) grips.add(el);
  const sortable = new Set(doc.getElementsByClassName('ui-sortable'));
  const underSem = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const p = par[i];
    underSem[i] = p >= 0 && (underSem[p] || semantic[p]) ? 1 : 0;
    if (semantic[i] || underSem[i]) continue;
    const tag = tags[i], el = els[i];
    if (tag === 'html' || tag === 'body') continue;
    // Chromium's snapshot reports every enabled <input> as clickable (a hidden one too).
    let yes = listeners.has(el) || (tag === 'input' && !el.matches(':disabled'));
    if (!yes && byAttr.has(el)) {
      yes = el.hasAttribute('onclick') || el.hasAttribute('onmousedown') || el.hasAttribute('onmouseup');
      if (!yes) {
        const t = el.getAttribute('tabindex');
        yes = t !== null && /^[+-]?\d+$/.test(t.trim()) && Number(t.trim()) >= 0;
      }
      if (!yes) {
        const d = el.getAttribute('draggable');
        yes = d !== null && d.trim().toLowerCase() === 'true';
      }
    }
    // jQuery UI's sortable rows and resizable grips (facts/candidates.rs GRIP_CLASSES).
    if (!yes && grips.has(el)) yes = el.classList.contains('ui-sortable-handle') || el.classList.contains('ui-resizable-handle');
    // A child of a jQuery UI sortable() list (facts/candidates.rs SORTABLE_LIST).
    if (!yes && p >= 0 && sortable.has(els[p]) && el.parentElement && el.parentElement.classList.contains('ui-sortable')) yes = true;
    if (!yes && S.cursor.has(el) && hasLayout(i) && cs(i).cursor === 'pointer') {
      let lp = par[i];
      while (lp >= 0 && !hasLayout(lp)) lp = par[lp];
      yes = !(lp >= 0 && cs(lp).cursor === 'pointer');
      // A display: contents parent passes its cursor on to children whose layout parent lacks it.
    }
    if (!yes && S.cursor.has(el) && rendered(i) && cs(i).display === 'contents' && cs(i).cursor === 'pointer') return null;
    evidence[i] = yes;
  }
  // A container that holds targets is not one; kept elements must see the same.
  const desc = new Uint8Array(n), keptDesc = new Uint8Array(n), textBelow = new Uint8Array(n);
  for (let i = n - 1; i >= 0; i--) {
    if (ownText[i]) textBelow[i] = 1;
    const p = par[i];
    if (p < 0) continue;
    if (textBelow[i]) textBelow[p] = 1;
    const target = semantic[i] || evidence[i];
    if (target || desc[i]) desc[p] = 1;
    if (kept.has(els[i]) && (target || keptDesc[i])) keptDesc[p] = 1;
  }
  const reason = (i) => !inert[i] && (semantic[i] || (evidence[i] && !desc[i]));
  for (let i = 0; i < n; i++) {
    if (evidence[i] && !semantic[i] && kept.has(els[i]) && desc[i] !== keptDesc[i]) return null;
  }

  // build.rs `own_hidden`.
  // Each element's index, built when first asked.
  let indexMap = null;
  const index = { get: (el) => {
    if (indexMap === null) { indexMap = new Map(); for (let i = 0; i < n; i++) indexMap.set(els[i], i); }
    return indexMap.get(el);
  } };
  const hasRenderedDescendant = (i) => {
    const walker = doc.createTreeWalker(els[i], NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
    for (let c = walker.nextNode(), budget = 5000; c; c = walker.nextNode()) {
      if (--budget === 0) return true;
      if (c.nodeType === 3) { const k = index.get(c.parentElement); if (k !== undefined && rendered(k)) return true; }
      else { const k = index.get(c); if (k !== undefined && hasLayout(k)) return true; }
    }
    return false;
  };
  // The elements that could have either attribute (any namespace, any case), each then read.
  const hideAttr = new Set(doc.querySelectorAll('[*|hidden],[*|aria-hidden]'));
  const ownHidden = (i) => {
    const el = els[i];
    if (hideAttr.has(el)) {
      const ah = el.getAttribute('aria-hidden');
      if (el.hasAttribute('hidden') || (ah !== null && ah.trim().toLowerCase() === 'true')) return true;
    }
    if (!hasLayout(i)) return hasLayout(par[i]) && !hasRenderedDescendant(i);
    if (!visible(i)) return true;
    return S.opacity.has(el) && !(parseFloat(cs(i).opacity) >= 0.01);
  };

  // name.rs `direct_text` is not empty: text of its own or of inline
  // descendants that are no targets, or generated text.
  let bail = false;
  const generated = (i) => {
    if (!S.content.has(els[i]) || !hasLayout(i)) return false;
    for (const which of ['::before', '::after']) {
      const ps = getComputedStyle(els[i], which);
      const content = ps.content;
      if (!content || content === 'none' || content === 'normal' || ps.display === 'none') continue;
      const re = /\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|attr\(\s*([^)\s]+)\s*\))/y;
      let m, at = 0, text = '';
      while ((m = re.exec(content))) {
        at = re.lastIndex;
        if (m[3] !== undefined) text += els[i].getAttribute(m[3]) || '';
        else text += (m[1] !== undefined ? m[1] : m[2]).replace(/\\(.)/g, '$1');
      }
      if (content.slice(at).trim() !== '') { bail = true; return false; }
      if (VISIBLE_CHAR.test(text)) return true;
    }
    return false;
  };
  // One loop, not one nested in another: the engine compiles a long inner
  // loop on the stack (OSR) and throws that code away on every exit from it.
  const directText = (i) => {
    if (generated(i)) return true;
    const todo = [i];
    // The element whose child nodes are read, its next element child, how
    // many came before, and after how many its first visible text comes.
    for (let e = -1, k = -1, seen = 0, at = -1; ; ) {
      if (e < 0) {
        if (todo.length === 0) return false;
        e = todo.pop(); k = firstKid[e]; seen = 0; at = textAt[e];
      }
      if (seen === at && rendered(e) && visible(e)) return true;
      if (k < 0) { e = -1; continue; }
      const c = k;
      k = nextKid[k]; seen++;
      // A target's display is not read: it is no text of this one either way.
      if (reason(c) || label[c] || SKIP.has(tags[c])) continue;
      const d = hasLayout(c) ? fullDisplay(c) : 'inline';
      if (d === 'inline' || d === 'contents') {
        if (generated(c)) return true;
        if (textBelow[c]) todo.push(c);
      }
    }
  };
  const isBlock = (i) => hasLayout(i) && !['inline', 'contents', ''].includes(fullDisplay(i));

  // contenteditable (candidates.rs `Reason::Editable`).
  const editable = (i) => {
    const ce = els[i].getAttribute('contenteditable');
    return ce !== null && ['', 'true', 'plaintext-only'].includes(ce.trim().toLowerCase());
  };
  // Inside sectioning content (aria/role.rs `in_sectioning`).
  const inSectioning = (i) => {
    for (let a = par[i]; a >= 0; a = par[a]) {
      if (['article', 'aside', 'main', 'nav', 'section'].includes(tags[a])) return true;
      if (['article', 'complementary', 'main', 'navigation', 'region'].includes(roles[a])) return true;
    }
    return false;
  };
  // A label tied to a control that is rendered is that control's name, no node of its own.
  const tiedToRendered = (i) => {
    if (tags[i] !== 'label' || !label[i]) return false;
    const f = els[i].getAttribute('for');
    let k;
    if (f !== null) { const t = doc.getElementById(f); k = t ? index.get(t) : undefined; }
    else for (let d = i + 1; d <= end[i] && k === undefined; d++) if (labelableAt(d)) k = d;
    return k !== undefined && hasLayout(k);
  };
  // The implicit role of a content element (aria/role.rs `implicit_content_role`).
  const implicit = (i) => {
    const tag = tags[i], el = els[i];
    switch (tag) {
      case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': return 'heading';
      case 'p': return 'paragraph';
      case 'li': {
        // A list item only in a list (aria/role.rs `in_list`).
        const p = par[i];
        if (p < 0 || !['ul', 'ol', 'menu'].includes(tags[p])) return null;
        const r = roles[p];
        return !r || r === 'list' ? 'listitem' : null;
      }
      case 'ul': case 'ol': case 'menu': return 'list';
      case 'img': { const a = el.getAttribute('alt'); return a !== null && a.trim() !== '' ? 'image' : null; }
      case 'td': return 'cell';
      case 'th': return 'columnheader';
      case 'table': return 'table';
      case 'caption': return 'caption';
      case 'dialog': return 'dialog';
      case 'main': return 'main';
      case 'nav': return 'navigation';
      case 'header': return inSectioning(i) ? 'sectionheader' : 'banner';
      case 'footer': return inSectioning(i) ? 'sectionfooter' : 'contentinfo';
      case 'aside': return 'complementary';
      case 'form': return 'form';
      case 'section': {
        const l = el.getAttribute('aria-label');
        return (l !== null && l.trim() !== '') || el.hasAttribute('aria-labelledby') ? 'region' : null;
      }
      case 'figure': return 'figure';
      case 'blockquote': return 'blockquote';
      case 'article': return 'article';
      case 'code': return 'code';
      case 'progress': return 'progressbar';
      case 'meter': return 'meter';
      case 'output': return 'status';
      case 'search': return 'search';
      case 'label': return 'label';
      case 'legend': return 'legend';
      case 'dt': return 'term';
      case 'dd': return 'definition';
      case 'details': case 'fieldset': return 'group';
      default: return null;
    }
  };
  const contentRole = (i) => {
    const first = roles[i];
    if (first && first !== 'presentation' && first !== 'none' && first !== 'generic' && CONTENT.has(first)) return first;
    // A presentational role in effect takes the implicit one away (semantic/build.rs).
    if ((first === 'presentation' || first === 'none') && !semantic[i] && !els[i].hasAttribute('tabindex')) return null;
    if (tiedToRendered(i)) return null;
    return implicit(i);
  };
  // The layout box, or that of what is laid out inside (interactive `element_rect`).
  const range = doc.createRange();
  const ownBox = (i) => {
    if (!hasLayout(i)) return false;
    const r = els[i].getBoundingClientRect();
    return r.width >= 0.5 && r.height >= 0.5;
  };
  // The most nodes of a subtree `laidOutInside` reads.
  const INSIDE = 1999;
  const laidOutInside = (i) => {
    const walker = doc.createTreeWalker(els[i], NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
    for (let c = walker.nextNode(), budget = INSIDE + 1; c && --budget > 0; c = walker.nextNode()) {
      let r;
      if (c.nodeType === 3) {
        { const k = index.get(c.parentElement); if (k === undefined || !rendered(k)) continue; }
        range.selectNodeContents(c); r = range.getBoundingClientRect();
      } else {
        const k = index.get(c);
        if (k === undefined || !hasLayout(k)) continue;
        r = c.getBoundingClientRect();
      }
      if (r.width >= 0.5 && r.height >= 0.5) return true;
    }
    return false;
  };

  // Pass 2: build.rs `visit` in document order, with what each element passes
  // on: inside a hidden subtree (2: not known yet, read when needed), inside
  // an action, under a text-role node.
  const outHidden = new Uint8Array(n), outAction = new Uint8Array(n), outText = new Uint8Array(n);
  const hiddenIn = (i) => (par[i] < 0 ? false : hiddenOut(par[i]));
  const hiddenOut = (i) => {
    if (outHidden[i] === 2) outHidden[i] = hiddenIn(i) || ownHidden(i) ? 1 : 0;
    return outHidden[i] === 1;
  };
  const counts = { css_hidden: 0, no_layout: 0, offscreen: 0 };
  // The far nodes not hidden: offscreen when they have a box (their own, or
  // one laid out inside), else no_layout.
  const farShown = [];
  for (let i = 0; i < n; i++) {
    const p = par[i];
    const inAction = p >= 0 && outAction[p] === 1, inText = p >= 0 && outText[p] === 1;
    if (skipped[i]) continue;
    // A widget inside another is a node of its own (semantic/build.rs `nested_widget`).
    const isAction = reason(i) && !label[i] && (!inAction || (semantic[i] && !editable(i)));
    const role = isAction || inAction ? null : contentRole(i);
    const isContent = role !== null;
    const isText = !isAction && !isContent && !inAction && !inText && textBelow[i] === 1 && isBlock(i) && directText(i);
    if (bail) return null;
    // Inert content is no node, node by node (its hidden state is not inherited).
    if (!(isAction || isContent || isText) || inert[i]) {
      outHidden[i] = 2; outAction[i] = inAction ? 1 : 0; outText[i] = inText ? 1 : 0;
      continue;
    }
    const hidden = hiddenIn(i) || ownHidden(i);
    const far = !kept.has(els[i]);
    if (hidden) {
      if (far) counts.css_hidden++;
      outHidden[i] = 1; outAction[i] = inAction || isAction ? 1 : 0; outText[i] = inText ? 1 : 0;
      continue;
    }
    if (far) farShown.push(i);
    outHidden[i] = 0; outAction[i] = inAction || isAction ? 1 : 0;
    outText[i] = isContent && TEXT_ROLE.has(role) ? 1 : 0;
  }
  // Last first: a node whose own box was read (the nearest after it in tree
  // order) and lies within what `laidOutInside` would read of an ancestor's
  // subtree gives that ancestor a box without reading it.
  for (let q = farShown.length - 1, big = -1; q >= 0; q--) {
    const i = farShown[q];
    let yes = big >= 0 && big <= end[i] && seq[big] - seq[i] <= INSIDE;
    if (!yes) {
      if (ownBox(i)) { yes = true; big = i; } else yes = laidOutInside(i);
    }
    if (yes) counts.offscreen++; else counts.no_layout++;
  }
  return { counts, content: sels.content };
})
