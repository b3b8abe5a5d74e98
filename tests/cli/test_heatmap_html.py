#!/usr/bin/python3
"""`attn heatmap --html FILE`: the attention explorer of one sentence as a whole HTML page
(cli/explore_page.hpp), for a Transformer, recurrent models and a run on subwords.

    /usr/bin/python3 tests/cli/test_heatmap_html.py build/cli/attn [-v] [TestName...]

Standard library only. Tiny models trained for a few steps: seconds in all. The page is read
as a browser would not need to: one document, its script inline, nothing fetched, and the
data the script draws (the JSON given to attnExplorer) checked against what attn decodes.
"""
import json
import os
import re
import sys
import tempfile
import unittest

import common
from common import TINY, attn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tools"))
from explorer_weights import unpack  # noqa: E402  (the packed weights, read as tools/explorer_browser_test.py reads them)

# 2 encoder and 2 decoder layers of 2 heads: the model view is 2 x 2 for every kind.
TRANSFORMER = ["--model", "transformer", "--set", "d_model=8", "--set", "nhead=2", "--set", "dim_feedforward=16",
               "--set", "num_encoder_layers=2", "--set", "num_decoder_layers=2", "--task", "reverse",
               "--max-length", "6", "--n-train", "50", "--steps", "2", "--batch-size", "4", "--eval-every", "0"]
MONOTONIC = ["--model", "monotonic", "--set", "embed_dim=4", "--set", "encoder_dim=4", "--set", "decoder_dim=8",
             "--set", "attention_dim=4", "--task", "copy", "--max-length", "6", "--n-train", "100", "--steps", "3",
             "--batch-size", "4", "--eval-every", "0"]
GRID = ["--model", "grid", "--task", "grid", "--steps", "2", "--n-train", "20", "--batch-size", "4",
        "--set", "embed_dim=8", "--set", "decoder_dim=8", "--set", "attention_dim=8"]
PAIRS = ["Cannot open the file.\tImpossible d'ouvrir le fichier.", "Close the window.\tFermer la fen\u00eatre.",
         "Save the file.\tEnregistrer le fichier.", "Reopen the files.\tRouvrir les fichiers."] * 4

# The one call the page makes, on one line: attnExplorer(document.getElementById("ID"), {...});</script>
# (the script's own comments show the call too, but not followed by the end of the element).
CALL = re.compile(r'attnExplorer\(document\.getElementById\("([^"]+)"\), (\{[^\n]*\})\);</script>')
SPECIALS = ("<pad>", "<bos>", "<unk>")  # what translate leaves out of an output
# The only addresses a page may hold: XML namespaces, which name and fetch nothing.
NAMESPACES = ("http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink", "http://www.w3.org/1999/xhtml")


