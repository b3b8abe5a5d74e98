#!/usr/bin/python3
"""Reference results: held-out BLEU against minutes of training, through the command line.

    tools/reference_results.py run --model bahdanau [--budgets 5,15,45]
    tools/reference_results.py variants [--steps N]
    tools/reference_results.py show

`run` trains one model of RECIPES on the pinned English-French corpus (tools/pinned_corpus.py)
and evaluates it after each budget of training minutes on this machine: first a short probe
measures the steps per second, then `attn train --steps S` reaches the budget's number of
steps, and `attn train --resume --steps S'` the next budget's (a resumed run reaches exactly
the weights of an uninterrupted one, so each row is one `attn train` command). Each point is
scored by `attn eval` greedily and with beam search (beam 4, GNMT length penalty 0.6); the
BLEU is NLTK's corpus_bleu over the words. The minutes are training steps only: evaluations,
checkpoints and building the vocabulary are not counted (`attn train` prints them).

`variants` trains the Transformer's recipe again with each of VARIANTS' settings (grouped-query
and multi-query attention, a sliding window on the decoder's self-attention) for one number of
steps, the Transformer's 5-minute row's unless --steps says otherwise, and scores each as above:
chapter 14 reads them as "decoding" rows.

Every row goes into docs/reference-results.json as soon as it is measured, with the command
that reproduces it. Chapter 10 reads that file, draws BLEU against minutes and publishes the
numbers that README's table quotes.
"""
import argparse
import datetime
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from pinned_corpus import sha256_file  # noqa: E402
import run as bench_run  # noqa: E402
ATTN = os.environ.get("ATTN_BIN", os.path.join(ROOT, "build", "cli", "attn"))  # ATTN_BIN: another build's attn
RESULTS = os.path.join(ROOT, "docs", "reference-results.json")
CORPUS = "en-fr.tsv"  # made by: attn corpus gettext --lang fr --locale-dir locale --out en-fr.tsv

# What every row shares: the corpus read as words, lowercased, punctuation split, words seen
# once read as <unk>, pairs longer than 20 words dropped, 5% held out (seed 1), batches of 64.
COMMON = ["--task", CORPUS, "--max-length", "20", "--min-freq", "2", "--batch-size", "64", "--seed", "1",
          "--eval-every", "0", "--checkpoint-every", "0"]

RECIPES = {
    "bahdanau": ["--model", "bahdanau", "--set", "embed_dim=128", "--set", "encoder_dim=128",
                 "--set", "decoder_dim=256", "--set", "attention_dim=128", "--lr", "0.002"],
    "luong": ["--model", "luong", "--set", "embed_dim=128", "--set", "hidden_dim=256",
              "--set", "attention_dim=128", "--lr", "0.002"],
    "transformer": ["--model", "transformer", "--set", "d_model=128", "--set", "nhead=4",
                    "--set", "dim_feedforward=512", "--set", "dropout=0.1", "--lr", "0.001",
                    "--warmup", "1000", "--label-smoothing", "0.1"],
}
BEAM = ["--beam", "4", "--length-penalty", "0.6"]

# Chapter 14's variants of the Transformer's recipe: the decoder's key-value heads (of 4) and its
# self-attention window; "mha" is the recipe as it is, trained again in the same run.
VARIANTS = {
    "mha": [],
    "gqa-2": ["--set", "num_kv_heads=2"],
    "mqa": ["--set", "num_kv_heads=1"],
    "window-1": ["--set", "window=1"],
    "window-2": ["--set", "window=2"],
    "window-4": ["--set", "window=4"],
}


def attn(args, cwd, env=None):
    """Runs attn, echoes its last lines, returns its whole output."""
    proc = subprocess.run([ATTN] + args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    if proc.returncode != 0:
        sys.exit("attn %s failed:\n%s" % (" ".join(args), proc.stdout[-3000:]))
    return proc.stdout


def trained(output):
    m = re.search(r"training time: (\d+) steps in ([\d.]+) s", output)
    if not m:
        sys.exit("attn train printed no 'training time' line:\n" + output[-2000:])
    return int(m.group(1)), float(m.group(2))


def bleu(output):
    m = re.search(r"test sentences.*?BLEU ([\d.]+)", output)
    if not m:
        sys.exit("attn eval printed no BLEU:\n" + output[-2000:])
    return float(m.group(1))


def scores(checkpoint, work, env):
    """Held-out BLEU of a checkpoint, greedy and with beam search (BEAM), by `attn eval`."""
    return (bleu(attn(["eval", "--checkpoint", checkpoint], work, env)),
            bleu(attn(["eval", "--checkpoint", checkpoint] + BEAM, work, env)))


def machine():
    """The CPU as /proc/cpuinfo names it, its cores, and the system (bench/run.py's, as a record)."""
    cpu, cores, system = bench_run.machine().split(", ", 2)
    return {"cpu": cpu, "cores": os.cpu_count(), "system": system}


def load():
    if os.path.exists(RESULTS):
        with open(RESULTS) as f:
            return json.load(f)
    return {"rows": []}


def save(results):
    """Written whole to a new file, then renamed over the old one."""
    results["rows"].sort(key=lambda r: (r["model"], r["minutes_budget"]))
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(RESULTS), prefix=".reference-results.")
    with os.fdopen(fd, "w") as f:
        json.dump(results, f, indent=1)
        f.write("\n")
    os.replace(tmp, RESULTS)


