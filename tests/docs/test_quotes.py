#!/usr/bin/python3
"""tools/quotes.py --check can fail: on a copy of the course, a changed published value,
a deleted one and a quote typed over by hand are each caught, and --write mends the text.
--moved lists a value that moved past the threshold with the places quoting it, and not one
that moved less, from a directory or a git revision, and names what it could not compare.
Standard library and nbformat only (the kernel's packages bring it)."""
import glob
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

# --moved: a published text is read as one number, as viz/quote.hpp writes it, or else as text.
expect(quotes.quoted_number("4 × 10⁻¹⁶") == 4e-16 and quotes.quoted_number("2.2 × 10⁰") == 2.2,
       "'4 × 10⁻¹⁶' reads as 4e-16 and '2.2 × 10⁰' as 2.2")
expect(quotes.quoted_number("1,234") == 1234 and quotes.quoted_number("5.6%") == 5.6
       and quotes.quoted_number("-1.000") == -1, "'1,234' reads as 1234, '5.6%' as 5.6 and '-1.000' as -1")
expect([quotes.quoted_number(t) for t in ("dot", "layer 1, head 0", "0 and 2", "proc.5")] == [None] * 4,
       "a word, or a text with a number inside, reads as no number")
# Moved: by more than the fraction of the old value; from 0, any change; a text, when it changed.
cases = [("100", "116", True), ("100", "114", False), ("-1.000", "-1.200", True), ("-1.000", "-1.100", False),
         ("1,256", "1,300", False), ("0", "0.000", False), ("0", "2.2 × 10⁻¹⁶", True),
         ("above", "below", True), ("layer 1, head 2", "layer 1, head 0", True), ("passes", "passes", False)]
wrong = [(a, b) for a, b, want in cases if quotes.has_moved(a, b, 0.15) != want]
expect(not wrong, "has_moved at 15%%: wrong for %s" % wrong)
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

        def moved(old_arg, *extra):
            r = subprocess.run([sys.executable, TOOL, "--moved", old_arg, "--root", new, *extra],
                               capture_output=True, text=True)
            return r.returncode, r.stdout + r.stderr
        code, out = moved(old)
        expect(code == 0 and "%s %s:" % (key, name) not in out,
               "--moved leaves out a value that moved by 1%%\n%s" % out[-600:])
        code, out = moved(old, "--by", "0.005")
        expect(code == 0 and "%s %s: 100 -> 101" % (key, name) in out,
               "--moved --by 0.005 lists a value that moved by 1%%\n%s" % out[-600:])
        edit_output(os.path.join(new, relpath), cell, name, set_text("130"))
        code, out = moved(old)
        expect(code == 0 and "%s %s: 100 -> 130" % (key, name) in out and relpath + " cell " in out,
               "--moved lists a value that moved by 30%%, with its notebook's cell quoting it\n%s" % out[-600:])
        # A chapter page quoting the value by its bare name is listed too.
        pages = []
        for pg in glob.glob(os.path.join(ROOT, "docs", "chapters", key[:2] + "-*.md")) if "/" not in key else []:
            with open(pg, encoding="utf-8") as f:
                if "<!--q %s-->" % name in f.read():
                    pages.append(os.path.relpath(pg, ROOT))
        expect(all(pg + ":" in out for pg in pages),
               "--moved lists the chapter pages quoting it, %s\n%s" % (pages, out[-600:]))
        code, out = moved(old, "--by", "0")
        expect(code == 2 and "--by" in out, "--moved refuses --by 0\n" + out[-600:])
        # A notebook only on one side is named as not compared; a directory without notebooks is refused.
        gone = sorted(quotes.notebook_paths(old))[-1]
        os.remove(gone)
        code, out = moved(old)
        expect(code == 0 and "notebooks only here: " in out and quotes.notebook_key(gone, old) in out,
               "--moved names a notebook that OLD lacks\n" + out[-600:])
        code, out = moved(os.path.join(old, "notebooks"))
        expect(code == 2 and "holds no notebooks" in out, "--moved refuses a directory without notebooks/\n" + out)
        # A git revision: the copy committed with 100, then 130 in the work tree, read from another directory.
        if shutil.which("git"):
            def git(*args):
                subprocess.run(["git", "-C", new, "-c", "user.name=t", "-c", "user.email=t@t",
                                "-c", "commit.gpgsign=false", *args],
                               capture_output=True, check=True)
            edit_output(os.path.join(new, relpath), cell, name, set_text("100"))
            git("init", "-q")
            git("add", "-A")
            git("commit", "-q", "-m", "old")
            edit_output(os.path.join(new, relpath), cell, name, set_text("130"))
            code, out = moved("HEAD")
            expect(code == 0 and "%s %s: 100 -> 130" % (key, name) in out and "1 published value of " in out,
                   "--moved HEAD lists the one value changed since the commit\n" + out[-600:])
            code, out = moved("no-such-branch")
            expect(code == 2 and "neither a directory nor a git revision" in out,
                   "--moved refuses a name that is neither a directory nor a revision\n" + out)

sys.exit(1 if failures else 0)
