/* explorer.js: the browser half of attn's attention explorer.
 *
 * viz/explorer.cpp emits one self-contained HTML fragment per notebook output: the
 * view's div (class attn-explorer, id ID) whose first child is a div.attn-fallback
 * holding a static picture (an <img> of an SVG data: URI, which Jupyter's sanitiser keeps), then a style element with explorer.css, then a script
 * element with this file followed by attnExplorer(document.getElementById("ID"), DOC).
 * (This file must never contain a closing script tag, nor a "<!" + "--" sequence.)
 * Nothing is fetched from a network: the fragment is the whole program and its data.
 *
 * Every output carries its own copy of this file, so it may run many times on one
 * page. It defines a single global, attnExplorer, and only when no copy of the same
 * or a newer version did already; everything else lives inside this closure. A call
 * looks up and changes only elements under its own root, so views are independent.
 *
 * Token text reaches the DOM only through textContent (never as markup), so tokens
 * such as "<eos>", "a&b", quotes or non-ASCII need no escaping here. (The C++ side
 * must still escape "<" in the embedded JSON: see make_page.py.)
 *
 * ES2017, no libraries.
 */
(function (global) {
  'use strict';
  const VERSION = 2;
  if (typeof global.attnExplorer === 'function' && (global.attnExplorer.version || 0) >= VERSION) return;

  const SVGNS = 'http://www.w3.org/2000/svg';
  // Head-view lines lighter than this are not drawn: they would be invisible anyway, and
  // skipping them keeps a 12-head, 60-token layer below the 43,200 lines of a full drawing.
  const MIN_LINE = 0.003;
  // A drawn line is never fainter than this, so a diffuse head (36 keys at about 1/36 each)
  // still shows: opacity = FLOOR + (1 - FLOOR) * weight.
  const FLOOR = 0.12;
  const ROW_H = 20;   // px per token in the head view
  const THUMB = 64;   // px of the longer side of a model-view thumbnail (more for over 64 tokens: 1 px each)
  const TOP = 6;      // weights listed per head in the hover readout
  const RO_LINE = 19; // px per line of that readout (explorer.css uses the same)
  // Mid-tone colours that stay visible on white and on Jupyter's dark theme.
  const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b',
    '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#6b6ecf', '#e7969c'];

  const headColor = (h, n) => n <= PALETTE.length ? PALETTE[h] : `hsl(${Math.round(h * 360 / n)},65%,50%)`;
  const isNum = x => typeof x === 'number' && isFinite(x);
  const fmt = x => isNum(x) ? x.toFixed(3) : '–';
  const clamp01 = x => isNum(x) ? Math.max(0, Math.min(1, x)) : 0;
  const lineOpacity = w => (FLOOR + (1 - FLOOR) * clamp01(w)).toFixed(3);

  // A token as the readouts name it: with its position when the same text occurs more than
  // once in its list ("6 @3"), so repeated tokens can be told apart.
  function named(tokens, i) {
    const t = tokens[i];
    let n = 0;
    for (const u of tokens) if (u === t && ++n > 1) break;
    return n > 1 ? `${show(t)} @${i}` : show(t);
  }

  // Weights arrive either as nested arrays or packed (viz/explorer.cpp): a string of 3 base64
  // digits per weight, 18 bits = 4 bits k, 14 bits m: m * 10^-(3 + k), m in [1000, 9999]
  // (4 significant digits); 0 is 0 and the largest code null.
  const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  function unpack(a) {
    if (typeof a.weights !== 'string') return;
    const shape = a.shape || [], [L, H, R, C] = shape, text = a.weights;
    if (shape.length !== 4 || text.length !== 3 * L * H * R * C)
      throw new Error(`attention "${a.name}": packed weights do not fit the shape [${shape}]`);
    const digit = new Int8Array(128).fill(-1);
    for (let i = 0; i < 64; i++) digit[B64.charCodeAt(i)] = i;
    let p = 0;
    const next = () => {
      const n = (digit[text.charCodeAt(p)] << 12) | (digit[text.charCodeAt(p + 1)] << 6) | digit[text.charCodeAt(p + 2)];
      p += 3;
      if (n === 262143) return null;
      const k = n >> 14, m = n & 16383;
      return m ? m / Math.pow(10, 3 + k) : 0;
    };
    const out = [];
    for (let l = 0; l < L; l++) {
      const layer = [];
      for (let h = 0; h < H; h++) {
        const m = [];
        for (let i = 0; i < R; i++) { const row = new Array(C); for (let j = 0; j < C; j++) row[j] = next(); m.push(row); }
        layer.push(m);
      }
      out.push(layer);
    }
    a.weights = out;
  }

  // Element builders: attributes one by one, text only as textContent.
  function make(ns, tag, attrs, parent, text) {
    const e = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
    for (const k in attrs || {}) if (attrs[k] != null) e.setAttribute(k, attrs[k]);
    if (text != null) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  const el = (tag, attrs, parent, text) => make(null, tag, attrs, parent, text);
  const sv = (tag, attrs, parent, text) => make(SVGNS, tag, attrs, parent, text);

  // What a token shows: blanks made visible, long tokens shortened (full text in a tooltip).
  function show(t) {
    t = String(t);
    if (t.trim() === '') return '␣'.repeat(Math.max(1, Math.min(t.length, 3)));
    const cps = Array.from(t);  // code points, so a non-BMP character is never cut in half
    return cps.length > 20 ? cps.slice(0, 19).join('') + '…' : t;
  }

  // A canvas 2d context measures text without the element being laid out (a notebook
  // may run the script while its output is still collapsed) and converts CSS colours.
  let ctx2d = null;
  const context = () => ctx2d || (ctx2d = document.createElement('canvas').getContext('2d'));
  function textWidth(tokens, font) {
    const c = context();
    c.font = font;
    return Math.ceil(tokens.reduce((m, t) => Math.max(m, c.measureText(show(t)).width), 0) * 1.08);
  }
  function rgb(color) {
    const c = context();
    c.fillStyle = '#000';
    c.fillStyle = color;  // reads back as #rrggbb
    const s = String(c.fillStyle);
    return [1, 3, 5].map(i => parseInt(s.slice(i, i + 2), 16) || 0);
  }

  function select(label, names, parent, onchange) {
    const lab = el('label', {class: 'attn-ctl'}, parent, label + ' ');
    const s = el('select', null, lab);
    s.addEventListener('change', () => onchange(+s.value));
    setOptions(s, names);
    return s;
  }
  function setOptions(s, names) {
    s.textContent = '';
    names.forEach((n, i) => el('option', {value: i}, s, n));
    s.disabled = names.length < 2;  // shown but inert: "1 layer" is information too
  }

  // Shapes are checked up front so a bad document fails with a message, not half a drawing.
  function checkAttention(a, n) {
    const where = `attentions[${n}]` + (a && a.name ? ` ("${a.name}")` : '');
    if (!a || !Array.isArray(a.rows) || !Array.isArray(a.cols) || !a.rows.length || !a.cols.length ||
        !Array.isArray(a.weights) || !a.weights.length)
      throw new Error(where + ' needs non-empty rows, cols and weights [layers][heads][rows][cols]');
    const H = Array.isArray(a.weights[0]) ? a.weights[0].length : 0;
    a.weights.forEach((layer, l) => {
      if (!Array.isArray(layer) || !H || layer.length !== H)
        throw new Error(`${where}: layer ${l} must have ${H || 'some'} heads`);
      layer.forEach((m, h) => {
        if (!Array.isArray(m) || m.length !== a.rows.length ||
            m.some(r => !Array.isArray(r) || r.length !== a.cols.length))
          throw new Error(`${where}: layer ${l} head ${h} is not ${a.rows.length}×${a.cols.length}`);
      });
    });
  }

  // The public entry point. root: the view's <div class="attn-explorer">; doc: the JSON
  // document (an object, or its text). Calling it again on the same root redraws.
  function attnExplorer(root, doc) {
    if (!root) return;  // the output was cleared before its script ran
    const fallback = Array.from(root.children).find(c => c.classList.contains('attn-fallback'));
    Array.from(root.children).forEach(c => { if (c !== fallback) root.removeChild(c); });
    root.classList.add('attn-explorer');
    let ui;
    try {
      if (typeof doc === 'string') doc = JSON.parse(doc);
      ui = build(doc || {}, root);
    } catch (err) {
      // The static picture stays, with a line saying why the interactive one is missing.
      el('div', {class: 'attn-error'}, root, 'attention explorer: ' + ((err && err.message) || err));
      return;
    }
    root.appendChild(ui);
    // The static picture is removed: the interactive views replace it. The saved notebook
    // keeps it (scripts do not change it) for renderers without scripts.
    if (fallback) fallback.remove();
  }
  attnExplorer.version = VERSION;

  function build(doc, root) {
    const atts = Array.isArray(doc.attentions) ? doc.attentions : [];
    atts.forEach(unpack);
    atts.forEach(checkAttention);
    const steps = Array.isArray(doc.steps) ? doc.steps : [];
    const font = '12px ' + (getComputedStyle(root).fontFamily || 'sans-serif');
    const ui = el('div', {class: 'attn-ui'});
    if (doc.title) el('div', {class: 'attn-title'}, ui, String(doc.title));
    const views = [];
    if (atts.length) {
      views.push(['Head view', 'head', headView(atts, font)]);
      views.push(['Model view', 'model', modelView(atts, font)]);
    }
    if (steps.length) views.push(['Decoding steps', 'steps',
      stepsView(steps, Array.isArray(doc.source) ? doc.source : [], doc.steps_label ? String(doc.steps_label) : '')]);
    if (!views.length) throw new Error('the document has neither attentions nor steps');
    // Tabs keep a notebook output short; hidden panels are already drawn, so switching is instant.
    // ARIA tabs: the selected tab alone is in the Tab order; arrow keys, Home and End move between tabs.
    const bar = el('div', {class: 'attn-tabs', role: 'tablist'}, ui);
    const pick = (n, focus) => views.forEach((v, i) => {
      v[2].hidden = i !== n;
      const t = bar.children[i];
      t.setAttribute('aria-selected', String(i === n));
      t.setAttribute('tabindex', i === n ? '0' : '-1');
      if (focus && i === n) t.focus();
    });
    views.forEach(([label, kind, panel], i) => {
      const tid = root.id + '-tab-' + kind, pid = root.id + '-panel-' + kind;
      const t = el('button', {type: 'button', class: 'attn-tab', role: 'tab', id: tid, 'aria-controls': pid,
        'data-view': kind}, bar, label);
      t.addEventListener('click', () => pick(i));
      t.addEventListener('keydown', e => {
        const n = views.length, to = {ArrowRight: (i + 1) % n, ArrowLeft: (i + n - 1) % n, Home: 0, End: n - 1}[e.key];
        if (to == null) return;
        e.preventDefault();
        pick(to, true);
      });
      panel.classList.add('attn-panel');
      panel.setAttribute('data-view', kind);
      panel.setAttribute('role', 'tabpanel');
      panel.setAttribute('id', pid);
      panel.setAttribute('aria-labelledby', tid);
      ui.appendChild(panel);
    });
    bar.hidden = views.length < 2;
    pick(0);
    return ui;
  }

  // Head view: one layer, queries left, keys right, a line per (head, query, key) whose
  // opacity is the weight. Hovering a token keeps only its lines: the svg gets attn-dim
  // (CSS hides every line) and just that token's lines get attn-on, so a hover touches
  // heads × tokens elements, not all of them.
  function headView(atts, font) {
    const panel = el('div');
    const controls = el('div', {class: 'attn-controls'}, panel);
    const body = el('div', {class: 'attn-hv-body'}, panel);
    const holder = el('div', {class: 'attn-hv-svg'}, body);
    const readout = el('div', {class: 'attn-readout'}, body);
    let a = 0, layer = 0, on = [], svg = null, byQ = [], byK = [], focused = null, pinned = false;

    select('attention', atts.map(x => String(x.name || 'attention')), controls, v => { a = v; layer = 0; reset(); });
    const layerSel = select('layer', [], controls, v => { layer = v; draw(); });
    const headsBox = el('span', {class: 'attn-heads'}, controls);
    // What the rows of decoder attention are: the decoding view names a step by the word it
    // writes, this view by the word it reads, one place earlier.
    const note = el('div', {class: 'attn-hint attn-rows-note'});
    panel.insertBefore(note, body);
    el('div', {class: 'attn-hint'}, panel,
      'Hover a token to keep its lines; click it to pin them (click again to unpin). ' +
      'Double-click a head to see it alone (again: every head). Line opacity: ' + FLOOR + ' + weight.');

    function reset() {
      const att = atts[a], H = att.weights[0].length;
      setOptions(layerSel, att.weights.map((_, l) => String(l)));
      note.textContent = att.rows_read
        ? 'Rows (left) are the tokens the decoder reads, <bos> first: the row of a word is the step that read it ' +
          'and wrote the next word. The decoding view names a step by the word it writes, one place later.'
        : '';
      note.hidden = !att.rows_read;
      headsBox.textContent = '';
      el('span', null, headsBox, 'heads');
      on = new Array(H).fill(true);
      const boxes = [];
      for (let h = 0; h < H; h++) {
        const lab = el('label', {class: 'attn-head-toggle', 'data-h': h,
          title: `show head ${h} (double-click: head ${h} alone)`}, headsBox);
        const box = el('input', {type: 'checkbox', 'data-h': h, style: 'accent-color:' + headColor(h, H)}, lab);
        box.checked = true;
        boxes.push(box);
        el('span', {class: 'attn-swatch', style: 'background:' + headColor(h, H)}, lab);
        el('span', null, lab, String(h));
        box.addEventListener('change', () => { on[h] = box.checked; applyHeads(); });
        // bertviz's gesture: a double-click shows this head alone, or every head when it already is.
        lab.addEventListener('dblclick', e => {
          e.preventDefault();
          const alone = on.every((v, k) => v === (k === h));
          on = on.map((_, k) => alone || k === h);
          boxes.forEach((b, k) => { b.checked = on[k]; });
          applyHeads();
        });
        // Pointing at a head brings its lines on top of the others, which fade: overlapping
        // heads' lines otherwise blend into colours of no head.
        lab.addEventListener('mouseenter', () => raise(h));
        lab.addEventListener('mouseleave', () => raise(null));
      }
      draw();
    }
    function raise(h) {
      if (!svg) return;
      svg.classList.toggle('attn-head-focus', h != null);
      svg.querySelectorAll('.attn-head').forEach(g => g.classList.toggle('attn-front', +g.getAttribute('data-h') === h));
      if (h != null) {
        const g = svg.querySelector(`.attn-head[data-h="${h}"]`);
        if (g) g.parentNode.appendChild(g);  // drawn last: on top
      }
    }

    function draw() {
      const att = atts[a], W = att.weights[layer], H = W.length, R = att.rows.length, C = att.cols.length;
      // Each column at least as wide as its header, so "query" and "key" are never clipped.
      const lw = textWidth(att.rows.concat(['query']), font) + 8, rw = textWidth(att.cols.concat(['key']), font) + 8;
      const span = Math.max(150, Math.min(280, 6 * Math.max(R, C)));  // room between the columns
      const top = 24, x1 = lw + 6, x2 = x1 + span, width = x2 + 6 + rw;
      const height = top + Math.max(R, C) * ROW_H + 4;
      const y = i => top + i * ROW_H + ROW_H / 2;
      focused = null;
      pinned = false;
      holder.textContent = '';
      svg = sv('svg', {class: 'attn-hv', width, height, viewBox: `0 0 ${width} ${height}`}, holder);
      sv('text', {x: lw, y: 14, 'text-anchor': 'end', class: 'attn-axis'}, svg, 'query');
      sv('text', {x: x2 + 6, y: 14, class: 'attn-axis'}, svg, 'key');
      const lines = sv('g', {class: 'attn-lines'}, svg);
      const frag = document.createDocumentFragment();
      byQ = att.rows.map(() => []);
      byK = att.cols.map(() => []);
      // Each head's lines a little apart from the others' (side by side within a row, 14 px at
      // most in all), so lines of two heads between the same tokens do not blend into a colour
      // of neither head.
      const gap = H > 1 ? Math.min(2.5, 14 / (H - 1)) : 0;
      for (let h = 0; h < H; h++) {
        const dy = (h - (H - 1) / 2) * gap;
        const g = sv('g', {class: 'attn-head', 'data-h': h, stroke: headColor(h, H),
          'stroke-width': H > 1 ? Math.max(1, Math.min(2, gap)).toFixed(2) : 2}, frag);
        for (let i = 0; i < R; i++) {
          for (let j = 0; j < C; j++) {
            const w = W[h][i][j];
            if (!(w >= MIN_LINE)) continue;
            const ln = sv('line', {x1, y1: y(i) + dy, x2, y2: y(j) + dy, 'stroke-opacity': lineOpacity(w), 'data-w': w,
              'data-q': i, 'data-k': j}, g);
            byQ[i].push(ln);
            byK[j].push(ln);
          }
        }
      }
      lines.appendChild(frag);
      column(att.rows, 'q', 0, lw + 4, 'end', lw);
      column(att.cols, 'k', x2 + 2, rw + 4, 'start', x2 + 6);
      applyHeads();

      function column(tokens, side, x0, w, anchor, tx) {
        const g = sv('g', {class: 'attn-toks'}, svg);
        tokens.forEach((t, i) => {
          const tg = sv('g', {class: 'attn-tok', 'data-side': side, 'data-i': i, tabindex: 0}, g);
          sv('title', null, tg, String(t));
          sv('rect', {x: x0, y: top + i * ROW_H + 1, width: w, height: ROW_H - 2, rx: 3}, tg);
          sv('text', {x: tx, y: y(i), 'text-anchor': anchor, 'dominant-baseline': 'central'}, tg, show(t));
          const enter = () => { if (!pinned) focus(side, i, tg); };
          const leave = () => { if (!pinned) unfocus(); };
          // A click (or Enter, Space) pins the token's lines, so the mouse may leave it; a second click unpins.
          const pin = () => {
            const same = focused && focused.tg === tg;
            if (pinned && same) { pinned = false; tg.classList.remove('attn-pin'); unfocus(); return; }
            if (focused) focused.tg.classList.remove('attn-pin');
            pinned = false;
            focus(side, i, tg);
            pinned = true;
            tg.classList.add('attn-pin');
            showReadout();
          };
          tg.setAttribute('role', 'button');
          tg.setAttribute('aria-label', `${side === 'q' ? 'query' : 'key'} ${named(tokens, i)}`);
          tg.addEventListener('mouseenter', enter);
          tg.addEventListener('focus', enter);
          tg.addEventListener('mouseleave', leave);
          tg.addEventListener('blur', leave);
          tg.addEventListener('click', pin);
          tg.addEventListener('keydown', e => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); pin(); } });
        });
      }
    }

    function applyHeads() {
      svg.querySelectorAll('.attn-head').forEach(g => g.classList.toggle('attn-off', !on[+g.getAttribute('data-h')]));
      // One line per visible head, reserved even while nothing is hovered: the output
      // must not change height under the mouse (what is below it would jump).
      readout.style.minHeight = `${(1 + on.filter(Boolean).length) * RO_LINE}px`;
      showReadout();
    }
    function focus(side, i, tg) {
      unfocus();
      focused = {side, i, tg, lines: side === 'q' ? byQ[i] : byK[i]};
      svg.classList.add('attn-dim');
      tg.classList.add('attn-hot');
      focused.lines.forEach(l => l.classList.add('attn-on'));
      showReadout();
    }
    function unfocus() {
      if (!focused) return;
      svg.classList.remove('attn-dim');
      focused.tg.classList.remove('attn-hot', 'attn-pin');
      focused.lines.forEach(l => l.classList.remove('attn-on'));
      focused = null;
      showReadout();
    }
    // The readout: for the hovered token, each visible head's largest weights as numbers.
    function showReadout() {
      readout.textContent = '';
      if (!focused) {
        el('div', {class: 'attn-hint'}, readout, 'Hover a token to read its weights.');
        return;
      }
      const att = atts[a], W = att.weights[layer], q = focused.side === 'q';
      const others = q ? att.cols : att.rows;
      el('div', {class: 'attn-ro-title'}, readout,
        `${q ? 'query' : 'key'} “${named(q ? att.rows : att.cols, focused.i)}” ${q ? 'attends to' : 'is attended by'}` +
        (pinned ? ' (pinned)' : ''));
      W.forEach((m, h) => {
        if (!on[h]) return;
        const ws = q ? m[focused.i] : m.map(r => r[focused.i]);
        const order = ws.map((_, j) => j).sort((x, z) => ws[z] - ws[x]).slice(0, TOP);
        const row = el('div', {class: 'attn-ro-head', 'data-h': h}, readout);
        el('span', {class: 'attn-swatch', style: 'background:' + headColor(h, W.length)}, row);
        el('span', {class: 'attn-ro-name'}, row, 'head ' + h);
        const items = el('span', {class: 'attn-ro-items'}, row);
        order.forEach(j => {
          const it = el('span', {class: 'attn-ro-item'}, items);
          el('span', {class: 'attn-ro-tok'}, it, named(others, j));
          el('span', {class: 'attn-ro-w'}, it, fmt(ws[j]));
        });
        // Outside the items, whose overflow is clipped: the count always shows.
        if (ws.length > TOP) el('span', {class: 'attn-ro-more'}, row, `+${ws.length - TOP} smaller`);
      });
    }
    reset();
    return panel;
  }

  // Each map is shaded relative to its own largest weight: with 60 tokens the weights are
  // mostly below 0.1, and opacity = weight would leave every map blank. The numbers
  // themselves are read on the large map.
  const mapMax = m => m.reduce((mx, row) => row.reduce((a, w) => (isNum(w) && w > a ? w : a), mx), 0) || 1;

  // Model view: layers × heads thumbnails. Thumbnails are canvases filled pixel by pixel
  // (one pixel per weight, scaled up by CSS), so 12 × 12 heads of 60 × 60 tokens cost one
  // putImageData each instead of half a million SVG rectangles.
  function modelView(atts, font) {
    const panel = el('div');
    const controls = el('div', {class: 'attn-controls'}, panel);
    const grid = el('div', {class: 'attn-grid'}, panel);
    const big = el('div', {class: 'attn-big'}, panel);
    let a = 0;
    select('attention', atts.map(x => String(x.name || 'attention')), controls, v => { a = v; drawGrid(); });
    // "Strongest", not "darkest": on a dark theme the strongest colour is the lightest.
    el('span', {class: 'attn-hint'}, controls,
      'rows: layers, columns: heads; each map from no colour (0) to its head\'s full colour (the map\'s largest ' +
      'weight, given above the enlarged map); click a map to enlarge it');

    function drawGrid() {
      big.hidden = true;
      big.textContent = '';
      grid.textContent = '';
      const att = atts[a], L = att.weights.length, H = att.weights[0].length;
      // At least one pixel per token: past 64 tokens a thumbnail grows rather than drop rows.
      const R = att.rows.length, C = att.cols.length, scale = Math.max(1, THUMB / Math.max(R, C));
      grid.style.gridTemplateColumns = `auto repeat(${H}, auto)`;
      el('div', null, grid);
      for (let h = 0; h < H; h++) el('div', {class: 'attn-grid-h'}, grid, 'head ' + h);
      for (let l = 0; l < L; l++) {
        el('div', {class: 'attn-grid-l'}, grid, 'layer ' + l);
        for (let h = 0; h < H; h++) {
          const b = el('button', {type: 'button', class: 'attn-thumb', 'data-l': l, 'data-h': h,
            title: `layer ${l}, head ${h}`}, grid);
          const cv = el('canvas', {width: C, height: R,
            style: `width:${Math.round(C * scale)}px;height:${Math.round(R * scale)}px`}, b);
          paint(cv, att.weights[l][h], headColor(h, H));
          b.addEventListener('click', () => open(l, h, b));
        }
      }
    }

    function paint(canvas, m, color) {
      const c = canvas.getContext('2d'), [r, g, b] = rgb(color), top = mapMax(m);
      const img = c.createImageData(canvas.width, canvas.height), d = img.data;
      m.forEach((row, i) => row.forEach((w, j) => {
        const p = 4 * (i * canvas.width + j);
        d[p] = r; d[p + 1] = g; d[p + 2] = b; d[p + 3] = Math.round(255 * clamp01(w / top));
      }));
      c.putImageData(img, 0, 0);
    }

    // The large map: token labels, and the hovered cell's weight as a number.
    function open(l, h, btn) {
      grid.querySelectorAll('.attn-sel').forEach(x => x.classList.remove('attn-sel'));
      btn.classList.add('attn-sel');
      const att = atts[a], m = att.weights[l][h], H = att.weights[0].length, R = att.rows.length, C = att.cols.length;
      const mx = mapMax(m);
      big.hidden = false;
      big.textContent = '';
      const head = el('div', {class: 'attn-big-head'}, big);
      el('span', {class: 'attn-big-name'}, head, `${att.name || 'attention'} · layer ${l} · head ${h}`);
      // The colour bar: no colour at 0, the head's colour at the map's largest weight.
      const scaleBar = el('span', {class: 'attn-scale'}, head);
      el('span', {class: 'attn-v'}, scaleBar, '0');
      el('span', {class: 'attn-scale-bar', style: `background:linear-gradient(to right, transparent, ${headColor(h, H)})`}, scaleBar);
      el('span', {class: 'attn-v attn-scale-max'}, scaleBar, fmt(mx));
      const ro = el('span', {class: 'attn-big-ro', 'aria-live': 'polite'}, head, 'hover a cell (or Tab to the map, then arrow keys)');
      el('button', {type: 'button', class: 'attn-close', title: 'close'}, head, '×')
        .addEventListener('click', () => { big.hidden = true; btn.classList.remove('attn-sel'); });
      // Cells no smaller than a line of text, so every label stays readable (60 tokens
      // make an 840 px map, scrolled if need be); column labels turn vertical when narrow.
      const cs = Math.max(14, Math.min(32, Math.floor(560 / Math.max(R, C)))), angle = cs < 20 ? -90 : -45;
      const lw = textWidth(att.rows, font) + 10, cw = textWidth(att.cols, font);
      const slant = angle === -90 ? 1 : 0.71;
      const top = Math.ceil(cw * slant) + 12, left = lw, right = angle === -90 ? 8 : Math.ceil(cw * 0.71) + 8;
      const width = left + C * cs + right, height = top + R * cs + 4;
      const svg = sv('svg', {class: 'attn-heat', width, height, viewBox: `0 0 ${width} ${height}`}, big);
      const rowLab = att.rows.map((t, i) => sv('text', {x: left - 5, y: top + i * cs + cs / 2,
        'text-anchor': 'end', 'dominant-baseline': 'central'}, svg, show(t)));
      // A blank turned on its side would read as "ɹ": rotated labels show it as a middle dot.
      const colLab = att.cols.map((t, j) => sv('text', {
        transform: `translate(${left + j * cs + cs / 2},${top - 5}) rotate(${angle})`,
        'dominant-baseline': angle === -90 ? 'central' : null}, svg,
        String(t).trim() === '' ? '·'.repeat(Math.max(1, Math.min(String(t).length, 3))) : show(t)));
      sv('rect', {class: 'attn-heat-bg', x: left, y: top, width: C * cs, height: R * cs}, svg);
      const cells = sv('g', {fill: headColor(h, H), class: 'attn-cells'}, svg);
      for (let i = 0; i < R; i++) {
        for (let j = 0; j < C; j++) {
          sv('rect', {x: left + j * cs, y: top + i * cs, width: cs, height: cs,
            'fill-opacity': clamp01(m[i][j] / mx), 'data-r': i, 'data-c': j}, cells);
        }
      }
      const mark = sv('rect', {class: 'attn-heat-mark', width: cs, height: cs, visibility: 'hidden'}, svg);
      // The hovered cell's weight beside the cell itself (the readout above may be off screen).
      const tip = sv('g', {class: 'attn-heat-tip', visibility: 'hidden'}, svg);
      const tipBox = sv('rect', {rx: 3, height: 18}, tip), tipText = sv('text', {'dominant-baseline': 'central'}, tip);
      let lit = [], cur = null;
      const clear = () => {
        lit.forEach(t => t.classList.remove('attn-hot'));
        lit = [];
        mark.setAttribute('visibility', 'hidden');
        tip.setAttribute('visibility', 'hidden');
      };
      const point = (i, j) => {
        clear();
        cur = [i, j];
        lit = [rowLab[i], colLab[j]];
        lit.forEach(t => t.classList.add('attn-hot'));
        mark.setAttribute('x', left + j * cs);
        mark.setAttribute('y', top + i * cs);
        mark.setAttribute('visibility', 'visible');
        const text = `${named(att.rows, i)} → ${named(att.cols, j)}: ${fmt(m[i][j])}`;
        ro.textContent = text;
        tipText.textContent = fmt(m[i][j]);
        const c2 = context();
        c2.font = font;
        const tw = Math.ceil(c2.measureText(fmt(m[i][j])).width) + 12;
        const x = left + (j + 1) * cs + 2 + tw > width ? left + j * cs - tw - 2 : left + (j + 1) * cs + 2;
        tipBox.setAttribute('x', x);
        tipBox.setAttribute('y', top + i * cs + cs / 2 - 9);
        tipBox.setAttribute('width', tw);
        tipText.setAttribute('x', x + 6);
        tipText.setAttribute('y', top + i * cs + cs / 2);
        tip.setAttribute('visibility', 'visible');
        svg.setAttribute('aria-label', text);
      };
      cells.addEventListener('mouseover', e => {
        if (!e.target.hasAttribute('data-r')) return;
        point(+e.target.getAttribute('data-r'), +e.target.getAttribute('data-c'));
      });
      svg.addEventListener('mouseleave', () => { if (document.activeElement !== svg) { clear(); ro.textContent = 'hover a cell'; } });
      // The keyboard reaches every cell: Tab to the map, arrow keys move the cell read.
      svg.setAttribute('tabindex', '0');
      svg.setAttribute('role', 'img');
      svg.setAttribute('aria-label', `${att.name || 'attention'} layer ${l} head ${h}: arrow keys read the cells`);
      svg.addEventListener('focus', () => point(cur ? cur[0] : 0, cur ? cur[1] : 0));
      svg.addEventListener('blur', () => { clear(); ro.textContent = 'hover a cell'; });
      svg.addEventListener('keydown', e => {
        const d = {ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1]}[e.key];
        if (!d) return;
        e.preventDefault();
        const [i, j] = cur || [0, 0];
        point(Math.max(0, Math.min(R - 1, i + d[0])), Math.max(0, Math.min(C - 1, j + d[1])));
      });
    }
    drawGrid();
    return panel;
  }

  // Decoding step by step: a slider over the output steps; each step shows the word
  // written, the attention row that chose it as labelled bars with numbers, and the
  // beam, gate and alignment-path values when the document has them.
  function stepsView(steps, source, label) {
    const panel = el('div');
    const controls = el('div', {class: 'attn-controls'}, panel);
    const lab = el('label', {class: 'attn-ctl'}, controls, 'step ');
    const slider = el('input', {type: 'range', class: 'attn-slider', min: 0, max: steps.length - 1, step: 1, value: 0}, lab);
    const count = el('span', {class: 'attn-step-n'}, controls);
    const written = el('div', {class: 'attn-written'}, panel);
    const body = el('div', {class: 'attn-step-body'}, panel);
    const main = el('div', {class: 'attn-step-main'}, body);
    const word = el('div', {class: 'attn-word'}, main);
    // The rows the bars draw, named: a Transformer's is its last layer's cross-attention averaged over heads.
    el('div', {class: 'attn-hint attn-bars-label'}, main,
      `Bars: ${label || 'the attention over the source'} at the step that wrote the word.`);
    // A long source scrolls inside its box: the bars stay on screen with the controls.
    const bars = el('div', {class: 'attn-bars'}, main);
    const side = el('div', {class: 'attn-step-side'}, body);
    // The output so far; each word jumps to its step.
    const words = steps.map((s, k) => {
      const b = el('button', {type: 'button', class: 'attn-w', 'data-k': k, title: 'step ' + (k + 1)}, written, show(s && s.token != null ? s.token : ''));
      b.addEventListener('click', () => { slider.value = k; render(); });
      return b;
    });
    slider.addEventListener('input', render);

    function render() {
      const k = +slider.value, s = steps[k] || {};
      count.textContent = `${k + 1} / ${steps.length}`;
      words.forEach((b, i) => { b.classList.toggle('attn-cur', i === k); b.classList.toggle('attn-later', i > k); });
      word.textContent = '';
      // A step reads the word before (<bos> first) and writes this one: the head view's decoder
      // rows are labelled by the word read.
      const read = k > 0 && steps[k - 1] && steps[k - 1].token != null ? steps[k - 1].token : '<bos>';
      el('span', null, word, 'reads ');
      el('span', {class: 'attn-word-read'}, word, show(read));
      el('span', null, word, ', writes ');
      el('span', {class: 'attn-word-tok'}, word, show(s.token != null ? s.token : ''));
      if (isNum(s.probability)) {
        el('span', {class: 'attn-prob'}, word, ` p = ${fmt(s.probability)}`);
      }
      bars.textContent = '';
      const row = Array.isArray(s.row) ? s.row : [];
      const n = Math.max(row.length, source.length);
      const best = row.reduce((bi, w, j) => (isNum(w) && (bi < 0 || w > row[bi]) ? j : bi), -1);
      el('span', {class: 'attn-bars-head'}, bars, 'source');
      el('span', {class: 'attn-bars-head'}, bars, label ? 'weight' : 'attention that chose it');
      el('span', {class: 'attn-bars-head'}, bars, '');
      for (let j = 0; j < n; j++) {
        const tok = j < source.length ? source[j] : '#' + j;
        const r = el('div', {class: 'attn-bar' + (j === best ? ' attn-best' : ''), 'data-j': j}, bars);
        el('span', {class: 'attn-bar-tok', title: String(tok)}, r, j < source.length ? named(source, j) : tok);
        const track = el('span', {class: 'attn-bar-track'}, r);
        el('span', {class: 'attn-bar-fill', style: `width:${(100 * clamp01(row[j])).toFixed(1)}%`}, track);
        el('span', {class: 'attn-bar-w'}, r, fmt(row[j]));
      }
      if (best >= 0) {  // the strongest bar in view, for a source longer than the box
        const r = bars.querySelector(`.attn-bar[data-j="${best}"] .attn-bar-tok`);
        if (r && bars.scrollHeight > bars.clientHeight)
          bars.scrollTop = Math.max(0, r.offsetTop - bars.offsetTop - bars.clientHeight / 2);
      }
      side.textContent = '';
      if (Array.isArray(s.alternatives) && s.alternatives.length) {
        const alt = el('div', {class: 'attn-alts'}, side);
        el('div', {class: 'attn-k'}, alt, 'other words the beam kept after the same prefix');
        s.alternatives.forEach(x => {
          const r = el('div', {class: 'attn-alt'}, alt);
          el('span', {class: 'attn-alt-tok'}, r, show(x && x.token != null ? x.token : ''));
          el('span', {class: 'attn-v'}, r, fmt(x && x.probability));
        });
      }
      if (isNum(s.gate)) {
        const g = el('div', {class: 'attn-gate'}, side);
        el('span', {class: 'attn-k'}, g, 'gate p_gen ');
        el('span', {class: 'attn-v'}, g, fmt(s.gate));
        el('span', {class: 'attn-bar-fill', style: `width:${(100 * clamp01(s.gate)).toFixed(1)}%`},
          el('span', {class: 'attn-bar-track attn-meter', title: 'generate (filled) vs copy'}, g));
      }
      if (isNum(s.path)) {
        const p = el('div', {class: 'attn-path'}, side);
        el('span', {class: 'attn-k'}, p, 'expected alignment position ');
        el('span', {class: 'attn-v'}, p, fmt(s.path));
        // The position read as a place in the source: 0 is its first token.
        const lo = Math.max(0, Math.min(source.length - 1, Math.floor(s.path)));
        const hi = Math.min(source.length - 1, lo + 1), frac = s.path - lo;
        const where = !source.length ? '' : frac < 0.05 || lo === hi ? `at “${named(source, lo)}”`
          : frac > 0.95 ? `at “${named(source, hi)}”` : `between “${named(source, lo)}” and “${named(source, hi)}”`;
        el('div', {class: 'attn-hint attn-path-where'}, p, `source position (0 = first token), ${where}`);
      }
      if (Array.isArray(s.beam) && s.beam.length) {
        const b = el('div', {class: 'attn-beam'}, side);
        // Bold: the prefix the output continues, which need not be the best-scoring one now.
        const cont = Number.isInteger(s.continued) ? s.continued : -1;
        el('div', {class: 'attn-k'}, b, `beam: ${s.beam.length} kept, best score first` +
          (cont >= 0 ? '; bold: the one the output continues' : ''));
        s.beam.forEach((hyp, i) => {
          const r = el('div', {class: 'attn-hyp' + (i === cont ? ' attn-best' : ''), 'data-i': i}, b);
          el('span', {class: 'attn-hyp-text'}, r, String(hyp && hyp.text != null ? hyp.text : ''));
          el('span', {class: 'attn-hyp-score'}, r, fmt(hyp && hyp.score));
        });
      }
    }
    render();
    return panel;
  }

  global.attnExplorer = attnExplorer;
})(typeof window !== 'undefined' ? window : this);
