#!/usr/bin/python3
"""tools/quotes.py --check holds claims to their verdicts, and can fail: on a copy of the course, a
chapter notebook gets a cell publishing verdicts as viz/compare.hpp's compare() does, and claims in
its markdown, its chapter page and README.md. The correct claims pass; a flipped verdict, a direction
asserted on 'within noise' or 'one run; no comparison', a claim naming nothing, a claim on a value
that is no verdict and a broken marker each fail. --comparatives counts words outside claims only.
Standard library only."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "quotes.py")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import quotes  # noqa: E402

CHAPTER = "03_luong"  # any chapter notebook with a page; the claims are added to a copy
NB = os.path.join("notebooks", CHAPTER + ".ipynb")
PAGE = os.path.join("docs", "chapters", "03-luong.md")

# What compare() and compare_timings() publish (viz/compare.hpp's mime_bundle_repr).
VERDICTS = {
    "claims_test.aer": ("lower", "paired over 3 seeds: mean a−b = -0.04, 2 SE = 0.01, a−b < 0 on 3 of 3 seeds"),
    "claims_test.bleu": ("within noise", "ranges over 3 and 3 runs: a [20.1, 21.3], b [20.9, 22] overlap"),
    "claims_test.one": ("one run; no comparison", "1 run(s) of a, 1 of b: fewer than 3 on a side"),
    "claims_test.time": ("faster", "best of k=5: a 1 s (median 1.02 s), b 1.2 s (median 1.22 s)"),
}
CLAIMS_NB = ("Markov's <!--claim claims_test.aer: lower-->alignment error is lower than the plain model's\n"
             "on every seed<!--/claim-->, and <!--claim claims_test.bleu: within noise-->their BLEU scores\n"
             "are within noise<!--/claim-->; <!--claim claims_test.one: one run; no comparison-->one run\n"
             "each, so no comparison is drawn<!--/claim-->.")
CLAIM_PAGE = "\nTiled attention <!--claim claims_test.time: faster-->is faster at this length<!--/claim-->.\n"
CLAIM_README = "\nOne <!--claim %s:claims_test.aer: lower-->lower alignment error<!--/claim-->.\n" % CHAPTER


def check(root, *args):
    r = subprocess.run([sys.executable, TOOL, "--check", "--root", root, *args], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def make_course(dst, verdicts=VERDICTS, claims_nb=CLAIMS_NB):
    """A copy of the course whose chapter notebook publishes `verdicts` and claims them."""
    shutil.copytree(os.path.join(ROOT, "notebooks"), os.path.join(dst, "notebooks"))
    shutil.copytree(os.path.join(ROOT, "docs"), os.path.join(dst, "docs"))
    shutil.copy(os.path.join(ROOT, "README.md"), dst)
    path = os.path.join(dst, NB)
    with open(path, encoding="utf-8") as f:
        nb = json.load(f)
    outputs = [{"output_type": "display_data", "metadata": {},
                "data": {"text/plain": "%s = %s\n  %s" % (name, word, rule),
                         quotes.MIME: {"name": name, "text": word, "rule": rule}}}
               for name, (word, rule) in verdicts.items()]
    nb["cells"].append({"cell_type": "code", "execution_count": 1, "id": "claims-test-code", "metadata": {},
                        "outputs": outputs, "source": ["// compare(...) for each verdict"]})
    nb["cells"].append({"cell_type": "markdown", "id": "claims-test-prose", "metadata": {},
                        "source": claims_nb.splitlines(True)})
    with open(path, "w", encoding="utf-8") as f:
        json.dump(nb, f, indent=1, ensure_ascii=False)
    for rel, text in ((PAGE, CLAIM_PAGE), ("README.md", CLAIM_README)):
        with open(os.path.join(dst, rel), "a", encoding="utf-8") as f:
            f.write(text)
    return path


def with_verdict(name, word):
    changed = dict(VERDICTS)
    changed[name] = (word, changed[name][1])
    return changed


failures = []


def expect(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


# The course's own claims, which the copy keeps beside the five it adds.
_, course_out = check(ROOT)
course_claims = int(re.search(r"(\d+) claims, each asserting", course_out).group(1)) if "claims, each" in course_out else 0

with tempfile.TemporaryDirectory() as tmp:
    make_course(tmp)
    code, out = check(tmp)
    expect(code == 0 and "%d claims, each asserting the verdict its output computed" % (course_claims + 5) in out,
           "correct claims pass --check: in a notebook, over lines, in its chapter page and as NOTEBOOK:name\n"
           + out[-800:])

# A re-run that turns the verdict round: the sentence asserting the old one fails, in every file.
with tempfile.TemporaryDirectory() as tmp:
    make_course(tmp, verdicts=with_verdict("claims_test.aer", "higher"))
    code, out = check(tmp)
    expect(code == 1 and "claim claims_test.aer asserts 'lower', but its output (cell" in out
           and "is 'higher' (paired over 3 seeds" in out and "README.md:" in out and NB + " cell" in out,
           "a flipped verdict fails --check in the notebook and in README.md, with the rule\n" + out[-800:])
    # --write cannot mend a sentence: it reports the claim too, and leaves the text as it was.
    before = open(os.path.join(tmp, "README.md"), encoding="utf-8").read()
    r = subprocess.run([sys.executable, TOOL, "--write", "--root", tmp], capture_output=True, text=True)
    after = open(os.path.join(tmp, "README.md"), encoding="utf-8").read()
    expect(r.returncode == 1 and "claims_test.aer asserts 'lower'" in r.stdout and before == after,
           "--write reports a wrong claim and leaves it\n" + r.stdout[-600:])

# A direction asserted where the numbers carry none.
for name, word in (("claims_test.bleu", "within noise"), ("claims_test.one", "one run; no comparison")):
    with tempfile.TemporaryDirectory() as tmp:
        make_course(tmp, claims_nb="BLEU <!--claim %s: higher-->is higher<!--/claim-->." % name)
        code, out = check(tmp)
        expect(code == 1 and "claim %s asserts a direction, 'higher', but its output" % name in out
               and "is '%s'" % word in out and "may not draw one" in out,
               "a direction asserted on '%s' fails --check, saying so\n%s" % (word, out[-800:]))

# A claim naming nothing, a claim on a quoted number, a claim of a word that is no verdict, a broken marker.
course = quotes.Course(ROOT)
number = sorted(course.values[CHAPTER])[0]
bad = [("<!--claim claims_test.missing: lower-->x<!--/claim-->", "publishes no value named claims_test.missing",
        "a claim naming no published value"),
       ("<!--claim %s: lower-->x<!--/claim-->" % number, "not a verdict: a claim names a value",
        "a claim on a published value that is no verdict"),
       ("<!--claim claims_test.aer: better-->x<!--/claim-->", "asserts 'better', which is not a verdict",
        "a claim asserting a word that is no verdict"),
       ("<!--claim claims_test.aer: lower-->x", "'<!--claim' markers but 0 well-formed claims",
        "a claim marker that is never closed")]
for text, message, what in bad:
    with tempfile.TemporaryDirectory() as tmp:
        make_course(tmp, claims_nb=text)
        code, out = check(tmp)
        expect(code == 1 and message in out, what + " fails --check\n" + out[-800:])

# --comparatives: words inside a claim, a code span or a quote are bound or not prose; the rest are listed.
found = quotes.prose_comparatives("It is <!--claim a.b: faster-->faster, only<!--/claim--> and `more`, but\n"
                                  "slower than <!--q x-->3<!--/q--> times and 4 times Better.")
expect([(line, word) for line, word, _ in found] == [(2, "slower"), (2, "Q times"), (2, "4 times"), (2, "better")],
       "prose_comparatives counts the words outside claims, code and quotes: %s" % found)
def chapter_claims(root):
    """The claims --comparatives counts for CHAPTER in the course at root, or None."""
    r = subprocess.run([sys.executable, TOOL, "--comparatives", "--root", root], capture_output=True, text=True)
    row = [line.split() for line in r.stdout.splitlines() if line.startswith(CHAPTER)]
    return (int(row[0][1]) if r.returncode == 0 and row else None), r.stdout


own, _ = chapter_claims(ROOT)  # the chapter's own claims, which the copy keeps
with tempfile.TemporaryDirectory() as tmp:
    make_course(tmp)
    counted, out = chapter_claims(tmp)
    expect(own is not None and counted == own + 4,
           "--comparatives counts the chapter's own claims and the 4 added (notebook and page; README.md is no "
           "chapter)\n" + out[-800:])


# --comparatives and --numerals with FILE...: only those files' prose is listed and counted, in the rows of
# their chapters; a FILE that is no chapter's prose is refused by name.
def report(mode, *files):
    r = subprocess.run([sys.executable, TOOL, mode, "--list", "--root", ROOT, *files], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


page = os.path.join(ROOT, PAGE)
whole_page = sum(1 for _ in quotes.prose_comparatives(open(page, encoding="utf-8").read()))
for mode in ("--comparatives", "--numerals"):
    code, out = report(mode, page)
    places = [line.split()[0] for line in out.splitlines() if re.match(r"(?:notebooks|docs|README)\S*(?: cell \d+)?:\d", line)]
    rows = [line.split()[0] for line in out.splitlines() if re.match(r"\d\d_", line)]
    expect(code == 0 and places and all(p.startswith(PAGE + ":") for p in places) and rows == [CHAPTER],
           "%s --list FILE lists FILE's words only, in its chapter's row: %d places outside it, rows %s\n%s"
           % (mode, sum(not p.startswith(PAGE + ":") for p in places), rows[:4], out[-600:]))
    if mode == "--comparatives":
        expect(len(places) == whole_page, "--comparatives --list FILE lists each of the page's %d comparative "
               "words once: %d listed" % (whole_page, len(places)))
    code, out = report(mode, os.path.join(ROOT, "tools", "quotes.py"))
    expect(code == 2 and "tools/quotes.py" in out and "not a chapter" in out,
           "%s refuses a FILE that is no chapter's notebook or page, naming it\n%s" % (mode, out[-400:]))

sys.exit(1 if failures else 0)
