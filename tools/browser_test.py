#!/usr/bin/python3
"""A learner's first minutes, in a real browser: Jupyter Notebook with the course's
kernel, chapter 0 opened in headless Chromium, Cell > Run All, and a look at what
renders. Passes when every code cell ran without an error, an SVG (a graph or a
plot) and an HTML tensor table are on the page. Saves a screenshot.

    tools/browser_test.py [--notebook notebooks/00_autograd.ipynb]
                          [--screenshot docs/figures/notebook-chapter0.png]

Needs Debian's chromium, chromium-driver and python3-selenium
(tools/setup.sh --with-browser), and the kernel registered (tools/notebooks.sh --register-only).
It starts its own Jupyter server on a free loopback port and stops it at the end.
"""
import argparse
import os
import shutil
import sys
import tempfile
import time

import notebook_browser

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def wait_for(cond, timeout, what, step=0.5):
    return notebook_browser.wait_for(cond, timeout, what, step, who="browser_test")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notebook", default="notebooks/00_autograd.ipynb")
    ap.add_argument("--screenshot", default="docs/figures/notebook-chapter0.png")
    ap.add_argument("--timeout", type=int, default=600, help="seconds for Run All")
    args = ap.parse_args()

    # Run a scratch copy so the committed notebook (and its outputs) stay as they are.
    work = tempfile.mkdtemp(prefix="attn-browser-")
    nbdir = os.path.join(work, "notebooks")
    shutil.copytree(os.path.join(ROOT, "notebooks"), nbdir)
    name = os.path.basename(args.notebook)
    # The notebooks find the library and docs relative to their folder.
    for link in ("build", "core", "nn", "models", "viz", "attn.hpp", "docs", "kernel"):
        if os.path.exists(os.path.join(ROOT, link)):
            os.symlink(os.path.join(ROOT, link), os.path.join(work, link))

    token = "attn-browser-test"
    server, port = notebook_browser.start_server(nbdir, token)
    driver = None
    try:
        driver = notebook_browser.chromium(["--window-size=1280,1600"])
        driver.get("http://127.0.0.1:%d/notebooks/%s?token=%s" % (port, name, token))
        wait_for(lambda: driver.execute_script(
            "return window.Jupyter && Jupyter.notebook && Jupyter.notebook.kernel"
            " && Jupyter.notebook.kernel.is_connected();"), 120, "the kernel to connect")
        t0 = time.time()
        driver.execute_script("Jupyter.notebook.clear_all_output(); Jupyter.notebook.execute_all_cells();")

        def done():
            return driver.execute_script(
                "var cells = Jupyter.notebook.get_cells().filter(c => c.cell_type == 'code');"
                "var pending = cells.filter(c => c.input_prompt_number === '*' || c.input_prompt_number == null);"
                "return pending.length == 0 && !Jupyter.notebook.kernel_busy;")
        wait_for(done, args.timeout, "Run All to finish", step=1.0)
        seconds = time.time() - t0
        errors = driver.execute_script(
            "return Jupyter.notebook.get_cells().filter(c => c.cell_type == 'code')"
            ".map(c => c.output_area.outputs.filter(o => o.output_type == 'error').map(o => o.ename + ': ' + o.evalue))"
            ".reduce((a, b) => a.concat(b), []);")
        svgs = len(driver.find_elements("css selector", ".output_subarea svg"))
        tables = len(driver.find_elements("css selector", ".output_html table"))
        # Scroll to the first rendered picture, so the screenshot shows what a learner sees.
        driver.execute_script(
            "var s = document.querySelector('.output_html table');"
            "if (s) s.scrollIntoView({block: 'start'}); window.scrollBy(0, -200);")
        time.sleep(1)
        os.makedirs(os.path.dirname(os.path.join(ROOT, args.screenshot)), exist_ok=True)
        driver.save_screenshot(os.path.join(ROOT, args.screenshot))
        print("browser_test: %s ran in %.1f s in Chromium: %d errors, %d SVG pictures, %d HTML tables;"
              " screenshot %s" % (name, seconds, len(errors), svgs, tables, args.screenshot))
        for e in errors:
            print("    error: " + e[:300])
        ok = not errors and svgs > 0 and tables > 0
        print("browser_test: %s" % ("passed" if ok else "FAILED"))
        return 0 if ok else 1
    finally:
        if driver:
            driver.quit()
        notebook_browser.stop_server(server)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