class HeatmapHtml(common.ScratchTest):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="attn_heatmap_html_")
        cls.runs = {"transformer": TRANSFORMER, "bahdanau": [*TINY, "--steps", "20", "--eval-every", "0"],
                    "monotonic": MONOTONIC, "grid": GRID}
        corpus = cls.path("pairs.tsv")
        with open(corpus, "w", encoding="utf-8") as f:
            f.write("\n".join(PAIRS) + "\n")
        cls.runs["bpe"] = ["--task", corpus, "--bpe", "30", "--steps", "2", "--batch-size", "4", "--eval-every", "0",
                           "--set", "embed_dim=4", "--set", "encoder_dim=4", "--set", "decoder_dim=4",
                           "--set", "attention_dim=4"]
        for name, args in list(cls.runs.items()):
            status, out, err = attn("train", *args, "--out", cls.path(name))
            assert status == 0, f"{name}: {err}"
            cls.runs[name] = cls.path(name)


    def translation(self, run, text, *extra):
        """What `attn translate` writes for `text`: the output's tokens (no <eos>)."""
        out = self.ok("translate", "--checkpoint", run, *extra, text)
        return out.split("  ->  ", 1)[1].rstrip("\n").split()

    def page(self, run, text, *extra, name="page.html"):
        """Writes the page of `text` (replacing an earlier one) and returns (its text, its explorer's data),
        having checked it is one self-contained document."""
        html = self.path(name)
        self.assertEqual(self.ok("heatmap", "--checkpoint", run, text, *extra, "--html", html, "--overwrite"),
                         f"wrote {html}\n")
        with open(html, encoding="utf-8") as f:
            page = f.read()
        self.assertTrue(page.startswith("<!DOCTYPE html>\n"), page[:80])
        self.assertTrue(page.endswith("</html>\n"))
        for once in ("<!DOCTYPE", "<html", "<head>", "</head>", "<body>", "</body>", "</html>", "<script>",
                     "</script>", '<meta charset="utf-8">'):
            self.assertEqual(page.count(once), 1, once)
        self.assertRegex(page, r"<title>attn: [^<]+</title>")
        # Inline only: no script, style or picture from elsewhere, no address but XML namespaces.
        self.assertNotRegex(page, r"<script[^>]*\bsrc\s*=")
        self.assertNotRegex(page, r"<link\b")
        self.assertNotIn("@import", page)
        for match in re.finditer(r"\b(?:src|href)\s*=\s*[\"']?([^\"'\s>]*)", page):
            # (the static picture is a data: URI, inside the page)
            self.assertFalse(re.match(r"(?:[a-z]+:|//)", match.group(1)) and not match.group(1).startswith("data:"),
                             match.group(0)[:80])
        for match in re.finditer(r"https?:[^\s\"')]*", page):
            self.assertIn(match.group(0), NAMESPACES)
        calls = CALL.findall(page)
        self.assertEqual(len(calls), 1)
        view, data = calls[0]
        self.assertIn(f'id="{view}"', page)  # the call draws into this page's own element
        data = json.loads(data)
        self.assertEqual(data["id"], view)
        for a in data["attentions"]:
            unpack(a)
        return page, data

    def check_steps(self, data, outputs, source, distributions=True):
        """One step per decoded token: read as translate reads them (specials dropped, up to <eos>),
        the steps are the output; each row weighs the source (a distribution unless a hard alignment)."""
        tokens, words = [s["token"] for s in data["steps"]], []
        self.assertTrue(tokens, "no decoding steps")
        for i, token in enumerate(tokens):
            if token == "<eos>":
                self.assertEqual(i, len(tokens) - 1, "a step after <eos>")
            elif token not in SPECIALS:
                words.append(token)
        self.assertEqual(words, outputs)
        self.assertEqual(data["source"], source)
        for step in data["steps"]:
            self.assertEqual(len(step["row"]), len(source))
            if distributions:
                self.assertAlmostEqual(sum(step["row"]), 1.0, places=3)  # weights written at 4 significant digits

    def test_transformer_every_layer_and_head(self):
        text = "1 2 3"
        outputs = self.translation(self.runs["transformer"], text)
        page, data = self.page(self.runs["transformer"], text)
        self.check_steps(data, outputs, ["1", "2", "3"])
        steps = len(data["steps"])
        self.assertEqual([a["name"] for a in data["attentions"]], ["encoder self", "decoder self", "cross"])
        for a in data["attentions"]:
            self.assertEqual(len(a["weights"]), 2, a["name"])  # layers
            self.assertTrue(all(len(layer) == 2 for layer in a["weights"]), a["name"])  # heads
            rows, cols = {"encoder self": (3, 3), "decoder self": (steps, steps), "cross": (steps, 3)}[a["name"]]
            self.assertEqual((len(a["rows"]), len(a["cols"])), (rows, cols), a["name"])
            for layer in a["weights"]:
                for head in layer:
                    self.assertEqual([len(r) for r in head], [cols] * rows)
                    for r in head:
                        self.assertAlmostEqual(sum(r), 1.0, places=3)
        cross = next(a for a in data["attentions"] if a["name"] == "cross")
        self.assertEqual(cross["rows"][0], "<bos>")  # queries: the decoder's inputs, teacher-forced
        self.assertEqual(cross["rows"][1:], [s["token"] for s in data["steps"]][:-1])
        self.assertTrue(all("beam" not in s for s in data["steps"]))  # greedy: no hypotheses

    def test_beam_search_hypotheses(self):
        text = "1 2 3"
        outputs = self.translation(self.runs["transformer"], text, "--beam", "3")
        page, data = self.page(self.runs["transformer"], text, "--beam", "3")
        self.check_steps(data, outputs, ["1", "2", "3"])
        self.assertIn("beam search 3", data["title"])
        for t, step in enumerate(data["steps"]):
            self.assertTrue(step.get("beam"), f"step {t} has no hypotheses")
            self.assertLessEqual(len(step["beam"]), 3)
            for hypothesis in step["beam"]:
                self.assertEqual(len(hypothesis["text"].split()), t + 1)  # a prefix of t + 1 tokens
                self.assertLessEqual(hypothesis["score"], 0.0)          # a log-probability
        self.fails("heatmap", "--checkpoint", self.runs["transformer"], text, "--length-penalty", "0.6",
                   "--html", self.path("x.html"), message="add --beam 2 or more")

    def test_recurrent_model(self):
        text = "1 2 3 4"
        outputs = self.translation(self.runs["bahdanau"], text)
        page, data = self.page(self.runs["bahdanau"], text)
        self.check_steps(data, outputs, text.split())
        self.assertEqual([a["name"] for a in data["attentions"]], ["attention"])
        weights = data["attentions"][0]["weights"]
        self.assertEqual((len(weights), len(weights[0])), (1, 1))  # one layer, one head
        self.assertEqual(len(weights[0][0]), len(data["steps"]))
        for t, step in enumerate(data["steps"]):  # the teacher-forced rows are the decoding's own
            for a, b in zip(weights[0][0][t], step["row"]):
                self.assertAlmostEqual(a, b, places=3)
        self.assertTrue(all("path" not in s and "gate" not in s for s in data["steps"]))

    def test_monotonic_expected_position(self):
        text = "1 2 3 4 5"
        page, data = self.page(self.runs["monotonic"], text, "--beam", "2")
        self.check_steps(data, self.translation(self.runs["monotonic"], text, "--beam", "2"), text.split(),
                         distributions=False)  # its decoding is hard: one source token, or none, per step
        # The path is the soft alignment's (teacher-forced on the same output, the head view's
        # "attention"), over the mass left on the source: not the hard row's pointer.
        soft = next(a for a in data["attentions"] if a["name"] == "attention")["weights"][0][0]
        self.assertEqual(len(soft), len(data["steps"]))
        for step, row in zip(data["steps"], soft):
            self.assertAlmostEqual(step["path"], sum(j * w for j, w in enumerate(row)) / sum(row), places=3)
            self.assertTrue(step["beam"])

    def test_subwords_merged_to_words(self):
        run, text = self.runs["bpe"], "Save the file."  # (the longest pair is dropped: more than 12 pieces)
        page, data = self.page(run, text)
        words = ["save", "the", "file", "."]  # the run lowercases, as it trained
        self.assertEqual(data["source"], words)  # the steps weigh the words typed
        self.assertEqual(data["attentions"][0]["cols"], words)
        self.assertFalse(any("@@" in c for a in data["attentions"] for c in a["rows"] + a["cols"]))
        for step in data["steps"]:
            self.assertAlmostEqual(sum(step["row"]), 1.0, places=3)
        page, pieces = self.page(run, text, "--no-merge-subwords")
        self.assertGreater(len(pieces["source"]), len(words))  # "save" is pieces
        self.assertEqual(len(pieces["steps"]), len(data["steps"]))  # a step is one piece either way

    def test_html_and_out_together(self):
        svg, html = self.path("both.svg"), self.path("both.html")
        out = self.ok("heatmap", "--checkpoint", self.runs["bahdanau"], "1 2 3", "--out", svg, "--html", html)
        self.assertEqual(out, f"wrote {svg}\nwrote {html}\n")
        self.assertTrue(os.path.isfile(svg) and os.path.isfile(html))
        same = self.path("same.html")
        self.fails("heatmap", "--checkpoint", self.runs["bahdanau"], "1 2 3", "--out", same, "--html", same,
                   message=("--out", "--html", "the same file"))
        self.assertFalse(os.path.exists(same))
        self.fails("heatmap", "--checkpoint", self.runs["bahdanau"], "1 2 3", message=("--out", "--html"))
        self.fails("heatmap", "--checkpoint", self.runs["transformer"], "1 2 3", "--layer", "0",
                   "--html", self.path("layer.html"), message=("--layer", "--html", "--out"))

    def test_not_a_translation_model(self):
        html = self.path("grid.html")
        self.fails("heatmap", "--checkpoint", self.runs["grid"], "red square top left", "--html", html,
                   message=("--html", "grid captioner (grid)", "--out"))
        self.assertFalse(os.path.exists(html))

    def test_users_file_is_kept(self):
        """An existing file is replaced only with --overwrite; a file of the run or a link never."""
        mine = self.path("mine.html")
        data = b"<p>my own notes</p>\n"
        with open(mine, "wb") as f:
            f.write(data)
        self.fails("heatmap", "--checkpoint", self.runs["bahdanau"], "1 2", "--html", mine,
                   message=("--html " + mine, "exists", "--overwrite"))
        with open(mine, "rb") as f:
            self.assertEqual(f.read(), data)
        run = self.runs["bahdanau"]
        for victim in (os.path.join(run, "loss.svg"), os.path.join(common.unit(run), "config.json")):
            with open(victim, "rb") as f:
                before = f.read()
            self.fails("heatmap", "--checkpoint", run, "1 2", "--html", victim, "--overwrite",
                       message=("--html", "a file of the run"))
            with open(victim, "rb") as f:
                self.assertEqual(f.read(), before)
        link = self.path("link.html")
        os.symlink(mine, link)
        self.fails("heatmap", "--checkpoint", run, "1 2", "--html", link, "--overwrite",
                   message=("--html " + link, "symbolic link"))
        with open(mine, "rb") as f:
            self.assertEqual(f.read(), data)
        self.ok("heatmap", "--checkpoint", run, "1 2", "--html", mine, "--overwrite")
        with open(mine, encoding="utf-8") as f:
            self.assertTrue(f.read().startswith("<!DOCTYPE html>"))
        self.assertEqual([n for n in os.listdir(self.tmp) if ".tmp." in n], [])  # no temporary file left


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_heatmap_html.py PATH/TO/attn [unittest arguments]")
    common.ATTN = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
