#!/usr/bin/python3
"""The freshness rule (tools/freshness.py, tools/execute_notebooks.py --check/--stale) on a copy
of the course, so nothing committed changes:

- a comment reworded and a line reformatted in a header every notebook uses: every notebook
  stays fresh, while --strict (every library byte) calls them all stale;
- one character of code in a compiled unit that some notebooks use: those are stale, each
  naming the file, and a notebook that does not use it stays fresh;
- a data file a notebook read: that notebook is stale;
- an edited code cell: that notebook is stale;
and the tokenizer that hashes code as the compiler sees it.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import freshness  # noqa: E402

failures = []


def expect(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def tokenizer():
    base = 'int f(int a) { return a+1; }  // one\n#define N 3\nconst char* s = "// not a comment";\n'
    same = ('/* a block\n comment */ int f( int a )\n{\n    return a + 1;\n}\n'
            '#  define N 3\nconst char* s =\n  "// not a comment";   // trailing\n')
    expect(freshness.code_hash(base) == freshness.code_hash(same), "comments and whitespace do not change the hash")
    for changed, what in [(base.replace("a+1", "a+2"), "a number"), (base.replace("a+1", "a-1"), "an operator"),
                          (base.replace("// not a", "// no a"), "a string holding //"),
                          (base.replace("#define N 3\n", "#define N\n3\n"), "a directive's line break"),
                          ]:
        expect(freshness.code_hash(changed) != freshness.code_hash(base), "a change of %s changes the hash" % what)
    # Maximal munch: `a+ +b` and `a++b` are different code; one-character punctuators would hash them alike.
    expect(freshness.code_hash("x = a+ +b;") != freshness.code_hash("x = a++b;"), "maximal munch (+ + vs ++)")
    raw = 'auto s = R"x(a // b )" c)x"; int y;'
    expect(freshness.tokens(raw)[3] == 'R"x(a // b )" c)x"', "a raw string is one token")


def strace_reading():
    """data_files keeps what the run read under the repository, not what it wrote or renamed into
    place, not sources, not the build."""
    log = os.path.join(tempfile.mkdtemp(prefix="attn-strace-"), "strace.log")
    lines = [
        '101 openat(AT_FDCWD, "%s/docs/reference-results.json", O_RDONLY|O_CLOEXEC) = 3' % ROOT,
        '101 openat(AT_FDCWD, "../README.md", O_RDONLY) = 3',
        '101 openat(AT_FDCWD, "%s/core/tensor.hpp", O_RDONLY) = 3' % ROOT,
        '101 openat(AT_FDCWD, "%s/build/kernel/attn_notebook.pch", O_RDONLY) = 3' % ROOT,
        '102 openat(AT_FDCWD, "%s/docs/notation.md", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 4' % ROOT,
        '102 openat(AT_FDCWD, "%s/docs/notation.md", O_RDONLY) = 4' % ROOT,
        '102 rename("%s/docs/.x.tmp", "%s/docs/masks.md") = 0' % (ROOT, ROOT),
        '102 openat(AT_FDCWD, "%s/docs/masks.md", O_RDONLY) = 4' % ROOT,
        '102 openat(AT_FDCWD, "/etc/passwd", O_RDONLY|O_CLOEXEC) = 3',
        '102 openat(AT_FDCWD, "%s/docs", O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_DIRECTORY) = 3' % ROOT,
    ]
    with open(log, "w") as f:
        f.write("\n".join(lines) + "\n")
    got = freshness.data_files(log, os.path.join(ROOT, "notebooks"))
    expect(got == {"docs/reference-results.json", "README.md"},
           "strace's log gives the data read, not files written, sources or the build: %s" % sorted(got))
    shutil.rmtree(os.path.dirname(log))


def run(copy, *args):
    p = subprocess.run(["/usr/bin/python3", os.path.join(copy, "tools", "execute_notebooks.py")] + list(args),
                       cwd=copy, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def status(out):
    """{notebook: 'fresh' | 'STALE'} from --check's lines."""
    return {m.group(1): m.group(2) for m in re.finditer(r"^(notebooks/\S+\.ipynb): (fresh|STALE)", out, re.M)}


