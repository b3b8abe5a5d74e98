#!/usr/bin/python3
"""Numbers in the course's prose are quotes of notebook outputs, never typed.

A code cell publishes a value under a name:

    attn::notebook::quote("ex5.concat_over_dot", ratio, ".2f");

which shows `ex5.concat_over_dot = 0.30` and carries the pair in an output of
type application/vnd.attn.quote+json. Prose refers to the name:

    concat costs <!--q ex5.concat_over_dot-->0.30<!--/q--> times dot

and this tool keeps the text between the markers equal to the published value:

    /usr/bin/python3 tools/quotes.py --write     fill every quote from the committed outputs
    /usr/bin/python3 tools/quotes.py --write FILE...   only these notebooks and pages
    /usr/bin/python3 tools/quotes.py --check     exit 1 naming each quote that differs from its
                                                 output or names no published value (a meson test)
    /usr/bin/python3 tools/quotes.py --moved OLD [--by 0.15]
                                                 list the published values that moved by more than
                                                 15% of their old value since OLD (a git revision or
                                                 another copy of the course; a text that is not one
                                                 number, when it changed), each with the prose places
                                                 quoting it
    /usr/bin/python3 tools/quotes.py --numerals [--list] [FILE...]
                                                 count the quotes and the numerals left in prose,
                                                 per chapter (--list prints each one in context)
    /usr/bin/python3 tools/quotes.py --comparatives [--list] [FILE...]
                                                 count the claims and the comparative words left in
                                                 prose outside them, per chapter (with FILE..., only
                                                 in these notebooks and pages)

Comparisons are claims: a cell publishes a verdict (attn::notebook::compare in viz/compare.hpp:
lower, higher, faster, slower, within noise, or one run; no comparison), and prose asserts it:

    the Markov prior's <!--claim markov_vs_plain.aer: lower-->alignment error is lower<!--/claim-->

--check (and --write, which cannot mend a sentence) fails when the asserted verdict is not the
published one, or the name publishes nothing, or is no verdict.

Names: in a notebook's markdown a bare name is the notebook's own; in
docs/chapters/NN-*.md a bare name is notebooks/NN_*.ipynb's. Any file may name
another notebook's value as `NOTEBOOK:name`, NOTEBOOK relative to notebooks/
without .ipynb: `03_luong:local_m.growth`, `solutions/03_luong:ex5.ratio`.
The prose files are the chapter and solution notebooks' markdown cells and every
.md file under docs/ and README.md. docs/quotes.md explains the workflow.
"""
import argparse
import glob
import json
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MIME = "application/vnd.attn.quote+json"
# <!--q name-->text<!--/q-->: the text is one line, never another marker.
MARKER = re.compile(r"<!--q ([^\s>]+)-->((?:(?!<!--).)*?)<!--/q-->")
OPEN_MARKER = re.compile(r"<!--q\b")
NAME = re.compile(r"^(?:([A-Za-z0-9_/]+):)?([A-Za-z0-9._-]+)$")
# <!--claim name: verdict-->text<!--/claim-->: the text is prose (quotes allowed, over several lines),
# never another claim.
CLAIM = re.compile(r"<!--claim ([^\s>]+): ([^<>\n]*?)-->((?:(?!<!--/?claim\b).)*?)<!--/claim-->", re.S)
OPEN_CLAIM = re.compile(r"<!--claim\b")
CLAIM_ENDS = re.compile(r"<!--claim [^<>\n]*?-->|<!--/claim-->")
# The words viz/compare.hpp publishes; a direction is drawn only by the first four.
DIRECTIONS = ("lower", "higher", "faster", "slower")
NO_DIRECTION = ("within noise", "one run; no comparison")
VERDICTS = DIRECTIONS + NO_DIRECTION


class Problem(Exception):
    pass


def rel(path, root):
    return os.path.relpath(path, root)


def notebook_paths(root):
    nbdir = os.path.join(root, "notebooks")
    return sorted(glob.glob(os.path.join(nbdir, "[0-9]*.ipynb")) +
                  glob.glob(os.path.join(nbdir, "solutions", "[0-9]*.ipynb")))


