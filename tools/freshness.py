"""What a notebook's outputs depend on, and whether it changed since they were made.

A notebook run through the kernel with usage recording (tools/execute_notebooks.py) leaves:
  - the kernel's usage log (kernel/src/usage.hpp): for every input, the files declaring what its
    code referred to, and the external symbols its generated code left for the JIT to resolve;
  - the files its process opened for reading (strace), for the data and corpora it loaded.
`resolve()` turns those into the set of the project's files the run used:
  - headers: each file declaring something a cell referred to, and the project headers it
    includes, transitively (what its inline code can reach); the headers a cell #includes
    itself (the umbrella header: every notebook reads it, so every notebook uses it);
  - compiled units: each .cpp of libattn defining a symbol the cells' code called, and the
    units those call in turn (the link graph of libattn's objects), with their headers;
  - data: each file under the repository the run read that is not a source file.
The notebook's metadata records each used file with its hash. Sources are hashed as the
compiler sees them (`code_hash`: comments and whitespace gone), so a reworded comment or a
reformatted file changes no hash; data files by their bytes.
"""
import hashlib
import json
import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The library a notebook can use; build files, tests and the kernel's own sources are not.
SOURCE_DIRS = ["core", "nn", "models", "viz", "data", "train", "eval", "decode", "io", "audio", "kernel/include"]
SOURCE_FILES = ["attn.hpp", "notebooks/attn_notebook.hpp"]
SOURCE_EXT = (".hpp", ".cpp", ".h")
# The headers a notebook's first cell includes: each includes every other header (so is not
# closed over its includes), and every notebook uses it.
UMBRELLAS = ["notebooks/attn_notebook.hpp", "attn.hpp"]
# Where a quoted #include "..." is looked for after the including file's folder (the kernel's -I).
INCLUDE_DIRS = ["", "notebooks", "kernel/include"]


def is_library_source(rel):
    if rel in SOURCE_FILES:
        return True
    return rel.endswith(SOURCE_EXT) and any(rel.startswith(d + "/") for d in SOURCE_DIRS)


# --- hashing code as the compiler sees it ------------------------------------------------------

PUNCTUATORS = sorted("""%:%: ... <=> <<= >>= ->* :: ## << >> <= >= == != && || ++ -- += -= *= /= %= &= |= ^= -> .*
<: :> <% %> %: { } [ ] ( ) ; : ? . + - * / % ^ & | ~ ! = < > , #""".split(), key=len, reverse=True)
IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
NUMBER = re.compile(r"\.?[0-9](?:[eEpP][+-]|[0-9A-Za-z_.'])*")
RAW_PREFIX = re.compile(r"(?:u8|u|U|L)?R\"([^()\\\s]{0,16})\(")
STRING_PREFIX = re.compile(r"(?:u8|u|U|L)?[\"']")


def tokens(text):
    """C++ tokens of a source text, comments dropped; a preprocessor directive ends with a "\\n"
    token (its line break is part of its meaning); other whitespace is dropped."""
    text = text.replace("\\\r\n", "").replace("\\\n", "")  # line splices (phase 2)
    out = []
    i, n = 0, len(text)
    line_start = True   # only whitespace so far on this line
    directive = False   # inside a preprocessor directive
    while i < n:
        c = text[i]
        if c == "\n":
            if directive:
                out.append("\n")
                directive = False
            line_start = True
            i += 1
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        if c == "#" and line_start:
            directive = True
        line_start = False
        m = RAW_PREFIX.match(text, i)
        if m:
            end = text.find(")" + m.group(1) + '"', m.end())
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(text[i:j])
            i = j
            continue
        m = STRING_PREFIX.match(text, i)
        if m:
            quote = text[m.end() - 1]
            j = m.end()
            while j < n and text[j] != quote and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(text[i:j])
            i = j
            continue
        m = IDENT.match(text, i) or NUMBER.match(text, i)
        if m:
            out.append(m.group(0))
            i = m.end()
            continue
        for p in PUNCTUATORS:
            if text.startswith(p, i):
                out.append(p)
                i += len(p)
                break
        else:
            out.append(c)
            i += 1
    if directive:
        out.append("\n")
    return out


