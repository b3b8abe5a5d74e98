#!/usr/bin/python3
"""tools/pinned_corpus.py on a small fixture: two fake packages, a fake apt-get.

Checks that fetch unpacks exactly the pinned catalogs and checks their bytes, that a
catalog with other bytes is named and nothing is changed, that a version gone from the
archive is replaced by a newer one only when its catalogs are the recorded ones, that a
folder the user made is never overwritten, and that check-corpus compares checksums.
"""

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "tools", "pinned_corpus.py")


def sha(data):
    return hashlib.sha256(data).hexdigest()


def make_deb(archive, name, version, files):
    """A real .deb (dpkg-deb --build) holding files {relative path: bytes}."""
    tree = tempfile.mkdtemp()
    os.makedirs(os.path.join(tree, "DEBIAN"))
    with open(os.path.join(tree, "DEBIAN", "control"), "w") as f:
        f.write(f"Package: {name}\nVersion: {version}\nArchitecture: all\n"
                f"Maintainer: attn tests <tests@example.org>\nDescription: fixture\n")
    for rel, data in files.items():
        path = os.path.join(tree, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    deb = os.path.join(archive, f"{name}_{version.replace(':', '%3a')}_all.deb")
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", tree, deb],
                   check=True, stdout=subprocess.DEVNULL)
    return deb


# A stand-in for `apt-get download SPEC`: copies NAME_VERSION from the fixture's archive
# (the newest version for a bare NAME), as apt-get does into the working folder.
FAKE_APT = textwrap.dedent("""\
    #!/bin/sh
    spec="$3"; name="${spec%%=*}"; version=""
    [ "$spec" != "$name" ] && version="${spec#*=}"
    if [ -n "$version" ]; then
      f="$ARCHIVE/${name}_${version}_all.deb"
      [ -f "$f" ] || { echo "E: Version '$version' for '$name' was not found" >&2; exit 100; }
    else
      f=$(ls "$ARCHIVE/${name}"_*_all.deb 2>/dev/null | sort | tail -n1)
      [ -n "$f" ] || { echo "E: Unable to locate package $name" >&2; exit 100; }
    fi
    cp "$f" .
    """)

def fake_archive():
    """A temporary folder, an empty archive in it, and the fake apt-get that serves it."""
    tmp = tempfile.mkdtemp()
    archive = os.path.join(tmp, "archive")
    os.makedirs(archive)
    apt = os.path.join(tmp, "apt-get")
    with open(apt, "w") as f:
        f.write(FAKE_APT)
    os.chmod(apt, 0o755)
    return tmp, archive, apt


MO_A = b"catalog a: " + bytes(range(256))
MO_B = b"catalog b, french"
MO_B_DE = b"catalog b, german"