def notebook_key(path, root):
    """notebooks/solutions/03_luong.ipynb -> 'solutions/03_luong'."""
    return os.path.splitext(os.path.relpath(path, os.path.join(root, "notebooks")))[0].replace(os.sep, "/")


def page_paths(root):
    pages = sorted(glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True))
    readme = os.path.join(root, "README.md")
    return pages + ([readme] if os.path.exists(readme) else [])


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def cell_text(field):
    return "".join(field) if isinstance(field, list) else field


def verdict_rules(nb):
    """name -> the rule compare() published beside a verdict (shown when a claim disagrees)."""
    rules = {}
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            q = out.get("data", {}).get(MIME)
            if isinstance(q, str):
                q = json.loads(q)
            if isinstance(q, dict) and "rule" in q:
                rules[q["name"]] = q["rule"]
    return rules


def published(nb_path, nb):
    """name -> (text, cell index) for every quote the notebook's outputs carry."""
    values = {}
    for i, cell in enumerate(nb["cells"]):
        for out in cell.get("outputs", []):
            q = out.get("data", {}).get(MIME)
            if q is None:
                continue
            if isinstance(q, str):
                q = json.loads(q)
            name, text = q["name"], q["text"]
            if name in values and values[name][0] != text:
                raise Problem("%s: %s is published twice with different values (cells %d and %d: %r, %r)"
                              % (nb_path, name, values[name][1], i, values[name][0], text))
            values[name] = (text, i)
    return values


