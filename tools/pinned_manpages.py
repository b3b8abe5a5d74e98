#!/usr/bin/python3
"""The pinned manual pages: the same documents, labelled by section, on every Debian 12 machine.

The documents chapter classifies manual pages by their section (1 commands, 2 system
calls, 3 library functions, 5 file formats, 8 administration) from the words of their
DESCRIPTION. What /usr/share/man holds depends on what a machine has installed (and
minimal images drop it), so the course pins Debian packages instead:
data/pinned/manpages-bookworm.json names each package, the version it was recorded at
and the SHA-256 of every English page it carries in those sections. This script fetches
the packages with `apt-get download` (no install, no root), unpacks only the pinned pages,
checks every checksum, and renders them with groff into one JSON-lines corpus whose
checksum is recorded too.

    tools/pinned_manpages.py fetch                       # -> manpages/man<N>/*.<N>.gz
    tools/pinned_manpages.py corpus --out manpages.jsonl # render: one document per line
    tools/pinned_manpages.py check-corpus manpages.jsonl
    tools/pinned_manpages.py record PKG...               # maintainers: write the manifest
    tools/pinned_manpages.py corpus --out F --record     # maintainers: record its checksum

A line of the corpus: {"page": "open.2", "package": "manpages-dev", "section": "2",
"paragraphs": ["The open() system call opens the file specified by pathname.", ...]},
the paragraphs of the page's DESCRIPTION as groff 1.22.4 lays them out (78 columns, no
hyphenation, left-adjusted), each joined into one line. Pages are in the order of their
path, so the file is the same bytes on every machine with Debian 12's groff.

As for the message catalogs (tools/pinned_corpus.py), a version gone from the archive is
replaced by the newer one only when its pinned pages are byte for byte the recorded ones.
The unpacked folder carries a PINNED file; a folder without it is the user's and is never
overwritten, nor is an existing --out file.
"""

import argparse
import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pinned_corpus  # noqa: E402
from pinned_corpus import PinError, apt_download, default_cache, fetch_deb, sha256_file  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MANIFEST = os.path.join(ROOT, "data", "pinned", "manpages-bookworm.json")
MARKER = "PINNED"
SECTIONS = {"1": "commands", "2": "system calls", "3": "library functions", "5": "file formats",
            "8": "administration"}
TOOL = "pinned_manpages"


def load_manifest(path):
    return pinned_corpus.load_manifest(path, keys=("suite", "sections", "packages"),
                                       entry_keys=("name", "version", "pages"))


def english_page(member, sections):
    """'man2/open.2.gz' for './usr/share/man/man2/open.2.gz' in a pinned section, else None."""
    m = re.fullmatch(r"\./usr/share/man/(man([0-9])/[^/]+\.\2[a-z]*\.gz)", member)
    return m.group(1) if m and m.group(2) in sections else None


def is_redirect(path):
    """A page that only says `.so other/page` (an alias): its words are another page's."""
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith(('.\\"', "'\\\"")) or not line.strip():  # comments
                continue
            return line.startswith(".so ")
    return True


def unpack(deb, members, into):
    """Extracts the named pages (paths under usr/share/man) of a .deb into a folder."""
    return pinned_corpus.unpack_catalogs(deb, members, into, under="usr/share/man")


def pages_digest(m):
    """What the pinned folder is made from: the packages and their pages (not the corpus
    checksum, which `corpus --record` writes after the pages are fetched)."""
    return hashlib.sha256(json.dumps(m["packages"], sort_keys=True).encode()).hexdigest()


def already_there(m, dest):
    """True when dest was made from these pinned pages and every page still has its checksum."""
    try:
        with open(os.path.join(dest, MARKER), encoding="utf-8") as f:
            if json.load(f).get("pages_sha256") != pages_digest(m):
                return False
        for pkg in m["packages"]:
            for page, digest in pkg["pages"].items():
                if sha256_file(os.path.join(dest, page)) != digest:
                    return False
    except (OSError, ValueError):
        return False
    return True