def command(model, steps, out):
    return " ".join(shlex.quote(a) for a in ["attn", "train"] + RECIPES[model] + COMMON + ["--steps", str(steps),
                                                                                          "--out", out])


def record_split(results, output):
    """The pairs `attn train` trains and tests on, from the line it prints."""
    m = re.search(r"(\d+) train / (\d+) test examples", output)
    if m:
        results["train_pairs"], results["test_pairs"] = int(m.group(1)), int(m.group(2))


def split(args):
    """Records the split of the reference runs (a one-step run of the Transformer's recipe, then removed)."""
    work = os.path.abspath(args.work)
    out = os.path.join(work, "split-probe")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    results = load()
    record_split(results, attn(["train"] + RECIPES["transformer"] + COMMON + ["--steps", "1", "--out", out,
                                                                           "--overwrite"], work, env))
    shutil.rmtree(out)
    save(results)
    print("%d training pairs, %d held out" % (results["train_pairs"], results["test_pairs"]))


def checked_corpus(work):
    """The corpus in `work`, checked to be the pinned one; exits saying how to make it when missing."""
    corpus = os.path.join(work, CORPUS)
    if not os.path.exists(corpus):
        sys.exit("%s: missing; make it with: attn corpus gettext --lang fr --locale-dir locale --out %s"
                 % (corpus, corpus))
    subprocess.run([os.path.join(ROOT, "tools", "pinned_corpus.py"), "check-corpus", corpus, "--lang", "fr"],
                   check=True)
    return corpus


def run(args):
    work = os.path.abspath(args.work)
    corpus = checked_corpus(work)
    env = dict(os.environ, ATTN_NUM_THREADS=str(args.threads), OPENBLAS_NUM_THREADS="1")
    recipe = ["train"] + RECIPES[args.model] + COMMON
    run_dir = os.path.join(work, args.model)
    results = load()
    done_steps, done_seconds = 0, 0.0
    if args.resume:  # the run continues from its last measured budget (the run folder holds that step)
        rows = [r for r in results["rows"] if r["model"] == args.model]
        if not rows or not os.path.isdir(run_dir):
            sys.exit("--resume: no measured %s run in %s and %s" % (args.model, RESULTS, run_dir))
        last = max(rows, key=lambda r: r["steps"])
        if last["command"] != command(args.model, last["steps"], "runs/" + args.model):
            sys.exit("--resume: RECIPES['%s'] changed since the run began; measure it anew" % args.model)
        with open(os.path.join(run_dir, "checkpoint", "config.json")) as f:
            at = json.load(f)["train"]["steps"]
        if at != last["steps"]:
            sys.exit("--resume: %s is at step %d, its last measured row at %d" % (run_dir, at, last["steps"]))
        done_steps, done_seconds = last["steps"], last.get("train_seconds", 60 * last["train_minutes"])
        pace = done_steps / done_seconds
    else:
        if os.path.exists(run_dir):
            sys.exit("%s exists: remove it to measure again, or continue it with --resume" % run_dir)
        # The pace: a probe run of its own, so the budgets' steps can be chosen beforehand.
        probe = os.path.join(work, args.model + "-probe")
        out = attn(recipe + ["--steps", str(args.probe_steps), "--out", probe, "--overwrite"], work, env)
        steps, seconds = trained(out)
        pace = steps / seconds
        record_split(results, out)
        print("%s: %.2f steps/s in the probe" % (args.model, pace), flush=True)

    results["corpus"] = {"file": "en-fr.tsv (tools/pinned_corpus.py, --lang fr)", "sha256": sha256_file(corpus)}
    results["machine"] = machine()
    results["threads"] = args.threads
    results["beam"] = " ".join(BEAM)
    # --resume skips every budget this model already has a row for (its run folder is at or past
    # it). To measure budgets again, remove the run folder and run without --resume: that replaces
    # the model's rows.
    measured = {r["minutes_budget"] for r in results["rows"] if r["model"] == args.model} if args.resume else set()
    for budget in [float(b) for b in args.budgets.split(",")]:
        if budget in measured or budget * 60 <= done_seconds:
            continue
        target = int(round(pace * 60 * budget / 10.0)) * 10
        if target <= done_steps:
            sys.exit("budget %g min: %d steps is not beyond the %d done" % (budget, target, done_steps))
        if done_steps == 0:
            out = attn(recipe + ["--steps", str(target), "--out", run_dir], work, env)
        else:
            out = attn(["train", "--resume", run_dir, "--steps", str(target)], work, env)
        steps, seconds = trained(out)
        done_steps, done_seconds = target, done_seconds + seconds
        pace = done_steps / done_seconds  # the whole run's pace sets the next budget's steps
        started = time.time()
        greedy, beam = scores(run_dir, work, env)
        row = {"model": args.model, "minutes_budget": budget, "steps": done_steps,
               "train_minutes": round(done_seconds / 60, 2), "train_seconds": round(done_seconds, 1),
               "bleu_greedy": greedy, "bleu_beam": beam,
               "eval_seconds": round(time.time() - started, 1),
               "command": command(args.model, done_steps, "runs/" + args.model),
               "measured": datetime.date.today().isoformat()}
        results["rows"] = [r for r in results["rows"]
                           if not (r["model"] == args.model and r["minutes_budget"] == budget)] + [row]
        save(results)
        print("%s after %.1f min (%d steps): BLEU %.2f greedy, %.2f beam" %
              (args.model, done_seconds / 60, done_steps, greedy, beam), flush=True)