class Course:
    """The notebooks' published values and the prose files that quote them."""

    def __init__(self, root):
        self.root = root
        self.notebooks = {}  # key -> (path, json)
        self.values = {}     # key -> {name: (text, cell)}
        self.rules = {}      # key -> {name: the rule that decided a published verdict}
        self.claims = 0      # claims seen by fill(), all files
        self.problems = []
        for p in notebook_paths(root):
            key = notebook_key(p, root)
            nb = read_json(p)
            self.notebooks[key] = (p, nb)
            self.rules[key] = verdict_rules(nb)
            try:
                self.values[key] = published(rel(p, root), nb)
            except Problem as e:
                self.problems.append((p, str(e)))
                self.values[key] = {}

    def chapter_notebook(self, page):
        """docs/chapters/03-luong.md -> '03_luong' (the notebook its bare names refer to)."""
        m = re.match(r"(\d\d)-", os.path.basename(page))
        if not m or os.path.basename(os.path.dirname(page)) != "chapters":
            return None
        keys = [k for k in self.notebooks if re.match(m.group(1) + r"_", k)]
        return keys[0] if len(keys) == 1 else None

    def resolve(self, ref, home):
        """The published text a marker's name refers to, or raise Problem saying why not."""
        m = NAME.match(ref)
        if not m:
            raise Problem("'%s' is not a quote name (NAME or NOTEBOOK:NAME)" % ref)
        key, name = m.group(1) or home, m.group(2)
        if key is None:
            raise Problem("'%s' names no notebook, and this file has no notebook of its own: write NOTEBOOK:%s"
                          % (ref, ref))
        if key not in self.values:
            raise Problem("'%s': there is no notebook notebooks/%s.ipynb" % (ref, key))
        if name not in self.values[key]:
            raise Problem("'%s': notebooks/%s.ipynb publishes no value named %s (a quote(\"%s\", ...) "
                          "whose output is missing or was renamed)" % (ref, key, name, name))
        return self.values[key][name]

    def fill(self, text, home, where, problems, write):
        """The text with every marker's content checked (and replaced when write); counts quotes."""
        count = [0]
        # Markers shown as code (in ``` blocks or `spans`) are examples, not quotes.
        code = [(c.start(), c.end()) for pat in (FENCE, CODE) for c in pat.finditer(text)]

        def in_code(at):
            return any(a <= at < b for a, b in code)

        def one(m):
            if in_code(m.start()):
                return m.group(0)
            count[0] += 1
            line = where[1] + text.count("\n", 0, m.start())
            try:
                want, cell = self.resolve(m.group(1), home)
            except Problem as e:
                problems.append("%s:%d: %s" % (where[0], line, e))
                return m.group(0)
            if m.group(2) != want and not write:
                problems.append("%s:%d: quote %s reads '%s', but its output (cell %d) is '%s'"
                                % (where[0], line, m.group(1), m.group(2), cell, want))
            return "<!--q %s-->%s<!--/q-->" % (m.group(1), want)

        new = MARKER.sub(one, text)
        # An opening marker that the pattern did not take is a typo that would hide a stale number.
        opened = sum(1 for m in OPEN_MARKER.finditer(text) if not in_code(m.start()))
        if opened != count[0]:
            problems.append("%s: %d '<!--q' markers but %d well-formed quotes <!--q NAME-->text<!--/q--> "
                            "(one line, no nesting)" % (where[0], opened, count[0]))
        self.check_claims(text, home, where, problems, in_code)
        return new, count[0]

    def check_claims(self, text, home, where, problems, in_code):
        """Each claim's asserted verdict against the verdict its cell published; --write cannot mend
        a claim (the sentence around it needs rewriting), so it is checked in both modes."""
        claims = [m for m in CLAIM.finditer(text) if not in_code(m.start())]
        self.claims += len(claims)
        for m in claims:
            line = where[1] + text.count("\n", 0, m.start())
            ref, asserted = m.group(1), m.group(2).strip()
            at = "%s:%d: claim %s" % (where[0], line, ref)
            try:
                want, cell = self.resolve(ref, home)
            except Problem as e:
                problems.append("%s: %s" % (at, e))
                continue
            if asserted not in VERDICTS:
                problems.append("%s asserts '%s', which is not a verdict (%s)" % (at, asserted, ", ".join(VERDICTS)))
                continue
            if want not in VERDICTS:
                problems.append("%s: its output (cell %d) is '%s', not a verdict: a claim names a value that "
                                "compare() or compare_timings() publishes" % (at, cell, want))
                continue
            if asserted == want:
                continue
            n = NAME.match(ref)
            rule = self.rules.get(n.group(1) or home, {}).get(n.group(2))
            because = " (%s)" % rule if rule else ""
            if asserted in DIRECTIONS and want in NO_DIRECTION:
                problems.append("%s asserts a direction, '%s', but its output (cell %d) is '%s'%s: its numbers "
                                "carry no direction, and the sentence may not draw one"
                                % (at, asserted, cell, want, because))
            else:
                problems.append("%s asserts '%s', but its output (cell %d) is '%s'%s"
                                % (at, asserted, cell, want, because))
        # An opening marker that the pattern did not take would leave a comparison unchecked.
        opened = sum(1 for m in OPEN_CLAIM.finditer(text) if not in_code(m.start()))
        if opened != len(claims):
            problems.append("%s: %d '<!--claim' markers but %d well-formed claims "
                            "<!--claim NAME: VERDICT-->text<!--/claim--> (no nesting)" % (where[0], opened, len(claims)))

    def run(self, write, only=None):
        """Checks (or fills) every prose file; returns (problems, {file: number of quotes})."""
        problems = [e for p, e in self.problems if only is None or p in only]
        counts = {}
        for key, (path, nb) in self.notebooks.items():
            if only is not None and path not in only:
                continue
            changed = False
            n = 0
            for i, cell in enumerate(nb["cells"]):
                if cell["cell_type"] != "markdown":
                    continue
                src = cell_text(cell["source"])
                new, k = self.fill(src, key, ("%s cell %d" % (rel(path, self.root), i), 1), problems, write)
                n += k
                if new != src:
                    cell["source"] = new.splitlines(True)
                    changed = True
            counts[path] = n
            if write and changed:
                write_notebook(path, nb)
        for page in page_paths(self.root):
            if only is not None and page not in only:
                continue
            with open(page, encoding="utf-8") as f:
                text = f.read()
            new, n = self.fill(text, self.chapter_notebook(page), (rel(page, self.root), 1), problems, write)
            counts[page] = n
            if write and new != text:
                write_atomically(page, new)
        return problems, counts


# --- the values that moved since another revision ----------------------------------------

SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
# A published number as viz/quote.hpp's format() writes it: 0.71, -1.000, 1,256, 5.6%, 2.2 × 10⁻¹⁰.
NUMBER = re.compile(r"([-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(?:\s*×\s*10(⁻?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))?%?")


