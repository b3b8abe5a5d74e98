#!/usr/bin/python3
"""The chapter pages' figures (docs/figures/ch*.svg) are copies of notebook outputs.

docs/figures/sources.json names, for each figure, the notebook, the cell (its id)
and which SVG output of that cell it is. After a notebook is re-run:

    /usr/bin/python3 tools/figures.py --write    copy every figure from its notebook output
    /usr/bin/python3 tools/figures.py --check    exit 1, naming each figure that differs
                                                 from its notebook output, and each notebook
                                                 output an untrusted notebook would show as
                                                 text instead of a picture (a meson test)

so a page never shows a figure from an older run than the numbers beside it.
Standard library only.
"""
import argparse
import base64
import json
import re
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIGURES = os.path.join(ROOT, "docs", "figures")
SOURCES = os.path.join(FIGURES, "sources.json")


def svg_output(notebook, cell_id, index):
    """The index-th SVG output of the cell with this id, or raise ValueError saying what is missing."""
    with open(os.path.join(ROOT, notebook), encoding="utf-8") as f:
        cells = json.load(f)["cells"]
    cell = next((c for c in cells if c.get("id") == cell_id), None)
    if cell is None:
        raise ValueError("%s has no cell with id %s" % (notebook, cell_id))
    svgs = [svg for o in cell.get("outputs", []) for svg in [output_svg(o.get("data", {}))] if svg is not None]
    if index >= len(svgs):
        raise ValueError("%s cell %s has %d SVG outputs, not %d" % (notebook, cell_id, len(svgs), index + 1))
    return svgs[index].rstrip("\n") + "\n"


# viz/display.hpp shows an SVG picture as text/html: an <img> with the SVG as a base64 data URI
# (the one part of the output an untrusted notebook keeps) and a script that inlines it.
SVG_IMG = re.compile(r'<img data-attn-svg="1"[^>]* src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]*)"')


def output_svg(data):
    """The SVG picture of one output's data: its image/svg+xml, or the data URI of a picture
    viz/display.hpp wrote as text/html; None for any other output."""
    def text(v):
        return "".join(v) if isinstance(v, list) else v
    if "image/svg+xml" in data:
        return text(data["image/svg+xml"])
    m = SVG_IMG.match(text(data.get("text/html", "")))
    return base64.b64decode(m.group(1)).decode("utf-8") if m else None


def untrusted_problems():
    """Every committed notebook output an untrusted notebook (a fresh clone opened in Jupyter) would
    show as text instead of a picture: an image/svg+xml output, which Jupyter does not render untrusted."""
    found = []
    for folder in ("notebooks", os.path.join("notebooks", "solutions")):
        for name in sorted(os.listdir(os.path.join(ROOT, folder))):
            if not name.endswith(".ipynb"):
                continue
            rel = os.path.join(folder, name)
            with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
                cells = json.load(f)["cells"]
            bare = sum(1 for c in cells for o in c.get("outputs", []) if "image/svg+xml" in o.get("data", {}))
            if bare:
                found.append("%s: %d SVG outputs an untrusted notebook shows as text (re-run it: viz/display.hpp "
                             "now writes them as an <img>)" % (rel, bare))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="copy every figure from its notebook output")
    mode.add_argument("--check", action="store_true", help="exit 1 if a figure differs from its notebook output")
    args = ap.parse_args()
    with open(SOURCES, encoding="utf-8") as f:
        sources = json.load(f)
    problems, written = [], 0
    for name, src in sorted(sources.items()):
        path = os.path.join(FIGURES, name)
        try:
            want = svg_output(src["notebook"], src["cell"], src["svg"])
        except (OSError, ValueError, KeyError) as e:
            problems.append("%s: its source is gone: %s" % (name, e))
            continue
        have = None
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                have = f.read()
        if have == want:
            continue
        if args.write:
            tmp = path + ".tmp%d" % os.getpid()
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(want)
            os.replace(tmp, path)  # atomic: an interrupted run leaves the old figure whole
            written += 1
        else:
            state = "missing" if have is None else "differs from its source"
            problems.append("%s: %s, %s cell %s (run tools/figures.py --write)" % (name, state, src["notebook"], src["cell"]))
    listed = set(sources)
    for name in sorted(os.listdir(FIGURES)):
        if name.startswith("ch") and name.endswith(".svg") and name not in listed:
            problems.append("%s: not in docs/figures/sources.json, so nothing keeps it fresh" % name)
    stale = len(problems)
    if args.check:
        problems += untrusted_problems()
    for p in problems:
        print("figures: " + p, file=sys.stderr)
    if args.write:
        print("figures: %d written, %d already fresh" % (written, len(sources) - written - stale))
    else:
        print("figures: %d of %d fresh; %d notebooks with SVG outputs an untrusted notebook shows as text"
              % (len(sources) - stale, len(sources), len(problems) - stale))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
