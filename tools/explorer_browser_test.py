#!/usr/bin/python3
"""The attention explorer in a live notebook: Jupyter Notebook with the course's kernel,
tests/browser/explorer.ipynb (a Transformer's attentions and a beam-search decoding, both
from fixed tensors) opened in headless Chromium, Cell > Run All, then the two views
driven with the mouse and the keyboard and checked in the DOM:

  (a) both views rendered: fallback picture removed, no error line, title, tabs and tokens
      as their documents say (tokens shown literally: "<eos>" is text, not an element)
  (b) hovering a query (or key) token of the head view leaves visible only that token's
      lines, which are its weights; the readout lists them as numbers; the view keeps its
      height; the other view does not change; un-hovering restores every line
  (c) unticking a head hides that head's lines only, and the readout lists the others
  (d) the attention selector (encoder self / decoder self / cross) and the layer selector
      redraw the tokens and lines of that attention and layer
  (e) the model view has layers x heads thumbnails; clicking one opens its heatmap, whose
      hovered cell shows its weight
  (f) the decoding slider, on one line with its label (Jupyter's Bootstrap styles stay out),
      changes the step shown (arrow key, a value set, a written word clicked): its word,
      attention row, beam, gate and path; the other view does not change
  (g) the network: the browser runs with every non-loopback host unresolvable and a dead
      proxy; every request the page made (Chromium's performance log) went to the local
      Jupyter server, none was made by a notebook output (the explorer's script, style or
      markup), and none at all while the views were used; a fetch of example.com fails
  (h) no console error from the explorer, and no "Javascript error adding output"
  (i) untrusted: each output's HTML passed through Jupyter's own sanitiser (the one an untrusted
      notebook's outputs go through, in classic Notebook 6.4 as in JupyterLab) shows its static
      picture as an <img> that loads (natural width > 0), with an alt text, and no raw SVG text
  (j) issue 67's findings: the beam's bold entry is the prefix the output continues (not the
      best-scoring one); readouts tell repeated tokens apart by position; the head view and the
      decoding view say how decoder rows are labelled; the bars say what they draw, with the
      word's probability and the other words kept; a double-click on a head shows it alone;
      pointing at a head raises it; "query"/"key" not clipped; diffuse lines have a minimum
      opacity; the enlarged map has a colour bar and shows the hovered value beside the cell;
      a click pins a token; ARIA tabs move with the arrow keys; the map's cells are reachable by
      keyboard; "+N smaller" shows; the alignment position is placed in the source

    tools/explorer_browser_test.py [--notebook tests/browser/explorer.ipynb]
                                   [--screenshots DIR] [--verbose]

--screenshots DIR writes head.png, model.png and decoding.png, each cropped to its view.
Needs Debian's chromium, chromium-driver and python3-selenium (tools/setup.sh --with-browser)
and the kernel built (ninja -C build kernel/attn-xcpp); JUPYTER_PATH defaults to the build's
kernelspec. It starts its own Jupyter server on a free loopback port and stops it at the end.
"""
import argparse
import base64
import os
import shutil
import sys
import tempfile
import time

import notebook_browser
from explorer_weights import unpack

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MIN_LINE = 0.003  # explorer.js draws no head-view line lighter than this
FLOOR = 0.12      # and none fainter than this (opacity = FLOOR + (1 - FLOOR) * weight)


def wait_for(cond, timeout, what, step=0.5):
    return notebook_browser.wait_for(cond, timeout, what, step, who="explorer browser test")


# Every head-view line of a view: head, query, key, weight, computed visibility, and whether
# it is shown at all (visible, no display:none ancestor: Chromium's checkVisibility() says
# true for SVG elements under a display:none group).
LINES = """
const root = document.getElementById(arguments[0]);
return Array.from(root.querySelectorAll('.attn-panel[data-view="head"] svg.attn-hv line')).map(l => [
  +l.closest('g.attn-head').getAttribute('data-h'), +l.getAttribute('data-q'), +l.getAttribute('data-k'),
  +l.getAttribute('data-w'), getComputedStyle(l).visibility, shown(l)]);
function shown(e) {
  if (getComputedStyle(e).visibility !== 'visible') return false;
  for (; e; e = e.parentElement) if (getComputedStyle(e).display === 'none') return false;
  return true;
}
"""