def quoted_number(text):
    """The number a published text is: '4 × 10⁻¹⁶' -> 4e-16, '1,234' -> 1234, '5.6%' -> 5.6;
    None when the text is not one number ('above', 'layer 1, head 0', '0 and 2'), which
    --moved then compares as text."""
    m = NUMBER.fullmatch(text.strip())
    if not m:
        return None
    number = m.group(1).replace(",", "").replace("−", "-")
    if m.group(2):
        number += "e" + m.group(2).translate(SUPERSCRIPT)
    return float(number)


def has_moved(was, now, by):
    """Whether a published text went from `was` to `now` by more than the fraction `by` of the old
    value; from 0, any change counts, and a text that is not a number counts when it changed."""
    a, b = quoted_number(was), quoted_number(now)
    if a is None or b is None:
        return was != now
    if a == 0:
        return b != 0
    return abs(b - a) > by * abs(a)


def old_notebooks(old, root):
    """key -> the notebook as OLD had it; OLD is a directory holding a copy of the course,
    or a git revision of the repository at root."""
    import subprocess

    def git(*args):
        try:
            return subprocess.run(["git", "-C", root, *args], capture_output=True, text=True, encoding="utf-8")
        except FileNotFoundError:  # no git: OLD can still be a directory
            return subprocess.CompletedProcess(args, 127, "", "git is not installed")

    # A name such as main may be both a branch and a directory (the checkout's own, seen from its parent).
    commit = None
    if not old.startswith("-"):
        r = git("rev-parse", "--verify", "--quiet", old + "^{commit}")
        commit = r.stdout.strip() if r.returncode == 0 else None
    if os.path.isdir(old):
        if commit:
            raise Problem("--moved %s: both a directory (%s) and a git revision of %s; write ./%s for the "
                          "directory, %s^{commit} for the revision" % (old, os.path.abspath(old), root, old, old))
        if os.path.realpath(old) == os.path.realpath(root):
            raise Problem("--moved %s: this is the course being read (--root %s), not another copy" % (old, root))
        found = {notebook_key(p, old): read_json(p) for p in notebook_paths(old)}
        if not found:
            raise Problem("--moved %s: the directory holds no notebooks/NN_*.ipynb; give the top of the "
                          "copy (the directory holding notebooks/ and docs/)" % old)
        return found
    if commit is None:
        inside = git("rev-parse", "--git-dir").returncode
        if inside != 0:
            why = "git is not installed" if inside == 127 else "%s is not in a git repository" % root
        elif not old.startswith("-") and git("rev-parse", "--verify", "--quiet", old).returncode == 0:
            why = "it names a git object that is not a commit"
        else:
            why = "git knows no revision of that name"
        raise Problem("--moved %s: neither a directory nor a git revision of %s (%s)" % (old, root, why))
    # Paths relative to root ('./'), so that root may also be a folder inside a larger repository.
    r = git("ls-tree", "-r", "-z", "--name-only", commit, "--", "notebooks")
    found = {}
    for path in r.stdout.split("\0"):
        if not re.match(r"notebooks/(solutions/)?\d[^/]*\.ipynb$", path):
            continue
        show = git("cat-file", "blob", "%s:./%s" % (commit, path))
        if show.returncode != 0:
            raise Problem("--moved %s: cannot read %s (%s)" % (old, path, show.stderr.strip()))
        found[notebook_key(os.path.join(root, path), root)] = json.loads(show.stdout)
    if not found:
        raise Problem("--moved %s: revision %s holds no notebooks/NN_*.ipynb" % (old, commit[:10]))
    return found


def quote_places(course):
    """(key, name) -> the prose places that quote it, as 'file:line' or 'file cell N:line'."""
    places = {}

    def scan(text, home, where):
        code = [(c.start(), c.end()) for pat in (FENCE, CODE) for c in pat.finditer(text)]
        for m in list(MARKER.finditer(text)) + list(CLAIM.finditer(text)):
            n = NAME.match(m.group(1))
            if not n or any(a <= m.start() < b for a, b in code):
                continue
            key = n.group(1) or home
            line = 1 + text.count("\n", 0, m.start())
            places.setdefault((key, n.group(2)), []).append("%s:%d" % (where, line))

    for key, (path, nb) in sorted(course.notebooks.items()):
        for i, cell in enumerate(nb["cells"]):
            if cell["cell_type"] == "markdown":
                scan(cell_text(cell["source"]), key, "%s cell %d" % (rel(path, course.root), i))
    for page in page_paths(course.root):
        with open(page, encoding="utf-8") as f:
            scan(f.read(), course.chapter_notebook(page), rel(page, course.root))
    return places


