#!/usr/bin/python3
"""tools/quotes.py --check can fail: on a copy of the course, a changed published value,
a deleted one and a quote typed over by hand are each caught, and --write mends the text.
--moved lists a value that moved past the threshold with the places quoting it, and not one
that moved less.
Standard library and nbformat only (the kernel's packages bring it)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "quotes.py")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import quotes  # noqa: E402


def check(root, *files):
    r = subprocess.run([sys.executable, TOOL, "--check", "--root", root, *files], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def first_quoted(course):
    """A notebook, the cell holding a published value that some markdown cell of it quotes, and the name."""
    for key, (path, nb) in sorted(course.notebooks.items()):
        prose = "".join(quotes.cell_text(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
        for m in quotes.MARKER.finditer(prose):
            if ":" not in m.group(1) and m.group(1) in course.values[key]:
                return path, course.values[key][m.group(1)][1], m.group(1)
    return None


def copy_course(dst):
    shutil.copytree(os.path.join(ROOT, "notebooks"), os.path.join(dst, "notebooks"))
    shutil.copytree(os.path.join(ROOT, "docs"), os.path.join(dst, "docs"))
    shutil.copy(os.path.join(ROOT, "README.md"), dst)


def edit_output(path, cell, name, change):
    with open(path, encoding="utf-8") as f:
        nb = json.load(f)
    outs = nb["cells"][cell]["outputs"]
    for i, out in enumerate(outs):
        q = out.get("data", {}).get(quotes.MIME)
        if q is not None and q["name"] == name:
            change(outs, i, q)
            break
    with open(path, "w", encoding="utf-8") as f:
        json.dump(nb, f, indent=1, ensure_ascii=False)


failures = []


def expect(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


course = quotes.Course(ROOT)
code, out = check(ROOT)
expect(code == 0, "the committed course passes --check\n" + out[-2000:])
found = first_quoted(course)
expect(found is not None, "the course quotes at least one published value")
if found:
    path, cell, name = found
    relpath = os.path.relpath(path, ROOT)
    with tempfile.TemporaryDirectory() as tmp:
        copy_course(tmp)
        copy = os.path.join(tmp, relpath)

        def bump(outs, i, q):
            q["text"] = q["text"] + "1"
        edit_output(copy, cell, name, bump)
        code, out = check(tmp)
        expect(code == 1 and name in out and "its output" in out,
               "a changed published value fails --check, naming %s\n%s" % (name, out[-600:]))
        # --write takes the new value into the text, and --check passes again.
        subprocess.run([sys.executable, TOOL, "--write", "--root", tmp, copy], capture_output=True)
        code, out = check(tmp, copy)
        expect(code == 0, "--write brings the text to the changed value\n" + out[-600:])

    with tempfile.TemporaryDirectory() as tmp:
        copy_course(tmp)
        copy = os.path.join(tmp, relpath)
        edit_output(copy, cell, name, lambda outs, i, q: outs.pop(i))
        code, out = check(tmp)
        expect(code == 1 and "publishes no value named " + name in out,
               "a deleted published value fails --check, naming %s\n%s" % (name, out[-600:]))

    with tempfile.TemporaryDirectory() as tmp:
        copy_course(tmp)
        copy = os.path.join(tmp, relpath)
        with open(copy, encoding="utf-8") as f:
            text = f.read()
        marker = "<!--q %s-->" % name
        at = text.index(marker) + len(marker)
        with open(copy, "w", encoding="utf-8") as f:
            f.write(text[:at] + "9" + text[at:])  # a number typed over the quote by hand
        code, out = check(tmp)
        expect(code == 1 and name in out, "a quote edited by hand fails --check\n" + out[-600:])

# --moved: the published numbers are read as written, superscript powers of ten included.
expect(quotes.quoted_number("4 × 10⁻¹⁶") == 4e-16, "'4 × 10⁻¹⁶' reads as 4e-16")
expect(quotes.quoted_number("1,234") == 1234 and quotes.quoted_number("5.6%") == 5.6,
       "'1,234' reads as 1234 and '5.6%' as 5.6")
expect(quotes.quoted_number("dot") is None, "a text without a number reads as none")
if found:
    path, cell, name = found
    relpath = os.path.relpath(path, ROOT)
    key = quotes.notebook_key(path, ROOT)
    with tempfile.TemporaryDirectory() as old, tempfile.TemporaryDirectory() as new:
        copy_course(old)
        copy_course(new)

        def set_text(text):
            return lambda outs, i, q: q.update(text=text)
        # The same value is 100 in the old copy; in the new one 101 (1%, under the threshold), then 130.
        edit_output(os.path.join(old, relpath), cell, name, set_text("100"))
        edit_output(os.path.join(new, relpath), cell, name, set_text("101"))

        def moved(*extra):
            r = subprocess.run([sys.executable, TOOL, "--moved", old, "--root", new, *extra],
                               capture_output=True, text=True)
            return r.returncode, r.stdout + r.stderr
        code, out = moved()
        expect(code == 0 and "%s %s:" % (key, name) not in out,
               "--moved leaves out a value that moved by 1%%\n%s" % out[-600:])
        code, out = moved("--by", "0.005")
        expect(code == 0 and "%s %s: 100 -> 101" % (key, name) in out,
               "--moved --by 0.005 lists a value that moved by 1%%\n%s" % out[-600:])
        edit_output(os.path.join(new, relpath), cell, name, set_text("130"))
        code, out = moved()
        expect(code == 0 and "%s %s: 100 -> 130" % (key, name) in out and " cell " in out,
               "--moved lists a value that moved by 30%%, with the cell quoting it\n%s" % out[-600:])
        code, out = moved("--by", "0")
        expect(code == 2 and "--by" in out, "--moved refuses --by 0\n" + out[-600:])

sys.exit(1 if failures else 0)
