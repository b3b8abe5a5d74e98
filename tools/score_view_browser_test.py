#!/usr/bin/python3
"""The score view in a live notebook: Jupyter Notebook with the course's kernel,
tests/browser/score_view.ipynb (a dot-product view with a mask and values, and an additive
view from an nn::AdditiveScore, both from fixed tensors) opened in headless Chromium,
Cell > Run All, then the two views driven with the mouse and the keyboard and checked in the DOM
against the documents the outputs carry:

  (a) both views rendered: fallback image removed, no error line, title and query buttons as
      their documents say, the first query shown the one the document names
  (b) every key's row shows that query's numbers to 4 significant digits: the score, the
      scaled score, the masked score ("−∞" exactly where the mask blocks) and the weight; as
      many k and product cells as the vectors have numbers, and each product cell coloured
  (c) clicking a query button, and the arrow keys, choose the query, and the rows follow
  (d) hovering a key highlights its row only and the readout gives its numbers; hovering a
      cell gives q_i, k_i and their product (additive: W q, U k, tanh and v_a); the other view
      does not change
  (e) the network (tools/notebook_browser.py): every non-loopback host unresolvable and a dead
      proxy; no request made by a notebook output, none while the views were used; a fetch of
      example.com fails
  (f) no console error from the views, and no "Javascript error adding output"
  (g) untrusted: each output's HTML passed through Jupyter's own sanitiser (tools/notebook_browser.py)
      shows the weights as an <img> that loads, with an alt text, and no raw SVG text

    tools/score_view_browser_test.py [--notebook tests/browser/score_view.ipynb]
                                     [--screenshots DIR] [--verbose]

--screenshots DIR writes score-view.png and score-view-additive.png, each cropped to its view, with
the output area narrowed to about 560 px. Needs Debian's chromium, chromium-driver and
python3-selenium (tools/setup.sh --with-browser) and the kernel built; JUPYTER_PATH defaults to
the build's kernelspec. It starts its own Jupyter server on a free loopback port and stops it.
"""
import argparse
import base64
import os
import shutil
import sys
import tempfile
import time

import notebook_browser

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def wait_for(cond, timeout, what, step=0.5):
    return notebook_browser.wait_for(cond, timeout, what, step, who="score view browser test")


def fmt(x):
    """score_view.js's numbers: 4 significant digits, exponent form outside [1e-3, 1e4)."""
    if x is None:
        return "–"
    if x == 0:
        return "0"
    if 1e-3 <= abs(x) < 1e4:
        return ("%#.4g" % x).rstrip(".")  # toPrecision(4) writes 1234, not "1234."
    mantissa, exponent = ("%.3e" % x).split("e")
    return "%se%s%d" % (mantissa, "-" if exponent[0] == "-" else "+", abs(int(exponent)))


# What a view shows: the chosen query, and per key row its numbers, cells and state.
STATE = """
const r = document.getElementById(arguments[0]);
const text = (e) => e ? e.textContent : null;
return {
  pressed: Array.from(r.querySelectorAll('button.attn-sv-q')).filter(b => b.getAttribute('aria-pressed') === 'true').map(b => +b.getAttribute('data-t')),
  buttons: Array.from(r.querySelectorAll('button.attn-sv-q span')).map(text),
  qcells: r.querySelectorAll('.attn-sv-qrow .attn-sv-c[data-what="q"]').length,
  rows: Array.from(r.querySelectorAll('tr.attn-sv-key')).map(tr => ({
    j: +tr.getAttribute('data-j'),
    score: text(tr.querySelector('[data-col="score"]')), scaled: text(tr.querySelector('[data-col="scaled"]')),
    masked: text(tr.querySelector('[data-col="masked"]')), weight: text(tr.querySelector('.attn-sv-w')),
    k: tr.querySelectorAll('.attn-sv-c[data-what="k"]').length,
    product: Array.from(tr.querySelectorAll('.attn-sv-c[data-what="product"]')).map(c => c.style.background),
    hidden: tr.querySelectorAll('.attn-sv-c[data-what="hidden"]').length,
    blocked: tr.classList.contains('attn-sv-blocked'), hot: tr.classList.contains('attn-sv-hot')})),
  readout: text(r.querySelector('.attn-sv-readout'))};
"""


