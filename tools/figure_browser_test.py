#!/usr/bin/python3
"""The committed pictures of a notebook as a learner first sees them: a fresh clone opened in
Jupyter Notebook is untrusted, so its SVG outputs and its explorers' scripts do not run. Opens
committed notebooks (their outputs as they are, nothing executed) in headless Chromium:

  (a) untrusted (a Jupyter data folder of its own, so no notebook is trusted): every SVG picture
      of the notebook shows as an image (an <img> whose picture loaded, at least 20 px wide), and
      no output shows its text stand-in ("<svg picture>") or the raw text of a stripped <svg>;
      every explorer shows its fallback picture, an image, not a screen of text;
  (b) trusted (`jupyter trust`): every SVG picture is inline (an <svg> element with its hover
      titles), none left as an <img>;
  (c) exported with nbconvert to HTML and opened from the file: inline with scripts on, an image
      with scripts off.

    tools/figure_browser_test.py [NOTEBOOK ...]   (default: chapters 5 and 7)

Needs Debian's chromium, chromium-driver, python3-selenium and python3-nbconvert (tools/setup.sh
--with-browser) and the kernel built (the notebook page starts one); JUPYTER_PATH defaults to the
build's kernelspec. It starts its own Jupyter server on a free loopback port and stops it at the end.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import notebook_browser

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = ["notebooks/05_qkv.ipynb", "notebooks/07_multihead.ipynb"]


def wait_for(cond, timeout, what, step=0.5):
    return notebook_browser.wait_for(cond, timeout, what, step, who="figure_browser_test")


def expected(path):
    """How many SVG pictures and explorers the notebook's committed outputs hold."""
    with open(path, encoding="utf-8") as f:
        nb = json.load(f)
    svgs = explorers = 0
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            html = data.get("text/html", "")
            html = "".join(html) if isinstance(html, list) else html
            if "image/svg+xml" in data or "data-attn-svg" in html:
                svgs += 1
            if 'class="attn-explorer"' in html:
                explorers += 1
    return svgs, explorers


# What the page shows: pictures as loaded images, inline SVG pictures, text stand-ins, explorers.
LOOK = """
var root = arguments[0] ? document.querySelector(arguments[0]) : document.body;
// (the sanitiser of an untrusted notebook drops the data-attn-svg attribute: find them by their source)
var imgs = Array.from(root.querySelectorAll('img')).filter(
    i => (i.getAttribute('src') || '').indexOf('data:image/svg+xml') == 0 && !i.closest('.attn-explorer'));
var loaded = imgs.filter(i => i.complete && i.naturalWidth >= 20 && i.getBoundingClientRect().width >= 20).length;
var inline = Array.from(root.querySelectorAll('svg')).filter(s => !s.closest('.attn-explorer')
    && s.parentElement && !s.parentElement.closest('svg')).length;
var standins = Array.from(root.querySelectorAll('pre, .output_text')).filter(
    e => e.innerText.indexOf('<svg picture>') >= 0).length;
var explorers = Array.from(root.querySelectorAll('.attn-explorer')).map(function (e) {
  var fb = e.querySelector('.attn-fallback');
  var img = fb ? fb.querySelector('img') : null;
  return {picture: !!(img && img.complete && img.naturalWidth >= 20),
          text: fb ? fb.innerText.trim().length : 0, running: !fb || fb.offsetParent === null};
});
return {imgs: imgs.length, loaded: loaded, inline: inline, standins: standins, explorers: explorers};
"""


def trust(path, data_dir):
    """What `jupyter trust` does (Debian's Notebook 6 has no such command): sign it in this data folder."""
    import nbformat
    from nbformat.sign import NotebookNotary
    nb = nbformat.read(path, as_version=4)
    NotebookNotary(data_dir=data_dir).sign(nb)


