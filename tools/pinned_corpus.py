#!/usr/bin/python3
"""The pinned gettext corpus: the same message catalogs on every Debian 12 machine.

Chapter 10 translates English software messages from gettext catalogs. What
/usr/share/locale holds depends on what a machine has installed, so the course
pins a list of Debian packages instead: data/pinned/gettext-bookworm.json names
each package, the version it was recorded at, and the SHA-256 of every French
and German catalog it carries. This script fetches those packages with
`apt-get download` (no install, no root), unpacks only the pinned catalogs and
checks every checksum. A catalog whose bytes differ is named, and nothing is
installed in its place.

    tools/pinned_corpus.py fetch                 # -> locale/<lang>/LC_MESSAGES/*.mo
    tools/pinned_corpus.py check-corpus en-fr.tsv --lang fr
    tools/pinned_corpus.py record PKG...         # maintainers: write the manifest

The versions are a first choice, not a requirement: when the archive has moved
on to a newer version of a package (Debian keeps only the current one), the
newer .deb is fetched and accepted only if its pinned catalogs are byte for byte
the recorded ones. Translations rarely change in a stable release's updates, so
the corpus stays the same while the versions move.

The unpacked folder carries a PINNED file; a folder without it is the user's
and is never overwritten.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MANIFEST = os.path.join(ROOT, "data", "pinned", "gettext-bookworm.json")
MARKER = "PINNED"


class PinError(Exception):
    """A refusal with a message that names what is wrong."""


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def default_cache():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "attn", "debs")


def load_manifest(path, keys=("suite", "languages", "packages"), entry_keys=("name", "version", "catalogs")):
    """The manifest at path, with every key and every package entry's keys checked."""
    try:
        with open(path, encoding="utf-8") as f:
            m = json.load(f)
    except OSError as e:
        raise PinError(f"{path}: cannot read the manifest ({e.strerror})")
    except json.JSONDecodeError as e:
        raise PinError(f"{path}: not valid JSON ({e})")
    for key in keys:
        if key not in m:
            raise PinError(f"{path}: the manifest has no '{key}'")
    for p in m["packages"]:
        for key in entry_keys:
            if key not in p:
                raise PinError(f"{path}: package entry {p.get('name', '?')} has no '{key}'")
    return m