def torch_row(args):
    """attn's Bahdanau run trained in PyTorch on the same batches from the same weights, for the same minutes
    (tools/reference/torch_bahdanau_budget.py); each budget scored by attn eval as attn's rows are."""
    work = os.path.abspath(args.work)
    run_dir = os.path.join(work, "bahdanau")
    results = load()
    rows = [r for r in results["rows"] if r["model"] == "bahdanau"]
    if not rows or not os.path.isdir(run_dir):
        sys.exit("torch: measure attn's bahdanau first (tools/reference_results.py run --model bahdanau)")
    budgets = sorted(float(b) for b in args.budgets.split(","))
    pace = max(r["steps"] / (60 * r["train_minutes"]) for r in rows)
    steps = int(pace * 60 * budgets[-1] * 1.5)  # enough batches even if PyTorch ran 1.5 times as fast as attn
    batches, init = os.path.join(work, "bahdanau-batches.npz"), os.path.join(work, "bahdanau-init.npz")
    out = os.path.join(work, "bahdanau-pytorch")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    attn(["batches", "--checkpoint", run_dir, "--steps", str(steps), "--out", batches, "--initial-weights", init,
          "--overwrite"], work, env)
    script = os.path.join(ROOT, "tools", "reference", "torch_bahdanau_budget.py")
    cmd = ["/usr/bin/python3", script, "--run", run_dir, "--batches", batches, "--initial-weights", init,
           "--minutes", "%g" % budgets[-1], "--threads", str(args.threads), "--out", out]
    if len(budgets) > 1:
        cmd += ["--also-at", ",".join("%g" % b for b in budgets[:-1])]
    subprocess.run(cmd, cwd=work, env=env, check=True)
    for budget in budgets:
        folder = out if budget == budgets[-1] else "%s.%gmin" % (out, budget)
        with open(os.path.join(folder, "torch_run.json")) as f:
            info = json.load(f)
        greedy, beam = scores(folder, work, env)
        row = {"model": "bahdanau-pytorch", "minutes_budget": budget, "steps": info["steps"],
               "train_minutes": round(info["seconds"] / 60, 2), "train_seconds": round(info["seconds"], 1),
               "bleu_greedy": greedy, "bleu_beam": beam, "threads": args.threads,
               "command": "attn batches --checkpoint runs/bahdanau --steps %d --out b.npz --initial-weights w.npz; "
                          "tools/reference/torch_bahdanau_budget.py --run runs/bahdanau --batches b.npz "
                          "--initial-weights w.npz --steps %d --threads %d --out runs/bahdanau-pytorch"
                          % (steps, info["steps"], args.threads),
               "measured": datetime.date.today().isoformat()}
        results["rows"] = [r for r in results["rows"]
                           if not (r["model"] == row["model"] and r["minutes_budget"] == budget)] + [row]
        save(results)
        print("bahdanau in PyTorch after %.1f min (%d steps): BLEU %.2f greedy, %.2f beam"
              % (info["seconds"] / 60, info["steps"], greedy, beam), flush=True)