def plural(n, word):
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


def moved_report(course, old, by):
    """Prints every published value that moved by more than the fraction `by` (or, for text, changed)
    between OLD and this course, with the places that quote it: the sentences to re-read. Says which
    notebooks and values it could not compare (only on one side)."""
    before = old_notebooks(old, course.root)
    places = quote_places(course)
    moved = compared = only_now = only_old = 0
    for key in sorted(set(before) & set(course.values)):
        was = published("notebooks/%s.ipynb in %s" % (key, old), before[key])
        only_old += len(set(was) - set(course.values[key]))
        for name, (text, cell) in sorted(course.values[key].items()):
            if name not in was:
                only_now += 1
                continue
            compared += 1
            if not has_moved(was[name][0], text, by):
                continue
            moved += 1
            where = places.get((key, name), [])
            print("%s %s: %s -> %s  (%s)" % (key, name, was[name][0], text,
                                           "quoted in " + plural(len(where), "place") if where else "quoted nowhere"))
            for w in where:
                print("    " + w)
    for side, keys in (("only here", set(course.values) - set(before)),
                       ("only in " + old, set(before) - set(course.values))):
        if keys:
            print("not compared, notebooks %s: %s" % (side, ", ".join(sorted(keys))))
    if only_now or only_old:
        print("not compared, values of the same notebooks: %d published only here, %d only in %s"
              % (only_now, only_old, old))
    print("%s of %d moved by more than %g%% since %s"
          % (plural(moved, "published value"), compared, 100 * by, old))


def write_atomically(path, text):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".quotes-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, os.stat(path).st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_notebook(path, nb):
    """Written as nbformat writes it, so a notebook whose quotes did not change is byte-identical."""
    import nbformat
    write_atomically(path, nbformat.writes(nbformat.from_dict(nb)) + "\n")


def fill_notebook(path, root=ROOT):
    """Fills one executed notebook's quotes of its own values (tools/execute_notebooks.py calls this).
    Returns the problems, which the caller prints: a run at a reduced size may not publish everything."""
    course = Course(root)
    problems, _ = course.run(write=True, only={os.path.abspath(path)} | {path})
    return problems


# --- the numerals left in prose ------------------------------------------------------------

FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE = re.compile(r"`[^`\n]*`")
MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.S)
LINK_TARGET = re.compile(r"\]\([^)]*\)|<[^>\n]*>|https?://\S+")
# What is not a measurement: chapter and section numbers, and years in citations.
REFERENCE = re.compile(r"\b(?:[Cc]hapters?|[Ss]ections?|[Ee]xercises?|[Ff]igures?|[Tt]ables?|[Cc]ells?|"
                       r"[Ee]q\.|[Ee]quations?|[Pp]arts?|[Ss]eeds?|§)\s*\d+(?:\.\d+)*(?:\s*(?:-|–|and|,|to)\s*\d+)*")
YEAR = re.compile(r"(?:et al\.?,?|&[^,()]{1,40},?|\(|, )\s*(?:19[5-9]\d|20[0-3]\d)[a-z]?\b")
NUMERAL = re.compile(r"(?<![\w.])[-−]?\d[\d,]*(?:\.\d+)?(?:\s*[×x]\s*10\S*)?%?")


def prose_numerals(text):
    """The numerals of a markdown text that are not quotes, code, math, addresses or references:
    returns (numerals in text as (line, numeral, context), count in math)."""
    text = MARKER.sub(lambda m: "#" * len(m.group(0)), text)
    text = CLAIM_ENDS.sub(lambda m: "#" * len(m.group(0)), text)
    for pat in (FENCE, CODE, LINK_TARGET):
        text = pat.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    in_math = sum(len(NUMERAL.findall(m.group(0))) for m in MATH.finditer(text))
    text = MATH.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    for pat in (REFERENCE, YEAR):
        text = pat.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    found = []
    for m in NUMERAL.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.end())
        context = text[start:end if end >= 0 else None].strip()
        found.append((line, m.group(0), re.sub(r"\s+", " ", context)[:140]))
    return found, in_math


