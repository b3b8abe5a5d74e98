/* score_view.js: the browser half of attn's score view (viz/score_view.hpp), bertviz's neuron
 * view for the course's attentions.
 *
 * viz/score_view.cpp emits one self-contained HTML fragment per notebook output: the view's div
 * (class attn-score-view, id ID) whose first child is a div.attn-sv-fallback holding a static
 * picture, then a style element with score_view.css, then a script element with this file
 * followed by attnScoreView(document.getElementById("ID"), DOC). (This file must never contain a
 * closing script tag, nor a "<!" + "--" sequence.) Nothing is fetched: the fragment is the whole
 * program and its data.
 *
 * DOC holds every number the view shows, computed in C++ in float64 (q, k, scores, scaled
 * scores, weights; for additive attention v_a and the hidden activations); the script only
 * multiplies q_i k_i (or v_a,i h_i) for the product cells, the same IEEE product the C++ side
 * sums. Numbers are shown to 4 significant digits; the readout line gives the hovered ones.
 *
 * Every output carries its own copy of this file, so it may run many times on one page: it
 * defines one global, attnScoreView (kept when a copy of the same or a newer version did it
 * already), and a call touches only elements under its own root. Text reaches the DOM only
 * through textContent. ES2017, no libraries.
 */
(function (global) {
  'use strict';
  const VERSION = 1;
  if (typeof global.attnScoreView === 'function' && (global.attnScoreView.version || 0) >= VERSION) return;

  const VECTOR_BUDGET = 230;  // px for all vector columns together: the view fits a 560 px output area
  const MAX_CELL = 14, MIN_CELL = 2;
  const BAR = 50;             // px of a weight of 1

  const isNum = x => typeof x === 'number' && isFinite(x);
  // 4 significant digits; very small and very large numbers in exponent form.
  function fmt(x) {
    if (!isNum(x)) return '–';
    if (x === 0) return '0';
    const a = Math.abs(x);
    return a >= 1e-3 && a < 1e4 ? x.toPrecision(4) : x.toExponential(3);
  }

  function el(tag, attrs, parent, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) if (attrs[k] != null) e.setAttribute(k, attrs[k]);
    if (text != null) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }

  // What a token shows: blanks made visible, long tokens shortened (full text in a tooltip).
  function show(t) {
    t = String(t);
    if (t.trim() === '') return '␣'.repeat(Math.max(1, Math.min(t.length, 3)));
    const cps = Array.from(t);
    return cps.length > 14 ? cps.slice(0, 13).join('') + '…' : t;
  }

  // A signed value as a cell colour: blue for positive, red for negative, as strong as |x| / top.
  function shade(x, top) {
    if (!isNum(x) || !(top > 0)) return 'transparent';
    const alpha = Math.min(1, Math.abs(x) / top) * 0.9;
    return x >= 0 ? `rgba(31,119,180,${alpha.toFixed(3)})` : `rgba(214,39,40,${alpha.toFixed(3)})`;
  }

  const isMatrix = (m, rows, cols) => Array.isArray(m) && m.length === rows &&
    m.every(r => Array.isArray(r) && (cols == null || r.length === cols));

  // Shapes are checked up front so a bad document fails with a message, not half a drawing.
  function check(doc) {
    const T = Array.isArray(doc.queries) ? doc.queries.length : 0, S = Array.isArray(doc.keys) ? doc.keys.length : 0;
    if (!T || !S) throw new Error('the document needs query and key labels');
    const d = Array.isArray(doc.q) && Array.isArray(doc.q[0]) ? doc.q[0].length : 0;
    if (!d || !isMatrix(doc.q, T, d) || !isMatrix(doc.k, S, d))
      throw new Error(`q must be ${T}×d and k ${S}×d`);
    for (const name of ['scores', 'scaled', 'weights'])
      if (!isMatrix(doc[name], T, S)) throw new Error(`${name} must be ${T}×${S}`);
    if (doc.mask != null && !isMatrix(doc.mask, T, S)) throw new Error(`the mask must be ${T}×${S}`);
    if (doc.kind === 'additive') {
      if (!Array.isArray(doc.va) || doc.va.length !== d) throw new Error(`v_a must have ${d} numbers`);
      if (!Array.isArray(doc.hidden) || doc.hidden.length !== T || !doc.hidden.every(h => isMatrix(h, S, d)))
        throw new Error(`the hidden activations must be ${T}×${S}×${d}`);
    }
    if (doc.v != null && (!isMatrix(doc.v, S) || !isMatrix(doc.output, T, doc.v[0].length)))
      throw new Error(`the values must be ${S}×dv, the output ${T}×dv`);
    return {T, S, d};
  }

  // The public entry point. root: the view's <div class="attn-score-view">; doc: the JSON document
  // (an object, or its text). Calling it again on the same root redraws.
  function attnScoreView(root, doc) {
    if (!root) return;  // the output was cleared before its script ran
    const fallback = Array.from(root.children).find(c => c.classList.contains('attn-sv-fallback'));
    Array.from(root.children).forEach(c => { if (c !== fallback) root.removeChild(c); });
    let ui;
    try {
      if (typeof doc === 'string') doc = JSON.parse(doc);
      ui = build(doc || {}, root);
    } catch (err) {
      // The static picture stays, with a line saying why the interactive view is missing.
      el('div', {class: 'attn-sv-error'}, root, 'score view: ' + ((err && err.message) || err));
      return;
    }
    root.appendChild(ui);
    if (fallback) fallback.remove();  // the saved notebook keeps it, for renderers without scripts
  }
  attnScoreView.version = VERSION;

  function build(doc, root) {
    const {T, S, d} = check(doc);
    const additive = doc.kind === 'additive';
    const values = !additive && doc.v != null;
    const dv = values ? doc.v[0].length : 0;
    const blocked = (t, j) => !!(doc.mask && doc.mask[t][j]);
    // The product cells: q_i k_i, or v_a,i tanh(W q + U k)_i.
    const product = (t, j, i) => additive ? doc.va[i] * doc.hidden[t][j][i] : doc.q[t][i] * doc.k[j][i];

    // One colour scale per kind of cell, over every query, so colours compare across queries.
    const maxAbs = (f) => {
      let m = 0;
      f(x => { if (isNum(x)) m = Math.max(m, Math.abs(x)); });
      return m;
    };
    const topQK = maxAbs(see => { doc.q.forEach(r => r.forEach(see)); doc.k.forEach(r => r.forEach(see)); });
    const topProd = maxAbs(see => { for (let t = 0; t < T; ++t) for (let j = 0; j < S; ++j) for (let i = 0; i < d; ++i) see(product(t, j, i)); });
    const topHidden = additive ? 1 : 0;  // tanh lies in [-1, 1]
    const topVa = additive ? maxAbs(see => doc.va.forEach(see)) : 0;
    const topV = values ? maxAbs(see => { doc.v.forEach(r => r.forEach(see)); doc.output.forEach(r => r.forEach(see)); }) : 0;

    const vecCols = additive ? 3 : 2;
    const cellW = Math.max(MIN_CELL, Math.min(MAX_CELL, Math.floor(VECTOR_BUDGET / vecCols / d)));
    const cellV = values ? Math.max(MIN_CELL, Math.min(MAX_CELL, Math.floor(VECTOR_BUDGET / vecCols / dv))) : 0;

    const ui = el('div', {class: 'attn-sv-ui', tabindex: 0,
      'aria-label': 'score view: arrow keys choose the query'});
    el('div', {class: 'attn-sv-title'}, ui, String(doc.title || (additive ? 'additive attention' : 'dot-product attention')));

    // The query picker.
    const picker = el('div', {class: 'attn-sv-queries', role: 'group', 'aria-label': 'query position'}, ui);
    el('span', {class: 'attn-sv-label'}, picker, 'query ');
    const buttons = doc.queries.map((tok, t) => {
      const b = el('button', {type: 'button', class: 'attn-sv-q', 'data-t': t, title: `query ${t}: ${tok}`}, picker);
      el('span', null, b, show(tok));
      el('sub', null, b, String(t));
      b.addEventListener('click', () => choose(t));
      return b;
    });
    const scale = isNum(doc.scale) ? doc.scale : 1;
    // 1/√d is the Transformer's scale (viz::dot_product_scores, viz::score_view); a view filled
    // by hand may carry another (1 for Luong's dot score), and is then labelled with its number.
    const scaleName = Math.abs(scale * Math.sqrt(d) - 1) < 1e-9 ? '1/√d' : fmt(scale);
    el('div', {class: 'attn-sv-hint'}, ui, additive
      ? 'score = v_a · tanh(W q + U k); weight = softmax over the keys not masked. Hover a key or a cell.'
      : 'score = q · k; scaled = score × ' + (scaleName === '1/√d' ? `1/√d = score × ${fmt(scale)}` : scaleName) +
        '; weight = softmax over the keys not masked. Hover a key or a cell.');

    const scroll = el('div', {class: 'attn-sv-scroll'}, ui);
    const table = el('table', {class: 'attn-sv-table'}, scroll);
    const head = el('thead', null, table);
    const hr = el('tr', null, head);
    const columns = additive
      ? ['key', 'U k', 'tanh(W q + U k)', 'v_a ⊙ tanh', 'score', 'masked', 'weight']
      : ['key', 'k', 'q ⊙ k', 'q · k', '× ' + scaleName, 'masked', 'weight'].concat(values ? ['v'] : []);
    columns.forEach(c => el('th', null, hr, c));
    // The query's own row, above the key vectors: q (or W q), and v_a above its products.
    const qrow = el('tr', {class: 'attn-sv-qrow'}, head);
    const qlabel = el('td', {class: 'attn-sv-tok'}, qrow);
    const qcell = el('td', {class: 'attn-sv-vec'}, qrow);
    el('td', null, qrow);
    const vaCell = el('td', {class: 'attn-sv-vec'}, qrow);
    for (let c = 4; c < columns.length; ++c) el('td', null, qrow);

    const body = el('tbody', null, table);
    const rows = doc.keys.map((tok, j) => {
      const tr = el('tr', {class: 'attn-sv-key', 'data-j': j}, body);
      const label = el('td', {class: 'attn-sv-tok', title: `key ${j}: ${tok}`}, tr);
      el('span', null, label, show(tok));
      el('sub', null, label, String(j));
      const cells = {vec1: el('td', {class: 'attn-sv-vec'}, tr), vec2: el('td', {class: 'attn-sv-vec'}, tr)};
      if (additive) cells.vec3 = el('td', {class: 'attn-sv-vec'}, tr);
      cells.score = el('td', {class: 'attn-sv-num', 'data-col': 'score'}, tr);
      if (!additive) cells.scaled = el('td', {class: 'attn-sv-num', 'data-col': 'scaled'}, tr);
      cells.masked = el('td', {class: 'attn-sv-num', 'data-col': 'masked'}, tr);
      cells.weight = el('td', {class: 'attn-sv-num attn-sv-wcell', 'data-col': 'weight'}, tr);
      if (values) cells.v = el('td', {class: 'attn-sv-vec'}, tr);
      tr.addEventListener('mouseenter', () => hot(j, null));
      tr.addEventListener('mouseleave', () => hot(null, null));
      return {tr, cells};
    });
    let foot = null;
    if (values) {
      const tf = el('tfoot', null, table);
      foot = el('tr', {class: 'attn-sv-out'}, tf);
      const label = el('td', {class: 'attn-sv-tok', colspan: columns.length - 1}, foot, 'output Σ weight × v');
      label.style.textAlign = 'right';
      foot = el('td', {class: 'attn-sv-vec'}, foot);
    }
    const readout = el('div', {class: 'attn-sv-readout', 'aria-live': 'polite'}, ui);

    // A vector as a row of coloured cells; a hovered cell names its index and value.
    function cells(td, xs, top, width, what, j) {
      td.textContent = '';
      const box = el('span', {class: 'attn-sv-cells'}, td);
      xs.forEach((x, i) => {
        const c = el('span', {class: 'attn-sv-c', 'data-i': i, 'data-what': what}, box);
        c.style.width = width + 'px';
        c.style.background = shade(x, top);
        c.addEventListener('mouseenter', () => hot(j, {what, i}));
      });
    }

    let current = 0;
    function choose(t) {
      current = Math.max(0, Math.min(T - 1, t));
      buttons.forEach((b, i) => b.setAttribute('aria-pressed', String(i === current)));
      qlabel.textContent = '';
      el('span', null, qlabel, additive ? 'W q' : 'q');
      el('sub', null, qlabel, String(current));
      cells(qcell, doc.q[current], topQK, cellW, 'q', null);
      if (additive) cells(vaCell, doc.va, topVa, cellW, 'va', null);
      rows.forEach(({tr, cells: c}, j) => {
        const off = blocked(current, j);
        tr.classList.toggle('attn-sv-blocked', off);
        const prods = doc.q[current].map((_, i) => product(current, j, i));
        if (additive) {
          cells(c.vec1, doc.k[j], topQK, cellW, 'k', j);
          cells(c.vec2, doc.hidden[current][j], topHidden, cellW, 'hidden', j);
          cells(c.vec3, prods, topProd, cellW, 'product', j);
        } else {
          cells(c.vec1, doc.k[j], topQK, cellW, 'k', j);
          cells(c.vec2, prods, topProd, cellW, 'product', j);
          c.scaled.textContent = fmt(doc.scaled[current][j]);
        }
        c.score.textContent = fmt(doc.scores[current][j]);
        c.masked.textContent = off ? '−∞' : fmt(doc.scaled[current][j]);
        const w = doc.weights[current][j];
        c.weight.textContent = '';
        const bar = el('span', {class: 'attn-sv-bar'}, c.weight);
        bar.style.width = (isNum(w) ? Math.max(0, Math.min(1, w)) * BAR : 0).toFixed(1) + 'px';
        el('span', {class: 'attn-sv-w'}, c.weight, fmt(w));
        if (values) cells(c.v, doc.v[j], topV, cellV, 'v', j);
      });
      if (foot) cells(foot, doc.output[current], topV, cellV, 'output', null);
      hot(null, null);
    }

    // The readout: the hovered key's numbers, and the hovered cell's.
    function hot(j, cell) {
      rows.forEach(({tr}, r) => tr.classList.toggle('attn-sv-hot', r === j));
      const t = current, q = doc.queries[t];
      let text = `query "${q}" @${t}`;
      if (j != null) {
        const k = doc.keys[j];
        text += ` · key "${k}" @${j}: score ${fmt(doc.scores[t][j])}`;
        if (!additive) text += `, scaled ${fmt(doc.scaled[t][j])}`;
        text += blocked(t, j) ? ', masked: −∞, weight 0' : `, weight ${fmt(doc.weights[t][j])}`;
      }
      if (cell) {
        const i = cell.i;
        if (cell.what === 'v' || cell.what === 'output') {
          text += ` · ${cell.what === 'v' ? 'v' : 'output'}[${i}] = ${fmt((cell.what === 'v' ? doc.v[j] : doc.output[t])[i])}`;
        } else if (additive) {
          const h = j != null ? doc.hidden[t][j][i] : null;
          text += ` · i = ${i}: (W q)_i = ${fmt(doc.q[t][i])}, v_a,i = ${fmt(doc.va[i])}`;
          if (j != null) text += `, (U k)_i = ${fmt(doc.k[j][i])}, tanh = ${fmt(h)}, v_a,i × tanh = ${fmt(doc.va[i] * h)}`;
        } else {
          text += ` · i = ${i}: q_i = ${fmt(doc.q[t][i])}`;
          if (j != null) text += `, k_i = ${fmt(doc.k[j][i])}, q_i × k_i = ${fmt(doc.q[t][i] * doc.k[j][i])}`;
        }
      }
      readout.textContent = text;
    }

    // Arrow keys move the query while the view has the focus (a click on it gives it).
    ui.addEventListener('keydown', (ev) => {
      const step = {ArrowLeft: -1, ArrowUp: -1, ArrowRight: 1, ArrowDown: 1}[ev.key];
      if (step) choose(current + step);
      else if (ev.key === 'Home') choose(0);
      else if (ev.key === 'End') choose(T - 1);
      else return;
      ev.preventDefault();
      ev.stopPropagation();  // Jupyter would move between cells
    });
    choose(Number.isInteger(doc.query) ? doc.query : 0);
    return ui;
  }

  global.attnScoreView = attnScoreView;
})(typeof window !== 'undefined' ? window : this);