def main():
    tokenizer()
    strace_reading()
    with tempfile.TemporaryDirectory(prefix="attn-freshness-") as tmp:
        copy = os.path.join(tmp, "course")
        files = subprocess.run(["git", "-C", ROOT, "ls-files"], capture_output=True, text=True, check=True).stdout
        for rel in files.splitlines():
            src = os.path.join(ROOT, rel)
            if os.path.isfile(src):
                os.makedirs(os.path.dirname(os.path.join(copy, rel)), exist_ok=True)
                shutil.copy2(src, os.path.join(copy, rel))
        notebooks = sorted(os.path.relpath(os.path.join(d, n), copy)
                           for d in (os.path.join(copy, "notebooks"), os.path.join(copy, "notebooks", "solutions"))
                           for n in os.listdir(d) if re.match(r"\d\d_.*\.ipynb$", n))
        uses = {}
        for p in notebooks:
            with open(os.path.join(copy, p)) as f:
                uses[p] = json.load(f)["metadata"].get("attn", {}).get("uses") or {}
        expect(all(uses.values()), "every notebook records what it uses")

        rc, out = run(copy, "--check", *notebooks)
        expect(rc == 0 and set(status(out).values()) == {"fresh"}, "the copy starts fresh")

        # A header every notebook uses: a comment reworded, one added, a line re-indented.
        common = set.intersection(*(set(u) for u in uses.values()))
        header = "core/tensor.hpp"
        expect(header in common, "%s is used by every notebook" % header)
        path = os.path.join(copy, header)
        with open(path) as f:
            text = f.read()
        comment = re.search(r"//[^\n]*[a-z][^\n]*", text)
        edited = text[:comment.start()] + "// reworded: " + text[comment.start() + 2:comment.end()][::-1] + \
            text[comment.end():]
        edited = edited.replace("\nclass Tensor", "\n/* a new comment */\n\nclass   Tensor", 1)
        expect(edited != text, "the comment edit changed the file's bytes")
        with open(path, "w") as f:
            f.write(edited)
        rc, out = run(copy, "--check", *notebooks)
        expect(rc == 0 and set(status(out).values()) == {"fresh"}, "a comment and reformatting stale no notebook")
        rc, out = run(copy, "--check", "--strict", *notebooks)
        expect(rc == 1 and set(status(out).values()) == {"STALE"}, "--strict: the same edit stales every notebook")
        with open(path, "w") as f:
            f.write(text)

        # One character of code in a unit some notebooks use and others do not.
        counts = {}
        for u in uses.values():
            for rel in u:
                if rel.endswith(".cpp"):
                    counts[rel] = counts.get(rel, 0) + 1
        unit = min((c, rel) for rel, c in counts.items())[1]
        users = [p for p in notebooks if unit in uses[p]]
        others = [p for p in notebooks if unit not in uses[p]]
        expect(bool(users) and bool(others), "%s is used by %d notebooks, not by %d" % (unit, len(users), len(others)))
        path = os.path.join(copy, unit)
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text + ";\n")  # an empty declaration: one token more
        rc, out = run(copy, "--check", *notebooks)
        st = status(out)
        expect(rc == 1 and all(st[p] == "STALE" for p in users), "its users are stale")
        expect(all(st[p] == "fresh" for p in others), "the notebooks that do not use it stay fresh")
        rc, out = run(copy, "--stale", *notebooks)
        expect(rc == 0 and all(("%s: STALE" % p) in out for p in users) and ("%s changed" % unit) in out
               and not any(("%s: STALE" % p) in out for p in others), "--stale lists them with the file")
        with open(path, "w") as f:
            f.write(text)

        # A data file a notebook read.
        data = sorted({rel for u in uses.values() for rel in u if not rel.endswith(freshness.SOURCE_EXT)
                       and os.path.exists(os.path.join(copy, rel))})
        expect(bool(data), "some notebook records a data file it read (%s)" % ", ".join(data))
        if data:
            rel = data[0]
            readers = [p for p in notebooks if rel in uses[p]]
            path = os.path.join(copy, rel)
            with open(path, "rb") as f:
                raw = f.read()
            with open(path, "wb") as f:
                f.write(raw + b" ")
            rc, out = run(copy, "--check", *notebooks)
            st = status(out)
            expect(all(st[p] == "STALE" for p in readers) and
                   sum(v == "STALE" for v in st.values()) == len(readers), "%s changed stales its readers only" % rel)
            with open(path, "wb") as f:
                f.write(raw)

        # A code cell edited.
        p = others[0]
        path = os.path.join(copy, p)
        with open(path) as f:
            nb = json.load(f)
        cell = next(c for c in nb["cells"] if c["cell_type"] == "code")
        cell["source"] = (cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])) + "\n"
        with open(path, "w") as f:
            json.dump(nb, f)
        rc, out = run(copy, "--check", p)
        expect(rc == 1 and "code cells changed" in out, "an edited code cell stales its notebook")
    print("test_freshness: %s" % ("%d checks failed" % len(failures) if failures else "every check holds"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