def fetch(args, log=print):
    m = load_manifest(args.manifest)
    dest = os.path.abspath(args.dest)
    if os.path.exists(dest) and os.listdir(dest) and not os.path.isfile(os.path.join(dest, MARKER)):
        raise PinError(f"{dest} exists and was not made by this script (no {MARKER} file): "
                       f"move it away or give another --dest; nothing was changed")
    if already_there(m, dest):
        log(f"{TOOL}: the pinned pages are in {dest} already, every checksum as recorded")
        return 0
    cache = os.path.abspath(args.cache)
    os.makedirs(cache, exist_ok=True)
    work = tempfile.mkdtemp(prefix=".pinned-", dir=os.path.dirname(dest) or ".")
    try:
        unpacked = os.path.join(work, "deb")
        staged = os.path.join(work, "manpages")
        os.makedirs(unpacked)
        differ, versions = [], {}
        for pkg in m["packages"]:
            deb, got = fetch_deb(pkg, cache, args.apt_get, log, tool=TOOL, what="pages")
            versions[pkg["name"]] = got
            unpack(deb, sorted(pkg["pages"]), unpacked)
            for page, digest in sorted(pkg["pages"].items()):
                src = os.path.join(unpacked, "usr", "share", "man", page)
                if not os.path.isfile(src):
                    differ.append(f"{page} (package {pkg['name']} {got}): missing from the package")
                    continue
                have = sha256_file(src)
                if have != digest:
                    differ.append(f"{page} (package {pkg['name']} {got}): sha256 {have[:12]}..., "
                                  f"recorded {digest[:12]}...")
                    continue
                os.makedirs(os.path.join(staged, os.path.dirname(page)), exist_ok=True)
                os.replace(src, os.path.join(staged, page))
        if differ:
            raise PinError(f"{len(differ)} page(s) differ from {os.path.relpath(args.manifest, ROOT)}; "
                           f"nothing was changed in {dest}:\n  " + "\n  ".join(differ))
        count = sum(len(fs) for _, _, fs in os.walk(staged))
        with open(os.path.join(staged, MARKER), "w", encoding="utf-8") as f:
            json.dump({"manifest": os.path.relpath(args.manifest, ROOT), "pages_sha256": pages_digest(m),
                       "versions": versions},
                      f, indent=1, sort_keys=True)
            f.write("\n")
        # Swap the new folder in by renames, so a kill leaves the old folder or the new one.
        if os.path.exists(dest):
            os.rename(dest, os.path.join(work, "old"))
        os.rename(staged, dest)
        log(f"{TOOL}: {count} pages from {len(versions)} packages in {dest}, every checksum as recorded")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def render(path):
    """The page laid out by groff as plain text lines (no bold, underline or overstrike)."""
    with gzip.open(path, "rb") as f:
        roff = f.read()
    # -rHY=0 turns hyphenation off for man(7) pages only; mdoc(7) pages call .hy themselves.
    # An empty .hy macro shadows the request, so no page can turn it back on.
    roff = b".de hy\n..\n.nh\n" + roff
    r = subprocess.run(["groff", "-t", "-man", "-Tutf8", "-rLL=78n", "-rHY=0", "-dAD=l", "-P-cbou"],
                       input=roff, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=dict(os.environ, LC_ALL="C.UTF-8"))
    if r.returncode != 0:
        raise PinError(f"{path}: groff failed: {r.stderr.decode(errors='replace').strip()[:300]}")
    return r.stdout.decode("utf-8", errors="replace").splitlines()


def description(lines):
    """The paragraphs of the DESCRIPTION section (a heading at column 0), each one line."""
    paragraphs, current, inside = [], [], False
    for line in lines:
        if line and not line[0].isspace():  # a section heading (NAME, DESCRIPTION, ...)
            if inside:
                break
            inside = line.strip() == "DESCRIPTION"
            continue
        if not inside:
            continue
        if line.strip():
            current.append(line.strip())
        elif current:
            paragraphs.append(" ".join(current))
            current = []
    if current:
        paragraphs.append(" ".join(current))
    return [re.sub(r"\s+", " ", p) for p in paragraphs]


def corpus(args, log=print):
    m = load_manifest(args.manifest)
    src = os.path.abspath(args.src)
    if not already_there(m, src):
        raise PinError(f"{src}: not the pinned pages of {os.path.relpath(args.manifest, ROOT)} "
                       f"(run tools/pinned_manpages.py fetch first)")
    if os.path.exists(args.out):
        raise PinError(f"{args.out} exists: give another --out or move it away; nothing was written")
    owner = {page: pkg["name"] for pkg in m["packages"] for page in pkg["pages"]}
    docs, empty = [], 0
    # Rendering takes a minute or two: a line at the start, then one every 15 s with the share done and the time left.
    started = last = time.monotonic()
    log(f"{TOOL}: rendering {len(owner)} pages with man into {args.out}...")
    for done, page in enumerate(sorted(owner)):
        now = time.monotonic()
        if done and now - last >= 15:
            last = now
            left = (now - started) * (len(owner) - done) / done
            log(f"{TOOL}: rendered {done} of {len(owner)} pages ({100 * done / len(owner):.0f}%), "
                f"{int(now - started) // 60}:{int(now - started) % 60:02d} so far, about "
                f"{int(left) // 60}:{int(left) % 60:02d} left")
        paragraphs = description(render(os.path.join(src, page)))
        if not paragraphs:
            empty += 1
            continue
        name = os.path.basename(page)[:-len(".gz")]
        docs.append({"page": name, "package": owner[page], "section": page[len("man")], "paragraphs": paragraphs})
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps(d, ensure_ascii=False, sort_keys=True) + "\n")
    os.replace(tmp, args.out)
    digest = sha256_file(args.out)
    by_section = {s: sum(d["section"] == s for d in docs) for s in sorted(m["sections"])}
    log(f"{TOOL}: {len(docs)} documents in {args.out} ({', '.join(f'section {s}: {n}' for s, n in by_section.items())}; "
        f"{empty} pages without a DESCRIPTION left out), sha256 {digest[:12]}...")
    if args.record:
        m["corpus"] = {"command": "tools/pinned_manpages.py corpus --out manpages.jsonl", "documents": len(docs),
                       "by_section": by_section, "sha256": digest}
        write_manifest(m, args.manifest)
        log(f"{TOOL}: its checksum recorded in {args.manifest}")
    return 0


