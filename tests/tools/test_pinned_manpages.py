#!/usr/bin/python3
"""tools/pinned_manpages.py on a small fixture: fake packages of tiny manual pages, a fake apt-get.

Checks that record pins the English pages of the five sections and leaves out aliases
(`.so` pages and links) and other languages; that fetch unpacks exactly the pinned pages,
names a page whose bytes differ and then changes nothing, and never overwrites a folder
it did not make; that corpus renders each page's DESCRIPTION with groff, one paragraph a
line, refuses to overwrite a file and records its checksum without making the fetched
folder stale; and that check-corpus compares checksums.
"""

import gzip
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_pinned_corpus import fake_archive, make_deb, sha  # noqa: E402  (the same fake archive)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "tools", "pinned_manpages.py")


def page(name, section, *paragraphs):
    """A manual page in roff (the man macros), gzipped as Debian ships it."""
    body = "\n.PP\n".join(paragraphs)
    roff = (f'.\\" a comment first, as real pages have\n.TH {name.upper()} {section} 2024-01-01 "fixture"\n'
            f".SH NAME\n{name} \\- a fixture page\n.SH SYNOPSIS\n.B {name}\n.SH DESCRIPTION\n{body}\n"
            f".SH SEE ALSO\n.BR other (1)\n")
    return gzip.compress(roff.encode(), mtime=0)


OPEN = page("open", 2, "The open() system call opens a file.\nIt returns a descriptor.", "A second paragraph.")
LS = page("ls", 1, "List information about the files.")
FSTAB = page("fstab", 5, "The file fstab contains descriptive information.")
ALIAS = gzip.compress(b".so man2/open.2\n", mtime=0)
MAN = "usr/share/man/"