def apt_download(spec, dest, apt_get):
    """Runs `apt-get download SPEC` in dest; returns (ok, stderr)."""
    r = subprocess.run([apt_get, "download", "-qq", spec], cwd=dest,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return r.returncode == 0, r.stderr.strip()


def find_deb(folder, name, version=None):
    """The .deb of a package in folder (apt-get names it NAME_VERSION_ARCH.deb, ':' as %3a)."""
    prefix = name + "_"
    hits = []
    for f in sorted(os.listdir(folder)):
        if not (f.startswith(prefix) and f.endswith(".deb")):
            continue
        file_version = f[len(prefix):].rsplit("_", 1)[0].replace("%3a", ":")
        if version is None or file_version == version:
            hits.append(os.path.join(folder, f))
    return hits[-1] if hits else None


def fetch_deb(pkg, cache, apt_get, log, tool="pinned_corpus", what="catalogs"):
    """The pinned version from the cache or the archive, else the archive's current one."""
    name, version = pkg["name"], pkg["version"]
    deb = find_deb(cache, name, version)
    if deb:
        return deb, version
    ok, err = apt_download(f"{name}={version}", cache, apt_get)
    if ok and find_deb(cache, name, version):
        return find_deb(cache, name, version), version
    ok, err2 = apt_download(name, cache, apt_get)
    if not ok:
        hint = ""
        if "Unable to locate package" in err2 or "has no installation candidate" in err2:
            hint = " (the package lists may be missing: run `sudo apt-get update` once)"
        raise PinError(f"apt-get download {name} failed{hint}: {err2 or err}")
    newest = None
    for f in sorted(os.listdir(cache)):
        if f.startswith(name + "_") and f.endswith(".deb"):
            path = os.path.join(cache, f)
            if newest is None or os.path.getmtime(path) > os.path.getmtime(newest):
                newest = path
    got = os.path.basename(newest)[len(name) + 1:].rsplit("_", 1)[0].replace("%3a", ":")
    log(f"{tool}: {name} {version} is no longer in the archive; trying {got} "
        f"(accepted only if its {what} are the recorded ones)")
    return newest, got


def unpack_catalogs(deb, members, into, under="usr/share/locale"):
    """Extracts the named members (paths under `under`) of a .deb into a folder."""
    dpkg = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", deb], stdout=subprocess.PIPE)
    tar = subprocess.run(["tar", "-x", "-C", into] + [f"./{under}/{m}" for m in members],
                         stdin=dpkg.stdout, stderr=subprocess.PIPE, text=True)
    dpkg.stdout.close()
    dpkg.wait()
    if dpkg.returncode != 0:
        raise PinError(f"{deb}: dpkg-deb cannot read it (a damaged download? delete it and fetch again)")
    return tar.stderr


def already_there(m, manifest, langs, dest):
    """True when dest was made from this manifest and every catalog still has its checksum."""
    try:
        with open(os.path.join(dest, MARKER), encoding="utf-8") as f:
            if json.load(f).get("manifest_sha256") != sha256_file(manifest):
                return False
        for pkg in m["packages"]:
            for c, digest in pkg["catalogs"].items():
                lang, name = c.split("/", 1)
                if lang in langs and sha256_file(os.path.join(dest, lang, "LC_MESSAGES", name)) != digest:
                    return False
    except (OSError, ValueError):
        return False
    return True


def fetch(args, log=print):
    m = load_manifest(args.manifest)
    langs = set(args.lang or m["languages"])
    dest = os.path.abspath(args.dest)
    if os.path.exists(dest) and os.listdir(dest) and not os.path.isfile(os.path.join(dest, MARKER)):
        raise PinError(f"{dest} exists and was not made by this script (no {MARKER} file): "
                       f"move it away or give another --dest; nothing was changed")
    if already_there(m, args.manifest, langs, dest):
        log(f"pinned_corpus: the pinned catalogs are in {dest} already, every checksum as recorded")
        return 0
    cache = os.path.abspath(args.cache)
    os.makedirs(cache, exist_ok=True)

    work = tempfile.mkdtemp(prefix=".pinned-", dir=os.path.dirname(dest) or ".")
    try:
        unpacked = os.path.join(work, "deb")
        os.makedirs(unpacked)
        differ, versions = [], {}
        for pkg in m["packages"]:
            wanted = sorted(c for c in pkg["catalogs"] if c.split("/", 1)[0] in langs)
            if not wanted:
                continue
            deb, got = fetch_deb(pkg, cache, args.apt_get, log)
            versions[pkg["name"]] = got
            unpack_catalogs(deb, [f"{c.split('/', 1)[0]}/LC_MESSAGES/{c.split('/', 1)[1]}" for c in wanted],
                            unpacked)
            for c in wanted:
                lang, name = c.split("/", 1)
                src = os.path.join(unpacked, "usr", "share", "locale", lang, "LC_MESSAGES", name)
                if not os.path.isfile(src):
                    differ.append(f"{c} (package {pkg['name']} {got}): missing from the package")
                    continue
                digest = sha256_file(src)
                if digest != pkg["catalogs"][c]:
                    differ.append(f"{c} (package {pkg['name']} {got}): sha256 {digest[:12]}..., "
                                  f"recorded {pkg['catalogs'][c][:12]}...")
                    continue
                out = os.path.join(work, "locale", lang, "LC_MESSAGES")
                os.makedirs(out, exist_ok=True)
                os.replace(src, os.path.join(out, name))
        if differ:
            raise PinError(f"{len(differ)} catalog(s) differ from {os.path.relpath(args.manifest, ROOT)}; "
                           f"nothing was changed in {dest}:\n  " + "\n  ".join(differ))
        staged = os.path.join(work, "locale")
        count = sum(len(fs) for _, _, fs in os.walk(staged))
        with open(os.path.join(staged, MARKER), "w", encoding="utf-8") as f:
            json.dump({"manifest": os.path.relpath(args.manifest, ROOT),
                       "manifest_sha256": sha256_file(args.manifest),
                       "versions": versions}, f, indent=1, sort_keys=True)
            f.write("\n")
        # Swap the new folder in by renames, so a kill leaves the old folder or the new one.
        old = None
        if os.path.exists(dest):
            old = os.path.join(work, "old")
            os.rename(dest, old)
        os.rename(staged, dest)
        log(f"pinned_corpus: {count} catalogs ({', '.join(sorted(langs))}) from "
            f"{len(versions)} packages in {dest}, every checksum as recorded")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def check_corpus(args, log=print):
    m = load_manifest(args.manifest)
    want = m.get("corpora", {}).get(args.lang)
    if not want:
        raise PinError(f"{args.manifest}: no corpus checksum recorded for --lang {args.lang}")
    got = sha256_file(args.file)
    if got != want["sha256"]:
        raise PinError(f"{args.file}: sha256 {got}, the pinned corpus has {want['sha256']} "
                       f"(made by: {want['command']}); check the catalogs with tools/pinned_corpus.py fetch")
    log(f"pinned_corpus: {args.file} is the pinned {args.lang} corpus (sha256 {got[:12]}...)")
    return 0


def record(args, log=print):
    """Writes a manifest from the archive's current versions of the given packages."""
    langs = args.lang or ["fr", "de"]
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
            into = os.path.join(tmp, name)
            os.makedirs(into)
            subprocess.run(f"dpkg-deb --fsys-tarfile '{deb}' | tar -x -C '{into}' --wildcards "
                           + " ".join(f"'./usr/share/locale/{l}/LC_MESSAGES/*.mo'" for l in langs)
                           + " 2>/dev/null", shell=True)
            catalogs = {}
            for lang in langs:
                d = os.path.join(into, "usr", "share", "locale", lang, "LC_MESSAGES")
                for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
                    # A link names another catalog of the package (iso-codes has them): its
                    # messages are already there once.
                    if not os.path.islink(os.path.join(d, f)):
                        catalogs[f"{lang}/{f}"] = sha256_file(os.path.join(d, f))
            if not catalogs:
                log(f"pinned_corpus: {name} carries no {'/'.join(langs)} catalog; left out")
                continue
            packages.append({"name": name, "version": version, "catalogs": catalogs})
    manifest = {"suite": "bookworm", "languages": langs, "packages": packages, "corpora": {}}
    if os.path.exists(args.manifest):
        manifest["corpora"] = load_manifest(args.manifest).get("corpora", {})
    tmp = args.manifest + ".tmp"
    os.makedirs(os.path.dirname(args.manifest), exist_ok=True)
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, args.manifest)
    log(f"pinned_corpus: {len(packages)} packages, "
        f"{sum(len(p['catalogs']) for p in packages)} catalogs recorded in {args.manifest}")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", default=MANIFEST, help="the pinned list (default: %(default)s)")
    ap.add_argument("--cache", default=default_cache(), help="where .deb files are kept (default: %(default)s)")
    ap.add_argument("--apt-get", default="apt-get", help=argparse.SUPPRESS)  # tests pass a fake
    sub = ap.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fetch", help="fetch the pinned catalogs into --dest")
    f.add_argument("--dest", default=os.path.join(ROOT, "locale"), help="default: %(default)s")
    f.add_argument("--lang", action="append", help="only these languages (repeatable)")
    c = sub.add_parser("check-corpus", help="check a corpus file against the recorded checksum")
    c.add_argument("file")
    c.add_argument("--lang", default="fr")
    r = sub.add_parser("record", help="write the manifest from the archive's current packages")
    r.add_argument("packages", nargs="+")
    r.add_argument("--lang", action="append")
    args = ap.parse_args(argv)
    try:
        return {"fetch": fetch, "check-corpus": check_corpus, "record": record}[args.command](args)
    except PinError as e:
        print(f"pinned_corpus: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