def code_hash(text):
    """A hash of the tokens: equal for two texts that differ in comments and whitespace only."""
    return hashlib.sha256(" ".join(tokens(text)).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def bytes_hash(data):
    return hashlib.sha256(data).hexdigest()[:16]


def file_hash(rel, read=None):
    """The hash a used file is recorded with; None when it does not exist. read(rel) -> bytes or
    None reads it from elsewhere than the work tree (a git revision: tools/freshness_history.py)."""
    if read is None:
        path = os.path.join(ROOT, rel)
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as f:
            data = f.read()
    else:
        data = read(rel)
        if data is None:
            return None
    if rel.endswith(SOURCE_EXT):
        return "c:" + code_hash(data.decode("utf-8", "surrogateescape"))
    return "b:" + bytes_hash(data)


def cells_hash(nb):
    """The notebook's own code, cell by cell, as the kernel receives it."""
    h = hashlib.sha256()
    for cell in nb.cells:
        if cell.cell_type == "code":
            h.update(cell.source.encode() + b"\0")
    return h.hexdigest()[:16]


# --- what a used file brings with it -----------------------------------------------------------

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def quoted_includes(rel, text):
    """The project files a source's #include "..." lines name (those that exist)."""
    found = []
    for name in INCLUDE.findall(text):
        for base in [os.path.dirname(rel)] + INCLUDE_DIRS:
            cand = os.path.normpath(os.path.join(base, name))
            if not cand.startswith("..") and os.path.isfile(os.path.join(ROOT, cand)):
                found.append(cand)
                break
    return found


def include_closure(files):
    """files and every project header they include, transitively."""
    seen, todo = set(), list(files)
    while todo:
        rel = todo.pop()
        if rel in seen:
            continue
        seen.add(rel)
        try:
            with open(os.path.join(ROOT, rel), encoding="utf-8", errors="surrogateescape") as f:
                text = f.read()
        except OSError:
            continue
        todo.extend(quoted_includes(rel, text))
    return seen


_UNITS = {}


def library_units(build):
    """(Memoized per build folder: `nm` of every object takes a while.)"""
    if build not in _UNITS:
        _UNITS[build] = _library_units(build)
    return _UNITS[build]


def _library_units(build):
    """libattn's compiled units: {source: (strong symbols it defines, symbols it leaves undefined)},
    from the build's compile_commands.json and `nm` of each object."""
    with open(os.path.join(build, "compile_commands.json")) as f:
        commands = json.load(f)
    units = {}
    for c in commands:
        src = os.path.relpath(os.path.normpath(os.path.join(c["directory"], c["file"])), ROOT)
        if not is_library_source(src):  # libattn's objects and the vecmath copies it links whole
            continue
        obj = os.path.join(c["directory"], c["output"])
        nm = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
        defined, undefined = set(), set()
        for line in nm.splitlines():
            parts = line.split()
            if len(parts) < 2:
                continue
            name, kind = parts[0], parts[1]
            if kind == "U":
                undefined.add(name)
            elif kind in "TDBR":  # strong definitions; weak ones (inline code) come from headers
                defined.add(name)
        units[src] = (defined, undefined)
    return units


def unit_closure(symbols, units, start=()):
    """The units defining any of `symbols` (and the units in `start`), and the units those call,
    transitively."""
    owner = {}
    for src, (defined, _) in units.items():
        for s in defined:
            owner[s] = src
    used, todo = set(), [owner[s] for s in symbols if s in owner] + [u for u in start if u in units]
    while todo:
        src = todo.pop()
        if src in used:
            continue
        used.add(src)
        todo.extend(owner[s] for s in units[src][1] if s in owner)
    return used


STRACE_OPEN = re.compile(r'^\d+\s+(?:open|openat|openat2)\((?:[^,]*, )?"((?:[^"\\]|\\.)*)", ([A-Z_|]+)')
STRACE_RENAME = re.compile(r'^\d+\s+rename(?:at2?)?\((?:[^,]*, )?"(?:[^"\\]|\\.)*", (?:[^,]*, )?"((?:[^"\\]|\\.)*)"')


# Files the course makes from a pinned list (tools/setup.sh --with-corpus), not in git: a run that
# read one depends on its pin, which names every input's checksum.
GENERATED = {"manpages.jsonl": "data/pinned/manpages-bookworm.json",
             "manpages/": "data/pinned/manpages-bookworm.json",
             "locale/": "data/pinned/gettext-bookworm.json"}


def tracked_files():
    out = subprocess.run(["git", "-C", ROOT, "ls-files"], capture_output=True, text=True)
    return set(out.stdout.splitlines()) if out.returncode == 0 else None


def data_files(strace_log, cwd):
    """Files under the repository the run read and did not itself write, from strace's log; a
    corpus made from a pinned list stands for its pin (GENERATED)."""
    read, written = set(), set()
    if not strace_log or not os.path.exists(strace_log):
        return read
    with open(strace_log, errors="replace") as f:
        for line in f:
            m = STRACE_OPEN.match(line)
            if m:
                path = os.path.normpath(os.path.join(cwd, m.group(1)))
                flags = m.group(2)
                if any(w in flags for w in ("O_WRONLY", "O_RDWR", "O_CREAT")):
                    written.add(path)
                elif "O_DIRECTORY" not in flags:
                    read.add(path)
                continue
            m = STRACE_RENAME.match(line)
            if m:
                written.add(os.path.normpath(os.path.join(cwd, m.group(1))))
    out = set()
    for path in read - written:
        rel = os.path.relpath(os.path.realpath(path), ROOT)
        if rel.startswith("..") or rel.startswith(("build", ".git")) or rel.endswith(SOURCE_EXT + (".pch", ".ipynb")):
            continue
        if os.path.isfile(os.path.join(ROOT, rel)):
            out.add(rel)
    return pinned(out)


def pinned(files):
    """files with each untracked corpus made from a pinned list replaced by its pin (GENERATED)."""
    tracked = tracked_files()
    out = set(files)
    if tracked is not None:
        for rel in sorted(out - tracked):
            pin = next((p for prefix, p in GENERATED.items() if rel == prefix or rel.startswith(prefix)), None)
            if pin:
                out.discard(rel)
                out.add(pin)
    return out


def read_usage_log(path):
    files, symbols = set(), set()
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                rec = json.loads(line)
                files.update(rec.get("files", []))
                symbols.update(rec.get("symbols", []))
    return files, symbols


def cell_includes(nb):
    """The project files the cells #include themselves (read, so used, but not their closure)."""
    found = set()
    for cell in nb.cells:
        if cell.cell_type == "code":
            for rel in quoted_includes("notebooks/x", cell.source):
                found.add(rel)
    return found


def resolve(nb, usage_log, strace_log, cwd, build):
    """{used file: its hash} for a notebook run: see the module's docstring."""
    decl_files, symbols = read_usage_log(usage_log)
    headers = set()
    for path in decl_files:
        rel = os.path.relpath(os.path.realpath(path), ROOT)
        if is_library_source(rel):
            headers.add(rel)
    units = unit_closure(symbols, library_units(build))
    used = include_closure(headers | units)
    used |= cell_includes(nb)
    used = {f for f in used if is_library_source(f)}
    used |= data_files(strace_log, cwd)
    return {rel: file_hash(rel) for rel in sorted(used)}


def changed(uses, read=None):
    """The recorded files whose hash differs now (or at a revision, with read): [(file, why)]."""
    out = []
    for rel, was in sorted(uses.items()):
        now = file_hash(rel, read)
        if now is None:
            out.append((rel, "removed"))
        elif now != was:
            out.append((rel, "changed"))
    return out


def reclose(uses, build):
    """uses with the link graph and the includes closed again over the build's objects (for a
    usage recorded before a unit of libattn was known to the graph), and corpora made from a
    pinned list standing for their pins."""
    units = library_units(build)
    start = [rel for rel in uses if rel in units]
    more = include_closure(unit_closure((), units, start) | (set(uses) - set(UMBRELLAS)))
    out = {rel: uses[rel] for rel in pinned(uses) if rel in uses}
    for rel in sorted(pinned(uses) - set(uses)):
        out[rel] = file_hash(rel)
    for rel in sorted(more):
        if rel not in out and is_library_source(rel):
            out[rel] = file_hash(rel)
    return out