def named(tokens, i):
    """A token as the readouts name it: with its position when its text occurs more than once."""
    return "%s @%d" % (tokens[i], i) if tokens.count(tokens[i]) > 1 else tokens[i]


def output_doc(html):
    doc = notebook_browser.output_doc(html, "attnExplorer")
    for att in doc["attentions"]:
        unpack(att)
    return doc


def expected_lines(att, layer):
    W = att["weights"][layer]
    return sorted((h, i, j, round(W[h][i][j], 9)) for h in range(len(W)) for i in range(len(W[h]))
                  for j in range(len(W[h][i])) if W[h][i][j] >= MIN_LINE)


def drawn(ls):
    return sorted((h, q, k, round(w, 9)) for h, q, k, w, _, _ in ls)


def run(driver, port, args, check):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    d = driver
    origin = "http://127.0.0.1:%d" % port
    net = notebook_browser.Network(d, port)  # every request, by phase, and SEVERE console messages

    def lines(vid):
        return d.execute_script(LINES, vid)

    def snapshot(vid):
        return d.execute_script("return document.getElementById(arguments[0]).innerHTML", vid)

    def hover(elem):
        d.execute_script("arguments[0].scrollIntoView({block: 'center'})", elem)
        ActionChains(d).move_to_element(elem).perform()

    def unhover(vid):
        hover(d.find_element(By.CSS_SELECTOR, "#%s .attn-title" % vid))

    def tab(vid, kind):
        d.find_element(By.CSS_SELECTOR, '#%s .attn-tab[data-view="%s"]' % (vid, kind)).click()

    def token(vid, side, i):
        return d.find_element(By.CSS_SELECTOR, '#%s .attn-tok[data-side="%s"][data-i="%d"] rect' % (vid, side, i))

    def head_select(vid, n):
        return Select(d.find_element(
            By.CSS_SELECTOR, '#%s .attn-panel[data-view="head"] .attn-ctl:nth-child(%d) select' % (vid, n)))

    def shot(vid, name):
        """The view and a margin around it (a crop at a fractional edge would cut its first letters)."""
        if not args.screenshots:
            return
        elem = d.find_element(By.ID, vid)
        box = d.execute_script("const b = arguments[0].getBoundingClientRect();"
                               "return [b.left, b.top, b.width, b.height, innerHeight];", elem)
        if box[1] < 8 or box[1] + box[3] + 8 > box[4]:  # scroll only when needed: it would end a hover
            d.execute_script("arguments[0].scrollIntoView({block: 'center'})", elem)
            box = d.execute_script("const b = arguments[0].getBoundingClientRect();"
                                   "return [b.left, b.top, b.width, b.height, innerHeight];", elem)
        x, y = max(0, box[0] - 8), max(0, box[1] - 8)
        png = d.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "clip": {
            "x": x, "y": y, "width": box[0] + box[2] + 8 - x, "height": box[1] + box[3] + 8 - y, "scale": 1}})
        with open(os.path.join(args.screenshots, name), "wb") as f:
            f.write(base64.b64decode(png["data"]))

    d.get("%s/notebooks/%s?token=%s" % (origin, os.path.basename(args.notebook), args.token))
    wait_for(lambda: d.execute_script(
        "return window.Jupyter && Jupyter.notebook && Jupyter.notebook.kernel"
        " && Jupyter.notebook.kernel.is_connected();"), 120, "the kernel to connect")
    net.settle()  # MathJax done with the markdown cells: what it loads is the page's loading
    net.drain("load")
    net.drain_console()
    net.severe.clear()  # what Jupyter says while it loads is not the explorer's
    t0 = time.time()
    d.execute_script("Jupyter.notebook.clear_all_output(); Jupyter.notebook.execute_all_cells();")
    wait_for(lambda: d.execute_script(
        "var cells = Jupyter.notebook.get_cells().filter(c => c.cell_type == 'code');"
        "var pending = cells.filter(c => c.input_prompt_number === '*' || c.input_prompt_number == null);"
        "return pending.length == 0 && !Jupyter.notebook.kernel_busy;"), args.timeout, "Run All", step=1.0)
    run_seconds = time.time() - t0
    time.sleep(0.5)  # let the last output's script run
    net.drain("run")

    errors = d.execute_script(
        "return Jupyter.notebook.get_cells().filter(c => c.cell_type == 'code')"
        ".map(c => c.output_area.outputs.filter(o => o.output_type == 'error').map(o => o.ename + ': ' + o.evalue))"
        ".reduce((a, b) => a.concat(b), []);")
    if not check("every cell ran without an error (Run All: %.1f s)" % run_seconds, not errors, errors):
        return run_seconds
    htmls = d.execute_script(notebook_browser.docs_script("attnExplorer"))
    docs = [output_doc(h) for h in htmls]
    if not check("two explorer outputs", len(docs) == 2, [doc.get("title") for doc in docs]):
        return run_seconds
    tdoc, sdoc = docs
    v1, v2 = tdoc["id"], sdoc["id"]

    # (a) both views rendered
    page = d.execute_script("""
      return {views: Array.from(document.querySelectorAll('.output_area .attn-explorer')).map(e => e.id),
              fallbacks: document.querySelectorAll('.output_area .attn-fallback').length,
              jserrors: Array.from(document.querySelectorAll('.output_area')).map(e => e.innerText)
                          .filter(t => t.includes('Javascript error adding output')),
              strays: document.querySelectorAll('.output_area eos, .output_area bos').length};""")
    check("(a) the page shows the two views, in order", page["views"] == [v1, v2], page["views"])
    check("(a) both fallback pictures removed, no 'Javascript error adding output'",
          page["fallbacks"] == 0 and not page["jserrors"], page)
    for doc, tabs in ((tdoc, ["head", "model"]), (sdoc, ["steps"])):
        st = d.execute_script("""
          const r = document.getElementById(arguments[0]);
          return {ui: r.querySelectorAll('.attn-ui').length, err: r.querySelector('.attn-error') && r.querySelector('.attn-error').textContent,
                  title: r.querySelector('.attn-title').textContent,
                  tabs: Array.from(r.querySelectorAll('.attn-tab')).map(t => t.getAttribute('data-view')),
                  panels: Array.from(r.querySelectorAll('.attn-panel')).filter(p => !p.hidden).map(p => p.getAttribute('data-view')),
                  height: r.getBoundingClientRect().height};""", doc["id"])
        check("(a) %s rendered: one UI, no error line, tabs %s, first panel shown" % (doc["title"], tabs),
              st["ui"] == 1 and st["err"] is None and st["tabs"] == tabs and st["panels"] == tabs[:1]
              and st["height"] > 100, st)
        check("(a) %s: title as given" % doc["title"], st["title"] == doc["title"], st["title"])
    names = [a["name"] for a in tdoc["attentions"]]
    check("(a) the Transformer's attentions: encoder self, decoder self, cross; 2 layers x 3 heads each",
          names == ["encoder self", "decoder self", "cross"]
          and all(len(a["weights"]) == 2 and len(a["weights"][0]) == 3 for a in tdoc["attentions"]), names)
    check("(a) every weight row sums to 1 (within the 4 significant digits written)", all(
        abs(sum(row) - 1) < 1e-3 for a in tdoc["attentions"] for layer in a["weights"] for m in layer for row in m))

    # (i) untrusted: the static picture through Jupyter's sanitiser
    san = d.execute_async_script(notebook_browser.SANITISED, htmls)
    check("(i) sanitised like an untrusted notebook, each explorer shows its picture as an <img> that loads, "
          "with an alt text, and no raw SVG text",
          isinstance(san, list) and len(san) == 2 and all(
              len(o["imgs"]) == 1 and o["imgs"][0][0] > 100 and o["imgs"][0][1] > 50 and o["imgs"][0][3] > 100
              and o["imgs"][0][2].startswith("Attention explorer") and o["svgs"] == 0 and o["scripts"] == 0
              and len(o["text"]) < 40 for o in san), san)
    toks = d.execute_script("""const r = document.getElementById(arguments[0]);
      return ['q', 'k'].map(s => Array.from(r.querySelectorAll('.attn-tok[data-side="' + s + '"] text')).map(t => t.textContent));""", v1)
    enc = tdoc["attentions"][0]
    check("(a) head view tokens shown literally ('<eos>' as text, not an element)",
          toks == [enc["rows"], enc["cols"]] and "<eos>" in toks[0] and page["strays"] == 0, (toks, page["strays"]))

    # (b) hovering in the head view (encoder self, layer 0)
    base1, base2 = lines(v1), lines(v2)
    snap2 = snapshot(v2)
    check("(b) all lines shown before hovering, and they are layer 0's weights",
          base1 and all(vis == "visible" and shown for *_, vis, shown in base1)
          and drawn(base1) == expected_lines(enc, 0) and base2 == [], len(base1))
    height = d.execute_script("return arguments[0].getBoundingClientRect().height", d.find_element(By.ID, v1))
    qi = 1
    hover(token(v1, "q", qi))
    l1 = lines(v1)
    bad = [x for x in l1 if x[5] != (x[1] == qi) or (x[4] == "visible") != (x[1] == qi)]
    shown_q = drawn(x for x in l1 if x[5])
    want_q = [x for x in expected_lines(enc, 0) if x[1] == qi]
    check("(b) hovering query %d ('%s') leaves only its lines shown" % (qi, enc["rows"][qi]),
          not bad and shown_q == want_q and len(shown_q) > 0, bad[:5])
    ro = d.find_element(By.CSS_SELECTOR, "#%s .attn-readout" % v1).text
    W0 = enc["weights"][0]
    # The readout lists each head's largest weights, as many as fit on a line: at least the top 3.
    want = ["%.3f" % w for h in range(3) for w in sorted(W0[h][qi], reverse=True)[:3]]
    check("(b) the readout shows the hovered token and its weights as numbers",
          enc["rows"][qi] in ro and all(w in ro for w in want), (want, ro))
    repeated = [named(enc["cols"], j) for j in range(len(enc["cols"])) if enc["cols"].count(enc["cols"][j]) > 1]
    check("(j) the readout tells repeated tokens apart by position (%s)" % ", ".join(repeated),
          len(repeated) >= 2 and all(r in ro for r in repeated), ro)
    hv = d.execute_script("""const r = document.getElementById(arguments[0]), svg = r.querySelector('svg.attn-hv');
      const ax = Array.from(svg.querySelectorAll('text.attn-axis')).map(t => { const b = t.getBBox(); return [b.x, b.x + b.width]; });
      const ops = Array.from(svg.querySelectorAll('line')).map(l => +l.getAttribute('stroke-opacity'));
      return {axes: ax, width: +svg.getAttribute('width'), minop: Math.min(...ops),
              note: r.querySelector('.attn-rows-note').hidden};""", v1)
    check("(j) the 'query' and 'key' headers lie inside the head view (not clipped)",
          hv["axes"][0][0] >= 0 and hv["axes"][1][1] <= hv["width"], hv)
    check("(j) every drawn line has an opacity of at least %.2f (diffuse heads stay visible)" % FLOOR,
          hv["minop"] >= FLOOR - 1e-9, hv["minop"])
    check("(j) encoder self-attention: no note on decoder rows", hv["note"] is True, hv)
    check("(b) hovering keeps the view's height",
          d.execute_script("return arguments[0].getBoundingClientRect().height", d.find_element(By.ID, v1)) == height)
    check("(b) the decoding view is unchanged by the hover", snapshot(v2) == snap2)
    kj = 3
    hover(token(v1, "k", kj))
    l1 = lines(v1)
    bad = [x for x in l1 if x[5] != (x[2] == kj)]
    check("(b) hovering key %d ('%s') leaves only its lines shown" % (kj, enc["cols"][kj]),
          not bad and any(x[5] for x in l1), bad[:5])
    unhover(v1)
    check("(b) un-hovering shows every line again", lines(v1) == base1)
    token(v1, "q", qi).click()
    unhover(v1)
    l1 = lines(v1)
    ro = d.find_element(By.CSS_SELECTOR, "#%s .attn-readout" % v1).text
    check("(j) a click pins a token: its lines stay alone after the mouse leaves, the readout says pinned",
          all(x[5] == (x[1] == qi) for x in l1) and "pinned" in ro, ro)
    token(v1, "q", qi).click()
    unhover(v1)
    check("(j) a second click unpins: every line again", lines(v1) == base1)

    # (c) head toggles
    box = d.find_element(By.CSS_SELECTOR, '#%s .attn-panel[data-view="head"] input[data-h="1"]' % v1)
    box.click()
    l1 = lines(v1)
    check("(c) unticking head 1 hides its lines only",
          all(x[5] == (x[0] != 1) for x in l1) and any(x[0] == 1 for x in l1))
    hover(token(v1, "q", 0))
    listed = d.execute_script(
        "return Array.from(document.querySelectorAll('#%s .attn-ro-head')).map(e => +e.getAttribute('data-h'))" % v1)
    l1 = lines(v1)
    check("(c) with head 1 off, a hover shows heads 0 and 2 only, and lists them",
          listed == [0, 2] and all(x[5] == (x[0] != 1 and x[1] == 0) for x in l1), listed)
    unhover(v1)
    box.click()
    check("(c) ticking it again shows its lines again", sorted(lines(v1)) == sorted(base1))
    toggle = d.find_element(By.CSS_SELECTOR, '#%s .attn-head-toggle[data-h="2"]' % v1)
    ActionChains(d).double_click(toggle).perform()
    l1 = lines(v1)
    ticks = d.execute_script("return Array.from(document.querySelectorAll('#%s .attn-head-toggle input')).map(b => b.checked)" % v1)
    check("(j) double-clicking head 2 shows it alone (bertviz's gesture)",
          ticks == [False, False, True] and all(x[5] == (x[0] == 2) for x in l1) and any(x[5] for x in l1), ticks)
    ActionChains(d).double_click(toggle).perform()
    check("(j) double-clicking it again shows every head", sorted(lines(v1)) == sorted(base1))
    hover(d.find_element(By.CSS_SELECTOR, '#%s .attn-head-toggle[data-h="0"]' % v1))
    raised = d.execute_script("""const svg = document.querySelector('#' + arguments[0] + ' svg.attn-hv');
      const gs = Array.from(svg.querySelectorAll('g.attn-head'));
      return {last: +gs[gs.length - 1].getAttribute('data-h'),
              op: gs.map(g => [+g.getAttribute('data-h'), +getComputedStyle(g).opacity]).sort()};""", v1)
    check("(j) pointing at head 0's toggle draws its lines on top and fades the other heads",
          raised["last"] == 0 and raised["op"] == [[0, 1], [1, 0.12], [2, 0.12]], raised)
    unhover(v1)

    # (d) attention and layer selectors
    sel = head_select(v1, 1)
    check("(d) attention selector: encoder self, decoder self, cross",
          [o.text for o in sel.options] == names, [o.text for o in sel.options])
    for n, att in enumerate(tdoc["attentions"]):
        sel.select_by_visible_text(att["name"])
        toks = d.execute_script("""const r = document.getElementById(arguments[0]);
          return ['q', 'k'].map(s => Array.from(r.querySelectorAll('.attn-tok[data-side="' + s + '"] text')).map(t => t.textContent));""", v1)
        check("(d) '%s' selected: its queries, keys and layer 0 lines" % att["name"],
              toks == [att["rows"], att["cols"]] and drawn(lines(v1)) == expected_lines(att, 0), toks)
        head_select(v1, 2).select_by_index(1)
        check("(d) '%s' layer 1 selected: layer 1's lines" % att["name"],
              drawn(lines(v1)) == expected_lines(att, 1) and expected_lines(att, 1) != expected_lines(att, 0))
        note = d.find_element(By.CSS_SELECTOR, "#%s .attn-rows-note" % v1)
        check("(j) '%s': the head view says its rows are the tokens the decoder reads" % att["name"],
              note.is_displayed() == bool(att.get("rows_read")) and (not att.get("rows_read") or "reads" in note.text),
              (att.get("rows_read"), note.text))
        if len(att["cols"]) > 6:
            hover(token(v1, "q", 1))
            more = d.find_elements(By.CSS_SELECTOR, "#%s .attn-ro-more" % v1)
            check("(j) '%s' (%d keys): the readout shows '+%d smaller'" % (att["name"], len(att["cols"]), len(att["cols"]) - 6),
                  more and all(m.is_displayed() and m.text == "+%d smaller" % (len(att["cols"]) - 6) for m in more),
                  [m.text for m in more])
            unhover(v1)
    cross = tdoc["attentions"][2]
    hover(token(v1, "q", 2))
    shot(v1, "head.png")
    unhover(v1)
    check("(d) the decoding view is unchanged by the selectors", snapshot(v2) == snap2)

    # (e) model view, reached from the keyboard: ARIA tabs move with the arrow keys
    head_tab = d.find_element(By.CSS_SELECTOR, '#%s .attn-tab[data-view="head"]' % v1)
    head_tab.send_keys(Keys.ARROW_RIGHT)
    aria = d.execute_script("""const r = document.getElementById(arguments[0]);
      return Array.from(r.querySelectorAll('.attn-tab')).map(t => { const p = document.getElementById(t.getAttribute('aria-controls'));
        return [t.getAttribute('data-view'), t.getAttribute('aria-selected'), t.getAttribute('tabindex'),
                p && p.getAttribute('role'), p && !p.hidden, document.activeElement === t]; });""", v1)
    check("(j) ARIA tabs: the arrow key selects and focuses the model view's tab, which controls its tabpanel",
          aria == [["head", "false", "-1", "tabpanel", False, False], ["model", "true", "0", "tabpanel", True, True]], aria)
    tab(v1, "model")
    msel = Select(d.find_element(By.CSS_SELECTOR, '#%s .attn-panel[data-view="model"] select' % v1))
    for att in tdoc["attentions"]:
        msel.select_by_visible_text(att["name"])
        thumbs = d.find_elements(By.CSS_SELECTOR, "#%s .attn-thumb" % v1)
        L, H = len(att["weights"]), len(att["weights"][0])
        check("(e) '%s': %d layers x %d heads = %d thumbnails" % (att["name"], L, H, L * H),
              len(thumbs) == L * H and all(t.is_displayed() for t in thumbs), len(thumbs))
    big = d.find_element(By.CSS_SELECTOR, "#%s .attn-big" % v1)
    check("(e) no large map before a click", not big.is_displayed())
    d.find_element(By.CSS_SELECTOR, '#%s .attn-thumb[data-l="1"][data-h="2"]' % v1).click()
    m = cross["weights"][1][2]
    top = max(max(r) for r in m)  # each map is shaded relative to its largest weight
    cells = d.execute_script("""return Array.from(document.querySelectorAll('#%s .attn-heat .attn-cells rect'))
          .map(r => [+r.getAttribute('data-r'), +r.getAttribute('data-c'), +r.getAttribute('fill-opacity')])""" % v1)
    name = d.find_element(By.CSS_SELECTOR, "#%s .attn-big-name" % v1).text
    check("(e) clicking cross layer 1 head 2 opens its heatmap",
          big.is_displayed() and "cross" in name and "layer 1" in name and "head 2" in name
          and len(cells) == len(m) * len(m[0]) and all(abs(w - m[i][j] / top) < 1e-9 for i, j, w in cells),
          (name, len(cells)))
    hover(d.find_element(By.CSS_SELECTOR, '#%s .attn-heat rect[data-r="3"][data-c="2"]' % v1))
    ro = d.find_element(By.CSS_SELECTOR, "#%s .attn-big-ro" % v1).text
    check("(e) hovering a cell shows its weight",
          ro == "%s → %s: %.3f" % (named(cross["rows"], 3), named(cross["cols"], 2), m[3][2]), ro)
    tip = d.execute_script("""const r = document.getElementById(arguments[0]);
      const t = r.querySelector('.attn-heat-tip'), c = r.querySelector('.attn-heat rect[data-r="3"][data-c="2"]').getBoundingClientRect();
      const b = t.getBoundingClientRect();
      return {vis: getComputedStyle(t).visibility, text: t.textContent, dy: Math.abs((b.top + b.bottom) / 2 - (c.top + c.bottom) / 2),
              dx: Math.min(Math.abs(b.left - c.right), Math.abs(b.right - c.left)),
              max: r.querySelector('.attn-scale-max') && r.querySelector('.attn-scale-max').textContent,
              bar: !!r.querySelector('.attn-scale-bar')};""", v1)
    check("(j) the hovered cell's weight shows beside the cell", tip["vis"] == "visible" and tip["text"] == "%.3f" % m[3][2]
          and tip["dy"] < 2 and tip["dx"] < 6, tip)
    check("(j) the enlarged map has a colour bar from 0 to its largest weight", tip["bar"] and tip["max"] == "%.3f" % top, tip)
    heat = d.find_element(By.CSS_SELECTOR, "#%s svg.attn-heat" % v1)
    d.execute_script("arguments[0].focus()", heat)
    heat.send_keys(Keys.ARROW_RIGHT)
    ro = d.find_element(By.CSS_SELECTOR, "#%s .attn-big-ro" % v1).text
    check("(j) the map's cells are reachable by keyboard: focus, then an arrow key reads the next cell",
          ro == "%s → %s: %.3f" % (named(cross["rows"], 3), named(cross["cols"], 3), m[3][3]), ro)
    d.execute_script("arguments[0].blur()", heat)
    hover(d.find_element(By.CSS_SELECTOR, '#%s .attn-heat rect[data-r="3"][data-c="2"]' % v1))
    shot(v1, "model.png")
    check("(e) the decoding view is unchanged by the model view", snapshot(v2) == snap2)

    # (f) the decoding slider
    steps, source = sdoc["steps"], sdoc["source"]
    unhover(v2)  # the mouse off view 1, which a scroll under it would otherwise change
    snap1 = snapshot(v1)

    def step_state():
        return d.execute_script("""const r = document.getElementById(arguments[0]);
          return {word: r.querySelector('.attn-word-tok').textContent, n: r.querySelector('.attn-step-n').textContent,
            toks: Array.from(r.querySelectorAll('.attn-bar-tok')).map(e => e.textContent),
            ws: Array.from(r.querySelectorAll('.attn-bar-w')).map(e => e.textContent),
            fills: Array.from(r.querySelectorAll('.attn-bars .attn-bar-fill')).map(e => e.style.width),
            cur: Array.from(r.querySelectorAll('.attn-w.attn-cur')).map(e => +e.getAttribute('data-k')),
            side: r.querySelector('.attn-step-side').innerText};""", v2)

    def matches(st, k):
        s = steps[k]
        return (st["word"] == s["token"] and st["toks"] == [named(source, j) for j in range(len(source))]
                and st["n"] == "%d / %d" % (k + 1, len(steps))
                and st["ws"] == ["%.3f" % w for w in s["row"]] and st["cur"] == [k]
                and all(abs(float(f.rstrip("%")) - 100 * w) < 0.1 for f, w in zip(st["fills"], s["row"]))
                and len(st["fills"]) == len(s["row"])
                and "%.3f" % s["gate"] in st["side"] and "%.3f" % s["path"] in st["side"]
                and all(b["text"] in st["side"] and "%.3f" % b["score"] in st["side"] for b in s["beam"]))

    st0 = step_state()
    check("(f) step 1 shows its word, attention row, beam, gate and path", matches(st0, 0), st0)
    slider = d.find_element(By.CSS_SELECTOR, "#%s .attn-slider" % v2)
    bold, labelled = [], []
    for k in range(len(steps)):
        d.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'))", slider, k)
        b = d.execute_script("""const r = document.getElementById(arguments[0]);
          return {bold: Array.from(r.querySelectorAll('.attn-hyp.attn-best')).map(e => [+e.getAttribute('data-i'),
                    e.querySelector('.attn-hyp-text').textContent]),
                  word: r.querySelector('.attn-word').textContent, label: r.querySelector('.attn-bars-label').textContent,
                  side: r.querySelector('.attn-step-side').innerText};""", v2)
        written = " ".join(s["token"] for s in steps[:k + 1])
        bold.append(b["bold"] == [[steps[k]["continued"], written]])
        read = steps[k - 1]["token"] if k else "<bos>"
        labelled.append(b["word"].startswith("reads %s, writes %s" % (read, steps[k]["token"]))
                        and "p = %.3f" % steps[k]["probability"] in b["word"]
                        and sdoc["steps_label"] in b["label"]
                        and all(x["token"] in b["side"] and "%.3f" % x["probability"] in b["side"] for x in steps[k]["alternatives"])
                        and "source position" in b["side"])
        if not (bold[-1] and labelled[-1]):
            print("     step %d: %s" % (k + 1, b))
    check("(j) at every step the bold beam entry is the prefix the output continues (step 4's ranks 2nd)",
          all(bold) and any(s["continued"] != 0 for s in steps), bold)
    check("(j) every step says the word it read and the word it wrote, the word's probability, what the bars are "
          "(the steps' label), the other words kept and where the alignment position lies", all(labelled), labelled)
    bars = d.execute_script("return getComputedStyle(document.querySelector('#' + arguments[0] + ' .attn-bars')).overflowY", v2)
    check("(j) the decoding bars scroll inside their box (a long source stays on screen)", bars == "auto", bars)
    d.execute_script("arguments[0].value = 0; arguments[0].dispatchEvent(new Event('input'))", slider)
    check("(f) the beam's 3 hypotheses, the gate and the path are shown",
          d.execute_script("""const r = document.getElementById(arguments[0]);
            return [r.querySelectorAll('.attn-hyp').length, !!r.querySelector('.attn-gate'), !!r.querySelector('.attn-path')]""",
                           v2) == [3, True, True])
    slider = d.find_element(By.CSS_SELECTOR, "#%s .attn-slider" % v2)
    d.execute_script("arguments[0].scrollIntoView({block: 'center'})", slider)
    # Jupyter's Bootstrap makes a range input display:block: the view's style must keep it in line.
    rows = d.execute_script("""const s = document.getElementById(arguments[0]).querySelector('.attn-slider');
      const word = document.createRange(); word.selectNodeContents(s.parentElement.firstChild);  // "step "
      const a = s.getBoundingClientRect(), b = word.getBoundingClientRect();
      return [(a.top + a.bottom) / 2, b.top, b.bottom];""", v2)
    check("(f) the slider sits on its label's line", rows[1] <= rows[0] <= rows[2], rows)
    slider.send_keys(Keys.ARROW_RIGHT)
    st1 = step_state()
    check("(f) slider +1 (arrow key): step 2's word and row shown",
          matches(st1, 1) and st1["word"] != st0["word"] and st1["ws"] != st0["ws"], st1)
    d.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'))",
                     slider, len(steps) - 1)
    stl = step_state()
    check("(f) slider to the end: the last step shown", matches(stl, len(steps) - 1), stl)
    d.find_element(By.CSS_SELECTOR, '#%s .attn-w[data-k="2"]' % v2).click()
    st2 = step_state()
    check("(f) clicking the third word written shows step 3, and moves the slider",
          matches(st2, 2) and slider.get_attribute("value") == "2", st2)
    check("(f) the Transformer view is unchanged by the slider", snapshot(v1) == snap1)
    shot(v2, "decoding.png")
    net.drain("use")
    net.drain_console()

    # (g) the network and (h) the console (tools/notebook_browser.py)
    net.check(check, "(g)", "(h)", "the explorers", args.verbose)
    return run_seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notebook", default="tests/browser/explorer.ipynb")
    ap.add_argument("--screenshots", metavar="DIR", help="write head.png, model.png, decoding.png there")
    ap.add_argument("--timeout", type=int, default=300, help="seconds for Run All")
    ap.add_argument("--verbose", "-v", action="store_true", help="print every check, not only failures")
    args = ap.parse_args()
    args.token = "attn-explorer-test"
    if args.screenshots:
        args.screenshots = os.path.abspath(args.screenshots)
        os.makedirs(args.screenshots, exist_ok=True)

    t_start = time.time()
    # Run a scratch copy so the committed notebook stays without outputs.
    work = tempfile.mkdtemp(prefix="attn-explorer-")
    shutil.copy(os.path.join(ROOT, args.notebook), work)
    env = dict(os.environ)
    env.setdefault("JUPYTER_PATH", os.path.join(ROOT, "build", "kernel", "share", "jupyter"))
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    server, port = notebook_browser.start_server(work, args.token, env)
    driver = None
    check = notebook_browser.Checks(args.verbose)
    try:
        driver = notebook_browser.chromium(
            ["--window-size=1280,1400", "--force-device-scale-factor=1"] + list(notebook_browser.BLOCKED_NETWORK),
            notebook_browser.LOGGING)
        try:
            run_seconds = run(driver, port, args, check)
        except Exception as e:  # a timeout or a missing element: one failed check, with the page's errors
            check("the test ran to its end", False, "%s: %s; console: %s" % (
                type(e).__name__, str(e).splitlines()[0] if str(e) else "",
                [x["message"][:200] for x in driver.get_log("browser") if x["level"] == "SEVERE"][:5]))
            run_seconds = float("nan")
    finally:
        if driver:
            driver.quit()
        notebook_browser.stop_server(server)
        shutil.rmtree(work, ignore_errors=True)

    total = time.time() - t_start
    if check.failed:
        print("explorer browser test: FAILED %d of %d checks (%s); Run All %.1f s, %.1f s in all" % (
            len(check.failed), len(check.failed) + check.passed, "; ".join(check.failed), run_seconds, total))
        return 1
    print("explorer browser test: %d checks passed (Run All %.1f s, %.1f s in all%s)" % (
        check.passed, run_seconds, total, "; screenshots in " + args.screenshots if args.screenshots else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