def numerals_report(course, listing, files=()):
    chapters, only = report_scope(course, files)
    _, counts = course.run(write=False)
    rows = []
    total = [0, 0, 0]
    for ch in chapters:
        files = chapter_files(course, ch, only)
        quotes = sum(counts.get(path, 0) for path, _ in files)
        left, math = [], 0
        for path, parts in files:
            for cell, text in parts:
                found, m = prose_numerals(text)
                math += m
                for line, num, ctx in found:
                    where = rel(path, course.root) + (" cell %d" % cell if cell is not None else "") + ":%d" % line
                    left.append((where, num, ctx))
        rows.append((ch, quotes, len(left), math))
        total = [total[0] + quotes, total[1] + len(left), total[2] + math]
        if listing:
            for where, num, ctx in left:
                print("%-45s %-10s %s" % (where, num, ctx))
    print("%-22s %7s %14s %14s" % ("chapter", "quotes", "numerals left", "in math"))
    for ch, q, n, m in rows:
        print("%-22s %7d %14d %14d" % (ch, q, n, m))
    print("%-22s %7d %14d %14d" % ("all", total[0], total[1], total[2]))


# --- the comparative words left unbound -------------------------------------------------------

# Words that compare; outside a claim each is either about a paper, a definition or a setting, or a
# comparison still to bind. "N times" counts with a numeral, a quote, k or N, or a number word.
COMPARATIVE = re.compile(r"\b(?:faster|slower|better|worse|beats|beat|more|less|higher|lower|only|grows|flat)\b|"
                         r"(?:(?<![\w.])\d[\d,]*(?:\.\d+)?|\x00|\b(?:[kN]|two|three|four|five|six|seven|eight|"
                         r"nine|ten|hundred|thousand))\s+times\b", re.I)


def prose_comparatives(text):
    """The comparative words of a markdown text outside claims, code, quotes and addresses:
    returns [(line, word, context)]."""
    blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))  # noqa: E731
    text = CLAIM.sub(blank, text)
    text = MARKER.sub(lambda m: "\x00" + " " * (len(m.group(0)) - 1), text)  # a quote still counts in "N times"
    for pat in (FENCE, CODE, LINK_TARGET):
        text = pat.sub(blank, text)
    found = []
    for m in COMPARATIVE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.end())
        context = text[start:end if end >= 0 else None].replace("\x00", "Q").strip()
        word = re.sub(r"\s+", " ", m.group(0).replace("\x00", "Q"))
        word = word if word.endswith("times") else word.lower()
        found.append((line, word, re.sub(r"\s+", " ", context)[:140]))
    return found


def chapter_files(course, ch, only=None):
    """A chapter's prose: [(path, [(cell or None, markdown)])] for its notebook, its solutions and its page;
    with only (a set of absolute paths), those of them alone."""
    files = []
    for key in (ch, "solutions/" + ch):
        if key in course.notebooks:
            path, nb = course.notebooks[key]
            files.append((path, [(i, cell_text(c["source"])) for i, c in enumerate(nb["cells"])
                                 if c["cell_type"] == "markdown"]))
    for p in page_paths(course.root):
        if course.chapter_notebook(p) == ch:
            with open(p, encoding="utf-8") as f:
                files.append((p, [(None, f.read())]))
    return [f for f in files if only is None or os.path.abspath(f[0]) in only]


def report_scope(course, files):
    """The chapters a --numerals or --comparatives report covers, and the files it reads ({abspath} or None
    for all): with FILE..., the chapters whose prose they are. Raises Problem naming a FILE that is none."""
    chapters = sorted({k.split("/")[-1] for k in course.notebooks})
    if not files:
        return chapters, None
    only = {os.path.abspath(f) for f in files}
    prose = {os.path.abspath(path): ch for ch in chapters for path, _ in chapter_files(course, ch)}
    stray = sorted(f for f in files if os.path.abspath(f) not in prose)
    if stray:
        raise Problem("not a chapter's notebook, solution notebook or page (docs/chapters/NN-*.md): %s"
                      % ", ".join(stray))
    return [ch for ch in chapters if any(prose[p] == ch for p in only)], only