def variants(args):
    work = os.path.abspath(args.work)
    checked_corpus(work)
    results = load()
    steps = args.steps
    if steps == 0:
        rows = [r for r in results["rows"] if r["model"] == "transformer" and r["minutes_budget"] == 5]
        if not rows:
            sys.exit("variants: no 5-minute Transformer row to take the steps from; give --steps")
        steps = rows[0]["steps"]
    env = dict(os.environ, ATTN_NUM_THREADS=str(args.threads), OPENBLAS_NUM_THREADS="1")
    names = args.only.split(",") if args.only else list(VARIANTS)
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:  # before any training, not after the variants named ahead of it
        sys.exit("variants: unknown variant(s) %s (known: %s)" % (", ".join(unknown), ", ".join(VARIANTS)))
    for name in names:
        run_dir = os.path.join(work, "decoding-" + name)
        args_train = ["train"] + RECIPES["transformer"] + VARIANTS[name] + COMMON + ["--steps", str(steps),
                                                                                     "--out", run_dir]
        if os.path.exists(run_dir):
            sys.exit("%s exists: remove it to measure again" % run_dir)
        n, seconds = trained(attn(args_train, work, env))
        greedy, beam = scores(run_dir, work, env)
        with open(os.path.join(run_dir, "checkpoint", "config.json")) as f:
            model = json.load(f)["model"]
        row = {"variant": name, "num_kv_heads": model.get("num_kv_heads", model["nhead"]), "nhead": model["nhead"],
               "window": model.get("window", 0), "steps": n, "train_seconds": round(seconds, 1),
               "threads": args.threads, "bleu_greedy": greedy, "bleu_beam": beam,
               "command": " ".join(shlex.quote(a) for a in ["attn"] + args_train[:-1] + ["runs/decoding-" + name]),
               "measured": datetime.date.today().isoformat()}
        results = load()  # another run may have written rows meanwhile
        results["decoding"] = [r for r in results.get("decoding", []) if r["variant"] != name] + [row]
        results["decoding"].sort(key=lambda r: list(VARIANTS).index(r["variant"]))
        save(results)
        print("%s: %d steps in %.0f s, BLEU %.2f greedy, %.2f beam" % (name, n, seconds, greedy, beam), flush=True)


def show(_):
    results = load()
    print("| model | minutes | steps | BLEU greedy | BLEU beam |")
    print("|---|---|---|---|---|")
    for r in results["rows"]:
        print("| %s | %.1f | %d | %.2f | %.2f |" % (r["model"], r["train_minutes"], r["steps"], r["bleu_greedy"],
                                                  r["bleu_beam"]))
    if results.get("decoding"):
        print("\n| decoding variant | kv heads | window | steps | BLEU greedy | BLEU beam |")
        print("|---|---|---|---|---|---|")
        for r in results["decoding"]:
            print("| %s | %d | %d | %d | %.2f | %.2f |" % (r["variant"], r["num_kv_heads"], r["window"], r["steps"],
                                                         r["bleu_greedy"], r["bleu_beam"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    r = sub.add_parser("run", help="train one model and measure it at each budget")
    r.add_argument("--model", required=True, choices=sorted(RECIPES))
    r.add_argument("--budgets", default="5,15,45", help="minutes of training, ascending (default 5,15,45)")
    r.add_argument("--work", default="/tmp/attn-reference", help="holds en-fr.tsv and the runs")
    r.add_argument("--threads", type=int, default=2, help="ATTN_NUM_THREADS (default 2)")
    r.add_argument("--probe-steps", type=int, default=300)
    r.add_argument("--resume", action="store_true", help="continue the measured run to the budgets after its last row that have no row yet")
    r.set_defaults(func=run)
    t = sub.add_parser("torch", help="the same Bahdanau run in PyTorch for the same minutes (after run --model bahdanau)")
    t.add_argument("--budgets", default="5,15,45", help="minutes of training, ascending (default 5,15,45)")
    t.add_argument("--work", default="/tmp/attn-reference", help="holds the runs (as for run)")
    t.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default 2)")
    t.set_defaults(func=torch_row)
    q = sub.add_parser("split", help="record how many pairs the reference runs train and test on")
    q.add_argument("--work", default="/tmp/attn-reference", help="holds en-fr.tsv (as for run)")
    q.set_defaults(func=split)
    v = sub.add_parser("variants", help="the Transformer's recipe with grouped-query, multi-query and windowed decoders")
    v.add_argument("--steps", type=int, default=0, help="training steps of every variant (default: the 5-minute row's)")
    v.add_argument("--only", default="", help="comma-separated variants (default: all of VARIANTS)")
    v.add_argument("--work", default="/tmp/attn-reference", help="holds en-fr.tsv (as for run)")
    v.add_argument("--threads", type=int, default=1, help="ATTN_NUM_THREADS (default 1)")
    v.set_defaults(func=variants)
    s = sub.add_parser("show", help="print the table")
    s.set_defaults(func=show)
    args = ap.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