def expected_rows(doc, t):
    rows = []
    for j in range(len(doc["keys"])):
        off = bool(doc.get("mask") and doc["mask"][t][j])
        rows.append({"j": j, "score": fmt(doc["scores"][t][j]),
                     "scaled": fmt(doc["scaled"][t][j]) if doc["kind"] == "dot" else None,
                     "masked": "−∞" if off else fmt(doc["scaled"][t][j]), "weight": fmt(doc["weights"][t][j]),
                     "blocked": off})
    return rows


def shown_rows(state):
    return [{k: r[k] for k in ("j", "score", "scaled", "masked", "weight", "blocked")} for r in state["rows"]]


def run(driver, port, args, check):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    d = driver
    origin = "http://127.0.0.1:%d" % port
    net = notebook_browser.Network(d, port)  # every request, by phase, and SEVERE console messages

    def state(vid):
        return d.execute_script(STATE, vid)

    def snapshot(vid):
        return d.execute_script("return document.getElementById(arguments[0]).innerHTML", vid)

    def hover(elem):
        d.execute_script("arguments[0].scrollIntoView({block: 'center'})", elem)
        ActionChains(d).move_to_element(elem).perform()

    def shot(vid, name):
        if not args.screenshots:
            return
        elem = d.find_element(By.ID, vid)
        box = d.execute_script("const b = arguments[0].getBoundingClientRect(); return [b.left, b.top, b.width, b.height];", elem)
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
    net.severe.clear()  # what Jupyter says while it loads is not the views'
    if args.screenshots:  # an output area of about 560 px, the narrow case the view is laid out for
        d.execute_script("document.getElementById('notebook-container').style.width = '722px';")
    d.execute_script("Jupyter.notebook.clear_all_output(); Jupyter.notebook.execute_all_cells();")
    wait_for(lambda: d.execute_script(
        "var cells = Jupyter.notebook.get_cells().filter(c => c.cell_type == 'code');"
        "var pending = cells.filter(c => c.input_prompt_number === '*' || c.input_prompt_number == null);"
        "return pending.length == 0 && !Jupyter.notebook.kernel_busy;"), args.timeout, "Run All", step=1.0)
    time.sleep(0.5)  # let the last output's script run
    net.drain("run")
    errors = d.execute_script(
        "return Jupyter.notebook.get_cells().filter(c => c.cell_type == 'code')"
        ".map(c => c.output_area.outputs.filter(o => o.output_type == 'error').map(o => o.ename + ': ' + o.evalue))"
        ".reduce((a, b) => a.concat(b), []);")
    if not check("every cell ran without an error", not errors, errors):
        return
    docs = [notebook_browser.output_doc(h, "attnScoreView") for h in d.execute_script(notebook_browser.docs_script("attnScoreView"))]
    if not check("two score view outputs", len(docs) == 2, [doc.get("title") for doc in docs]):
        return
    ddoc, adoc = docs
    check("the first is a dot-product view with a mask and values, the second additive",
          ddoc["kind"] == "dot" and ddoc.get("mask") and ddoc.get("v") and adoc["kind"] == "additive",
          (ddoc["kind"], adoc["kind"]))

    # (a) both views rendered
    page = d.execute_script("""
      return {views: Array.from(document.querySelectorAll('.output_area .attn-score-view')).map(e => e.id),
              fallbacks: document.querySelectorAll('.output_area .attn-sv-fallback').length,
              errors: document.querySelectorAll('.output_area .attn-sv-error').length,
              jserrors: Array.from(document.querySelectorAll('.output_area')).map(e => e.innerText)
                          .filter(t => t.includes('Javascript error adding output')),
              area: (document.querySelector('.output_subarea') || {}).clientWidth};""")
    check("(a) the page shows the two views, in order", page["views"] == [ddoc["id"], adoc["id"]], page["views"])
    check("(a) fallback images removed, no error line, no 'Javascript error adding output'",
          page["fallbacks"] == 0 and page["errors"] == 0 and not page["jserrors"], page)
    for doc in docs:
        st = state(doc["id"])
        title = d.find_element(By.CSS_SELECTOR, "#%s .attn-sv-title" % doc["id"]).text
        check("(a) %s: title, query buttons and first query as the document says" % doc["kind"],
              title == doc["title"] and st["buttons"] == doc["queries"] and st["pressed"] == [doc["query"]],
              (title, st["buttons"], st["pressed"]))
        # (b) the rows of the first query
        t = doc["query"]
        dim = len(doc["q"][0])
        check("(b) %s, query %d: every key's score, scaled score, mask and weight, to 4 significant digits"
              % (doc["kind"], t), shown_rows(st) == expected_rows(doc, t), (shown_rows(st), expected_rows(doc, t)))
        check("(b) %s: %d cells per vector (q, k, products%s), product cells coloured" % (
              doc["kind"], dim, ", hidden" if doc["kind"] == "additive" else ""),
              st["qcells"] == dim and all(r["k"] == dim and len(r["product"]) == dim and
                                          (doc["kind"] == "dot" or r["hidden"] == dim) for r in st["rows"])
              and any(c not in ("", "transparent") for r in st["rows"] for c in r["product"]), st["rows"][:1])
    blocked = [j for j in range(len(ddoc["keys"])) if ddoc["mask"][ddoc["query"]][j]]
    check("(b) the dot view's first query has blocked keys, shown as −∞ with weight 0",
          blocked and all(state(ddoc["id"])["rows"][j]["masked"] == "−∞" and ddoc["weights"][ddoc["query"]][j] == 0
                          for j in blocked), blocked)

    # (g) untrusted: each output's HTML through Jupyter's own sanitiser, as an untrusted notebook's
    san = d.execute_async_script(notebook_browser.SANITISED, d.execute_script(notebook_browser.docs_script("attnScoreView")))
    check("(g) sanitised like an untrusted notebook, each view shows its weights as an <img> that loads, with an "
          "alt text, and no raw SVG text", isinstance(san, list) and len(san) == 2 and all(
              len(o["imgs"]) == 1 and o["imgs"][0][0] > 100 and o["imgs"][0][1] > 50 and o["imgs"][0][3] > 100
              and o["imgs"][0][2].startswith("attention weights") and o["svgs"] == 0 and o["scripts"] == 0
              and len(o["text"]) < 40 for o in san), san)

    # (c) choosing the query: a click, then the arrow keys
    vid = ddoc["id"]
    snap_a = snapshot(adoc["id"])
    d.find_element(By.CSS_SELECTOR, '#%s button.attn-sv-q[data-t="4"]' % vid).click()
    st = state(vid)
    check("(c) clicking query 4 shows its rows", st["pressed"] == [4] and shown_rows(st) == expected_rows(ddoc, 4),
          (st["pressed"], shown_rows(st)))
    ui = d.find_element(By.CSS_SELECTOR, "#%s .attn-sv-ui" % vid)
    ui.send_keys(Keys.ARROW_LEFT)
    st = state(vid)
    check("(c) the left arrow key moves to query 3", st["pressed"] == [3] and shown_rows(st) == expected_rows(ddoc, 3),
          st["pressed"])
    ui.send_keys(Keys.HOME)
    check("(c) Home moves to query 0", state(vid)["pressed"] == [0])
    d.find_element(By.CSS_SELECTOR, '#%s button.attn-sv-q[data-t="1"]' % vid).click()

    # (d) hovering a key, then a cell
    t, j, i = 1, 2, 3
    hover(d.find_element(By.CSS_SELECTOR, '#%s tr.attn-sv-key[data-j="%d"] [data-col="score"]' % (vid, j)))
    st = state(vid)
    want = 'query "%s" @%d · key "%s" @%d: score %s, scaled %s, weight %s' % (
        ddoc["queries"][t], t, ddoc["keys"][j], j, fmt(ddoc["scores"][t][j]), fmt(ddoc["scaled"][t][j]),
        fmt(ddoc["weights"][t][j]))
    check("(d) hovering key %d highlights its row only and reads out its numbers" % j,
          [r["j"] for r in st["rows"] if r["hot"]] == [j] and st["readout"] == want, (st["readout"], want))
    hover(d.find_element(By.CSS_SELECTOR, '#%s tr.attn-sv-key[data-j="%d"] .attn-sv-c[data-what="product"][data-i="%d"]'
                         % (vid, j, i)))
    q_i, k_i = ddoc["q"][t][i], ddoc["k"][j][i]
    want_cell = want + " · i = %d: q_i = %s, k_i = %s, q_i × k_i = %s" % (i, fmt(q_i), fmt(k_i), fmt(q_i * k_i))
    ro = state(vid)["readout"]
    check("(d) hovering product cell %d reads out q_i, k_i and q_i × k_i" % i, ro == want_cell, (ro, want_cell))
    shot(vid, "score-view.png")
    check("(d) the additive view is unchanged by the dot view", snapshot(adoc["id"]) == snap_a)

    av = adoc["id"]
    hover(d.find_element(By.CSS_SELECTOR, "#%s .attn-sv-title" % av))  # the mouse leaves the dot view first
    snap_d = snapshot(vid)
    t, j, i = 1, 3, 2
    d.find_element(By.CSS_SELECTOR, '#%s button.attn-sv-q[data-t="%d"]' % (av, t)).click()
    hover(d.find_element(By.CSS_SELECTOR, '#%s tr.attn-sv-key[data-j="%d"] .attn-sv-c[data-what="hidden"][data-i="%d"]'
                         % (av, j, i)))
    h = adoc["hidden"][t][j][i]
    want = ('query "%s" @%d · key "%s" @%d: score %s, weight %s · i = %d: (W q)_i = %s, v_a,i = %s, (U k)_i = %s, '
            'tanh = %s, v_a,i × tanh = %s') % (
        adoc["queries"][t], t, adoc["keys"][j], j, fmt(adoc["scores"][t][j]), fmt(adoc["weights"][t][j]), i,
        fmt(adoc["q"][t][i]), fmt(adoc["va"][i]), fmt(adoc["k"][j][i]), fmt(h), fmt(adoc["va"][i] * h))
    st = state(av)
    check("(d) additive, query %d: rows follow, and hovering key %d's hidden cell %d reads out W q, U k, tanh, v_a"
          % (t, j, i), shown_rows(st) == expected_rows(adoc, t) and st["readout"] == want, (st["readout"], want))
    padded = [r for r in st["rows"] if r["blocked"]]
    check("(d) additive: the padding key is blocked (−∞)", [r["j"] for r in padded] == [4], padded)
    shot(av, "score-view-additive.png")
    check("(d) the dot view is unchanged by the additive view", snapshot(vid) == snap_d)
    if args.screenshots:
        print("output area: %s px wide" % page["area"])
    net.drain("use")
    net.drain_console()

    # (e) the network and (f) the console (tools/notebook_browser.py)
    net.check(check, "(e)", "(f)", "the score views", args.verbose)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notebook", default="tests/browser/score_view.ipynb")
    ap.add_argument("--screenshots", metavar="DIR", help="write score-view.png and score-view-additive.png there")
    ap.add_argument("--timeout", type=int, default=300, help="seconds for Run All")
    ap.add_argument("--verbose", "-v", action="store_true", help="print every check, not only failures")
    args = ap.parse_args()
    args.token = "attn-score-view-test"
    if args.screenshots:
        args.screenshots = os.path.abspath(args.screenshots)
        os.makedirs(args.screenshots, exist_ok=True)
    t_start = time.time()
    work = tempfile.mkdtemp(prefix="attn-score-view-")  # a scratch copy: the committed notebook keeps no outputs
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
            run(driver, port, args, check)
        except Exception as e:  # a timeout or a missing element: one failed check, with the page's errors
            check("the test ran to its end", False, "%s: %s; console: %s" % (
                type(e).__name__, str(e).splitlines()[0] if str(e) else "",
                [x["message"][:200] for x in driver.get_log("browser") if x["level"] == "SEVERE"][:5]))
    finally:
        if driver:
            driver.quit()
        notebook_browser.stop_server(server)
        shutil.rmtree(work, ignore_errors=True)
    total = time.time() - t_start
    if check.failed:
        print("score view browser test: FAILED %d of %d checks (%s); %.1f s" % (
            len(check.failed), len(check.failed) + check.passed, "; ".join(check.failed), total))
        return 1
    print("score view browser test: %d checks passed (%.1f s%s)" % (
        check.passed, total, "; screenshots in " + args.screenshots if args.screenshots else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