def settle(driver, selector, key, want, seconds=20):
    """The page's look once look[key] reaches want, or as it is after `seconds` (images load late)."""
    end = time.time() + seconds
    while True:
        look = driver.execute_script(LOOK, selector)
        if look[key] >= want or time.time() > end:
            return look
        time.sleep(0.5)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="*", default=DEFAULT)
    args = ap.parse_args()
    env = dict(os.environ)
    env.setdefault("JUPYTER_PATH", os.path.join(ROOT, "build", "kernel", "share", "jupyter"))
    work = tempfile.mkdtemp(prefix="attn-figures-")
    env["JUPYTER_DATA_DIR"] = os.path.join(work, "data")  # its own trust database: nothing trusted
    nbdir = os.path.join(work, "notebooks")
    os.makedirs(nbdir)
    token = "attn-figure-test"
    failures = []

    def fail(what):
        failures.append(what)
        print("figure_browser_test: FAIL " + what)

    server, port = notebook_browser.start_server(nbdir, token, env=env)
    driver = None
    try:
        driver = notebook_browser.chromium(["--window-size=1280,1600"])
        for rel in args.notebooks:
            name = os.path.basename(rel)
            shutil.copy(os.path.join(ROOT, rel), os.path.join(nbdir, name))
            svgs, explorers = expected(os.path.join(nbdir, name))
            for trusted in (False, True):
                if trusted:
                    trust(os.path.join(nbdir, name), env["JUPYTER_DATA_DIR"])
                driver.get("http://127.0.0.1:%d/notebooks/%s?token=%s" % (port, name, token))
                wait_for(lambda: driver.execute_script(
                    "return window.Jupyter && Jupyter.notebook && Jupyter.notebook._fully_loaded;"), 120,
                    "%s to load" % name)
                is_trusted = driver.execute_script("return Jupyter.notebook.trusted;")
                if bool(is_trusted) != trusted:
                    fail("%s: opened %s, expected %s" % (name, "trusted" if is_trusted else "untrusted",
                                                         "trusted" if trusted else "untrusted"))
                    continue
                look = settle(driver, "#notebook", "inline" if trusted else "loaded", svgs)
                mode = "trusted" if trusted else "untrusted"
                print("figure_browser_test: %s %s: %d SVG pictures in its outputs; shown as %d loaded images, "
                      "%d inline; %d text stand-ins; explorers %s" % (
                          name, mode, svgs, look["loaded"], look["inline"], look["standins"],
                          ["picture" if e["picture"] else "text of %d chars" % e["text"] for e in look["explorers"]]))
                if look["standins"]:
                    fail("%s %s: %d outputs show the text stand-in instead of the picture" % (name, mode, look["standins"]))
                if not trusted:
                    if look["loaded"] < svgs:
                        fail("%s untrusted: %d of %d SVG pictures show as an image" % (name, look["loaded"], svgs))
                    if len(look["explorers"]) != explorers or not all(e["picture"] and e["text"] == 0
                                                                     for e in look["explorers"]):
                        fail("%s untrusted: an explorer's fallback is not a picture: %s" % (name, look["explorers"]))
                else:
                    if look["inline"] < svgs or look["imgs"]:
                        fail("%s trusted: %d of %d pictures inline, %d left as images" % (
                            name, look["inline"], svgs, look["imgs"]))
            # (c) the notebook exported to HTML, opened from the file, with scripts on and off.
            page = os.path.join(work, name.replace(".ipynb", ".html"))
            subprocess.run([sys.executable, "-m", "nbconvert", "--to", "html", "--output", page,
                            os.path.join(nbdir, name)], env=env, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            driver.get("file://" + page)
            look = settle(driver, "", "inline", svgs)
            print("figure_browser_test: %s exported, scripts on: %d inline, %d images" % (name, look["inline"], look["imgs"]))
            if look["inline"] < svgs or look["imgs"]:
                fail("%s exported: %d of %d pictures inline with scripts on" % (name, look["inline"], svgs))
        driver.quit()
        driver = notebook_browser.chromium(["--window-size=1280,1600", "--blink-settings=scriptEnabled=false"])
        for rel in args.notebooks:
            name = os.path.basename(rel)
            svgs, _ = expected(os.path.join(nbdir, name))
            driver.get("file://" + os.path.join(work, name.replace(".ipynb", ".html")))
            look = settle(driver, "", "loaded", svgs)
            print("figure_browser_test: %s exported, scripts off: %d loaded images" % (name, look["loaded"]))
            if look["loaded"] < svgs:
                fail("%s exported without scripts: %d of %d pictures show as images" % (name, look["loaded"], svgs))
    except TimeoutError as e:
        fail(str(e))
    finally:
        if driver:
            driver.quit()
        notebook_browser.stop_server(server)
        shutil.rmtree(work, ignore_errors=True)
    print("figure_browser_test: %s" % ("passed" if not failures else "FAILED (%d)" % len(failures)))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