class PinnedManpages(unittest.TestCase):
    def setUp(self):
        self.tmp, self.archive, self.apt = fake_archive()
        make_deb(self.archive, "pkgdev", "1.0", {MAN + "man2/open.2.gz": OPEN, MAN + "man2/creat.2.gz": ALIAS,
                                                 MAN + "fr/man2/open.2.gz": page("open", 2, "En français."),
                                                 MAN + "man7/signal.7.gz": page("signal", 7, "Not pinned.")})
        make_deb(self.archive, "pkgutil", "2.0", {MAN + "man1/ls.1.gz": LS, MAN + "man5/fstab.5.gz": FSTAB})
        self.manifest = os.path.join(self.tmp, "manifest.json")
        self.cache = os.path.join(self.tmp, "cache")
        self.dest = os.path.join(self.tmp, "manpages")

    def run_script(self, *args):
        env = dict(os.environ, ARCHIVE=self.archive)
        return subprocess.run([sys.executable, SCRIPT, "--manifest", self.manifest, "--cache", self.cache,
                               "--apt-get", self.apt] + list(args),
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def record_and_fetch(self):
        r = self.run_script("record", "pkgdev", "pkgutil")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.run_script("fetch", "--dest", self.dest)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_record_pins_english_pages_of_the_five_sections_and_no_alias(self):
        r = self.run_script("record", "pkgdev", "pkgutil")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.manifest) as f:
            m = json.load(f)
        pages = {p["name"]: p["pages"] for p in m["packages"]}
        self.assertEqual(pages["pkgdev"], {"man2/open.2.gz": sha(OPEN)})  # no alias, French or section 7
        self.assertEqual(pages["pkgutil"], {"man1/ls.1.gz": sha(LS), "man5/fstab.5.gz": sha(FSTAB)})
        self.assertEqual(sorted(m["sections"]), ["1", "2", "3", "5", "8"])

    def test_fetch_unpacks_the_pinned_pages_and_names_one_that_differs(self):
        self.record_and_fetch()
        got = sorted(os.path.relpath(os.path.join(d, f), self.dest) for d, _, fs in os.walk(self.dest) for f in fs)
        self.assertEqual(got, ["PINNED", "man1/ls.1.gz", "man2/open.2.gz", "man5/fstab.5.gz"])
        with open(self.manifest) as f:
            m = json.load(f)
        m["packages"][0]["pages"]["man2/open.2.gz"] = sha(b"other bytes")
        with open(self.manifest, "w") as f:
            json.dump(m, f)
        r = self.run_script("fetch", "--dest", self.dest)
        self.assertEqual(r.returncode, 1)
        self.assertIn("1 page(s) differ", r.stderr)
        self.assertIn("man2/open.2.gz (package pkgdev 1.0)", r.stderr)
        with open(os.path.join(self.dest, "man2", "open.2.gz"), "rb") as f:
            self.assertEqual(f.read(), OPEN)  # the folder as it was
        self.assertEqual([f for f in os.listdir(self.tmp) if f.startswith(".pinned-")], [])

    def test_a_folder_the_user_made_is_never_overwritten(self):
        self.assertEqual(self.run_script("record", "pkgdev", "pkgutil").returncode, 0)
        os.makedirs(self.dest)
        with open(os.path.join(self.dest, "notes.txt"), "w") as f:
            f.write("mine")
        r = self.run_script("fetch", "--dest", self.dest)
        self.assertEqual(r.returncode, 1)
        self.assertIn("was not made by this script", r.stderr)
        self.assertEqual(os.listdir(self.dest), ["notes.txt"])

    def test_corpus_renders_each_description_and_records_its_checksum(self):
        self.record_and_fetch()
        out = os.path.join(self.tmp, "corpus.jsonl")
        r = self.run_script("corpus", "--src", self.dest, "--out", out, "--record")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            docs = [json.loads(line) for line in f]
        self.assertEqual([(d["page"], d["section"], d["package"]) for d in docs],
                         [("ls.1", "1", "pkgutil"), ("open.2", "2", "pkgdev"), ("fstab.5", "5", "pkgutil")])
        self.assertEqual(docs[1]["paragraphs"], ["The open() system call opens a file. It returns a descriptor.",
                                                 "A second paragraph."])
        r = self.run_script("check-corpus", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        # The recorded checksum changed the manifest, not the pages: the folder is still the pinned one.
        r = self.run_script("corpus", "--src", self.dest, "--out", out)
        self.assertEqual(r.returncode, 1)
        self.assertIn("exists", r.stderr)  # and nothing was overwritten
        again = os.path.join(self.tmp, "again.jsonl")
        self.assertEqual(self.run_script("corpus", "--src", self.dest, "--out", again).returncode, 0)
        with open(out, "rb") as a, open(again, "rb") as b:
            self.assertEqual(a.read(), b.read())  # the same bytes twice
        with open(again, "a") as f:
            f.write("\n")
        r = self.run_script("check-corpus", again)
        self.assertEqual(r.returncode, 1)
        self.assertIn("the pinned corpus has", r.stderr)
        r = self.run_script("check-corpus", os.path.join(self.tmp, "missing.jsonl"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("missing.jsonl: no such file (made by: tools/pinned_manpages.py corpus", r.stderr)


    def test_no_page_hyphenates_not_even_one_that_asks_to(self):
        # mdoc pages (this one) call .hy themselves, which -rHY=0 does not stop; a word broken at a line end
        # would reach the corpus as two words ("argu‐ ments").
        sys.path.insert(0, os.path.join(ROOT, "tools"))
        import pinned_manpages
        words = " ".join(["internationalization", "authentication", "configurations", "representations"] * 12)
        path = os.path.join(self.tmp, "hy.1.gz")
        with open(path, "wb") as f:
            f.write(gzip.compress(f".Dd January 1, 2024\n.Dt HY 1\n.Os\n.Sh NAME\n.Nm hy\n.Nd an mdoc page\n.Sh DESCRIPTION\n{words}\n"
                                     f".Sh SEE ALSO\nother\n".encode(), mtime=0))
        text = " ".join(pinned_manpages.description(pinned_manpages.render(path)))
        self.assertNotIn("\u2010", text)
        self.assertEqual(text, words)


if __name__ == "__main__":
    unittest.main()