class PinnedCorpus(unittest.TestCase):
    def setUp(self):
        self.tmp, self.archive, self.apt = fake_archive()
        loc = "usr/share/locale/{}/LC_MESSAGES/{}"
        make_deb(self.archive, "pkga", "1.0", {loc.format("fr", "a.mo"): MO_A,
                                               loc.format("es", "a.mo"): b"not pinned"})
        make_deb(self.archive, "pkgb", "2.0", {loc.format("fr", "b.mo"): MO_B,
                                               loc.format("de", "b.mo"): MO_B_DE})
        self.manifest = os.path.join(self.tmp, "manifest.json")
        self.write_manifest({"pkga": ("1.0", {"fr/a.mo": sha(MO_A)}),
                             "pkgb": ("2.0", {"fr/b.mo": sha(MO_B), "de/b.mo": sha(MO_B_DE)})})
        self.dest = os.path.join(self.tmp, "locale")
        self.cache = os.path.join(self.tmp, "cache")

    def write_manifest(self, packages, corpora=None):
        m = {"suite": "bookworm", "languages": ["fr", "de"], "corpora": corpora or {},
             "packages": [{"name": n, "version": v, "catalogs": c} for n, (v, c) in packages.items()]}
        with open(self.manifest, "w") as f:
            json.dump(m, f)

    def run_script(self, *args):
        env = dict(os.environ, ARCHIVE=self.archive)
        return subprocess.run([sys.executable, SCRIPT, "--manifest", self.manifest, "--cache", self.cache,
                               "--apt-get", self.apt] + list(args),
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def tree(self, folder):
        out = {}
        for d, _, files in os.walk(folder):
            for f in files:
                with open(os.path.join(d, f), "rb") as fh:
                    out[os.path.relpath(os.path.join(d, f), folder)] = fh.read()
        return out

    def test_fetch_unpacks_exactly_the_pinned_catalogs(self):
        r = self.run_script("fetch", "--dest", self.dest)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = self.tree(self.dest)
        self.assertEqual(got["fr/LC_MESSAGES/a.mo"], MO_A)
        self.assertEqual(got["fr/LC_MESSAGES/b.mo"], MO_B)
        self.assertEqual(got["de/LC_MESSAGES/b.mo"], MO_B_DE)
        self.assertNotIn("es/LC_MESSAGES/a.mo", got)  # in the package, not in the pin
        self.assertEqual(sorted(got), ["PINNED", "de/LC_MESSAGES/b.mo", "fr/LC_MESSAGES/a.mo",
                                       "fr/LC_MESSAGES/b.mo"])
        self.assertIn("3 catalogs", r.stdout)
        # A second fetch finds them there and downloads nothing.
        os.rename(self.archive, self.archive + ".gone")
        r = self.run_script("fetch", "--dest", self.dest)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("already", r.stdout)

    def test_a_catalog_with_other_bytes_is_named_and_nothing_changes(self):
        self.assertEqual(self.run_script("fetch", "--dest", self.dest).returncode, 0)
        before = self.tree(self.dest)
        self.write_manifest({"pkga": ("1.0", {"fr/a.mo": sha(b"other bytes")}),
                             "pkgb": ("2.0", {"fr/b.mo": sha(MO_B), "de/b.mo": sha(MO_B_DE)})})
        r = self.run_script("fetch", "--dest", self.dest)
        self.assertEqual(r.returncode, 1)
        self.assertIn("1 catalog(s) differ", r.stderr)
        self.assertIn("fr/a.mo (package pkga 1.0)", r.stderr)
        self.assertNotIn("b.mo", r.stderr)
        self.assertEqual(self.tree(self.dest), before)
        self.assertEqual([f for f in os.listdir(self.tmp) if f.startswith(".pinned-")], [])

    def test_a_catalog_missing_from_the_package_is_named(self):
        self.write_manifest({"pkga": ("1.0", {"fr/a.mo": sha(MO_A), "fr/gone.mo": sha(b"x")})})
        r = self.run_script("fetch", "--dest", self.dest)
        self.assertEqual(r.returncode, 1)
        self.assertIn("fr/gone.mo (package pkga 1.0): missing from the package", r.stderr)
        self.assertFalse(os.path.exists(self.dest))

    def test_a_newer_version_is_taken_only_with_the_same_catalogs(self):
        os.remove(os.path.join(self.archive, "pkga_1.0_all.deb"))
        make_deb(self.archive, "pkga", "1.1", {"usr/share/locale/fr/LC_MESSAGES/a.mo": MO_A})
        r = self.run_script("fetch", "--dest", self.dest)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("pkga 1.0 is no longer in the archive; trying 1.1", r.stdout)
        with open(os.path.join(self.dest, "PINNED")) as f:
            self.assertEqual(json.load(f)["versions"]["pkga"], "1.1")
        # Now a newer version whose translation changed: refused, and named.
        for f in os.listdir(self.cache):
            os.remove(os.path.join(self.cache, f))
        os.remove(os.path.join(self.archive, "pkga_1.1_all.deb"))
        make_deb(self.archive, "pkga", "1.2", {"usr/share/locale/fr/LC_MESSAGES/a.mo": b"retranslated"})
        self.write_manifest({"pkga": ("1.0", {"fr/a.mo": sha(MO_A)})})  # a new manifest: fetch again
        r = self.run_script("fetch", "--dest", self.dest)
        self.assertEqual(r.returncode, 1)
        self.assertIn("fr/a.mo (package pkga 1.2): sha256", r.stderr)

    def test_a_package_the_archive_does_not_have_is_named(self):
        self.write_manifest({"nosuch": ("1.0", {"fr/n.mo": sha(b"n")})})
        r = self.run_script("fetch", "--dest", self.dest)
        self.assertEqual(r.returncode, 1)
        self.assertIn("apt-get download nosuch failed", r.stderr)
        self.assertIn("apt-get update", r.stderr)

    def test_a_folder_the_user_made_is_never_overwritten(self):
        os.makedirs(os.path.join(self.dest, "fr", "LC_MESSAGES"))
        mine = os.path.join(self.dest, "fr", "LC_MESSAGES", "mine.mo")
        with open(mine, "wb") as f:
            f.write(b"the user's own")
        r = self.run_script("fetch", "--dest", self.dest)
        self.assertEqual(r.returncode, 1)
        self.assertIn("was not made by this script", r.stderr)
        self.assertEqual(self.tree(self.dest), {"fr/LC_MESSAGES/mine.mo": b"the user's own"})

    def test_check_corpus_compares_the_recorded_checksum(self):
        corpus = os.path.join(self.tmp, "en-fr.tsv")
        with open(corpus, "wb") as f:
            f.write(b"open\touvrir\n")
        self.write_manifest({}, corpora={"fr": {"sha256": sha(b"open\touvrir\n"), "command": "c"}})
        self.assertEqual(self.run_script("check-corpus", corpus, "--lang", "fr").returncode, 0)
        with open(corpus, "ab") as f:
            f.write(b"close\tfermer\n")
        r = self.run_script("check-corpus", corpus, "--lang", "fr")
        self.assertEqual(r.returncode, 1)
        self.assertIn("the pinned corpus has", r.stderr)
        r = self.run_script("check-corpus", corpus, "--lang", "de")
        self.assertEqual(r.returncode, 1)
        self.assertIn("no corpus checksum recorded for --lang de", r.stderr)


class RecordedManifest(unittest.TestCase):
    def test_the_repository_manifest_is_complete(self):
        with open(os.path.join(ROOT, "data", "pinned", "gettext-bookworm.json")) as f:
            m = json.load(f)
        self.assertEqual(m["languages"], ["fr", "de"])
        self.assertGreaterEqual(sum(c.startswith("fr/") for p in m["packages"] for c in p["catalogs"]), 50)
        for lang in ("fr", "de"):
            self.assertEqual(len(m["corpora"][lang]["sha256"]), 64)


if __name__ == "__main__":
    unittest.main()