def comparatives_report(course, listing, files=()):
    """Per chapter: the claims bound, and the comparative words left outside them (--list: each in context);
    with files, only theirs."""
    chapters, only = report_scope(course, files)
    rows = []
    for ch in chapters:
        claims, left = 0, []
        for path, parts in chapter_files(course, ch, only):
            for cell, text in parts:
                code = [(c.start(), c.end()) for pat in (FENCE, CODE) for c in pat.finditer(text)]
                claims += sum(1 for m in CLAIM.finditer(text) if not any(a <= m.start() < b for a, b in code))
                for line, word, ctx in prose_comparatives(text):
                    where = rel(path, course.root) + (" cell %d" % cell if cell is not None else "") + ":%d" % line
                    left.append((where, word, ctx))
        if listing:
            for where, word, ctx in left:
                print("%-45s %-10s %s" % (where, word, ctx))
        by_word = {}
        for _, word, _ in left:
            word = "N times" if word.endswith(" times") else word
            by_word[word] = by_word.get(word, 0) + 1
        rows.append((ch, claims, len(left), by_word))
    print("%-22s %6s %6s  %s" % ("chapter", "claims", "left", "comparative words left, most frequent first"))
    total = {}
    for ch, claims, n, by_word in rows:
        for w, k in by_word.items():
            total[w] = total.get(w, 0) + k
        words = ", ".join("%s %d" % wk for wk in sorted(by_word.items(), key=lambda wk: (-wk[1], wk[0])))
        print("%-22s %6d %6d  %s" % (ch, claims, n, words))
    words = ", ".join("%s %d" % wk for wk in sorted(total.items(), key=lambda wk: (-wk[1], wk[0])))
    print("%-22s %6d %6d  %s" % ("all", sum(r[1] for r in rows), sum(r[2] for r in rows), words))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="fill every quote from the committed outputs")
    mode.add_argument("--check", action="store_true", help="exit 1 when a quote differs from its output")
    mode.add_argument("--numerals", action="store_true", help="count quotes and the numerals left, per chapter")
    mode.add_argument("--comparatives", action="store_true", help="count claims and the comparative words left "
                      "outside them, per chapter")
    mode.add_argument("--moved", metavar="OLD", help="list the values that moved since OLD (a git revision "
                      "or a directory holding another copy of the course), with the places quoting them")
    ap.add_argument("--by", type=float, help="with --moved: the relative change that counts, a fraction of the "
                    "old value (default 0.15)")
    ap.add_argument("--list", action="store_true", help="with --numerals or --comparatives: print each one left "
                    "in context")
    ap.add_argument("--root", default=ROOT, help="the repository to read (default: this checkout)")
    ap.add_argument("files", nargs="*", help="with --write, --check, --numerals or --comparatives: only these "
                    "notebooks and pages")
    args = ap.parse_args()
    if args.by is not None and args.moved is None:
        ap.error("--by goes with --moved")
    if args.moved is not None and args.files:
        ap.error("--moved compares the whole course, not FILE...")
    if args.moved is not None and args.by is None:
        args.by = 0.15
    if args.moved is not None and not args.by > 0:
        ap.error("argument --by: %g is not a fraction above 0 (0.15 lists the values that moved by more "
                 "than 15%%)" % args.by)
    course = Course(os.path.abspath(args.root))
    if args.numerals or args.comparatives:
        try:
            (numerals_report if args.numerals else comparatives_report)(course, args.list, args.files)
        except Problem as e:
            print(e, file=sys.stderr)
            return 2
        return 0
    if args.moved is not None:
        try:
            moved_report(course, args.moved, args.by)
        except Problem as e:
            print(e, file=sys.stderr)
            return 2
        return 0
    only = {os.path.abspath(f) for f in args.files} or None
    problems, counts = course.run(write=args.write, only=only)
    for p in problems:
        print(p)
    n = sum(counts.values())
    if problems:
        print("%d problems in %d quotes" % (len(problems), n))
        return 1
    print("%d quotes in %d files, all equal to their outputs" % (n, sum(1 for c in counts.values() if c)))
    if course.claims:
        print("%d claims, each asserting the verdict its output computed" % course.claims)
    return 0


if __name__ == "__main__":
    sys.exit(main())