def check_corpus(args, log=print):
    m = load_manifest(args.manifest)
    want = m.get("corpus")
    if not want:
        raise PinError(f"{args.manifest}: no corpus checksum recorded")
    if not os.path.isfile(args.file):
        raise PinError(f"{args.file}: no such file (made by: {want['command']})")
    got = sha256_file(args.file)
    if got != want["sha256"]:
        raise PinError(f"{args.file}: sha256 {got}, the pinned corpus has {want['sha256']} "
                       f"(made by: {want['command']}); check the pages with tools/pinned_manpages.py fetch")
    log(f"{TOOL}: {args.file} is the pinned corpus (sha256 {got[:12]}...)")
    return 0


def write_manifest(m, path):
    tmp = path + ".tmp"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(m, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def record(args, log=print):
    """Writes the manifest from the archive's current versions of the given packages."""
    cache = os.path.abspath(args.cache)
    os.makedirs(cache, exist_ok=True)
    packages = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.packages:
            ok, err = apt_download(name, cache, args.apt_get)
            if not ok:
                raise PinError(f"apt-get download {name} failed: {err}")
            deb = max((os.path.join(cache, f) for f in os.listdir(cache)
                       if f.startswith(name + "_") and f.endswith(".deb")), key=os.path.getmtime)
            version = subprocess.run(["dpkg-deb", "-f", deb, "Version"], stdout=subprocess.PIPE,
                                     text=True, check=True).stdout.strip()
            listing = subprocess.run(["dpkg-deb", "--fsys-tarfile", deb], stdout=subprocess.PIPE, check=True).stdout
            members = subprocess.run(["tar", "-t"], input=listing, stdout=subprocess.PIPE, check=True).stdout
            wanted = sorted(p for p in (english_page(x, SECTIONS) for x in members.decode().splitlines()) if p)
            into = os.path.join(tmp, name)
            os.makedirs(into)
            if wanted:
                unpack(deb, wanted, into)
            pages = {}
            for page in wanted:
                path = os.path.join(into, "usr", "share", "man", page)
                # links and `.so` aliases name another page: its words are there once
                if os.path.isfile(path) and not os.path.islink(path) and not is_redirect(path):
                    pages[page] = sha256_file(path)
            if not pages:
                log(f"{TOOL}: {name} carries no English page in sections {', '.join(SECTIONS)}; left out")
                continue
            packages.append({"name": name, "version": version, "pages": pages})
    manifest = {"suite": "bookworm", "sections": SECTIONS, "packages": packages}
    if os.path.exists(args.manifest):
        old = load_manifest(args.manifest)
        if "corpus" in old:
            manifest["corpus"] = old["corpus"]
    write_manifest(manifest, args.manifest)
    log(f"{TOOL}: {len(packages)} packages, {sum(len(p['pages']) for p in packages)} pages recorded in "
        f"{args.manifest}")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", default=MANIFEST, help="the pinned list (default: %(default)s)")
    ap.add_argument("--cache", default=default_cache(), help="where .deb files are kept (default: %(default)s)")
    ap.add_argument("--apt-get", default="apt-get", help=argparse.SUPPRESS)  # tests pass a fake
    sub = ap.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fetch", help="fetch the pinned pages into --dest")
    f.add_argument("--dest", default=os.path.join(ROOT, "manpages"), help="default: %(default)s")
    c = sub.add_parser("corpus", help="render the pinned pages into one JSON-lines file")
    c.add_argument("--src", default=os.path.join(ROOT, "manpages"), help="default: %(default)s")
    c.add_argument("--out", required=True)
    c.add_argument("--record", action="store_true", help="write its checksum into the manifest")
    k = sub.add_parser("check-corpus", help="check a corpus file against the recorded checksum")
    k.add_argument("file")
    r = sub.add_parser("record", help="write the manifest from the archive's current packages")
    r.add_argument("packages", nargs="+")
    args = ap.parse_args(argv)
    try:
        return {"fetch": fetch, "corpus": corpus, "check-corpus": check_corpus, "record": record}[args.command](args)
    except PinError as e:
        print(f"{TOOL}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
