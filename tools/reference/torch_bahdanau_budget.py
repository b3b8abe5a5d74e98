#!/usr/bin/python3
"""attn's Bahdanau model trained in PyTorch for a wall-time budget, on the batches attn trains on.

The PyTorch row of the reference results (issue 41): the same model, the same initial
weights, the same batches in the same order, the same optimizer, for the same minutes;
the result is an attn run folder, so `attn eval` scores it exactly as it scores attn's.

    RUN=runs/enfr                      # trained by: attn train --model bahdanau --task en-fr.tsv ... --out runs/enfr
    build/cli/attn batches --checkpoint $RUN --steps 200000 --out /tmp/enfr-batches.npz \\
        --initial-weights /tmp/enfr-init.npz
    /usr/bin/python3 tools/reference/torch_bahdanau_budget.py --run $RUN \\
        --batches /tmp/enfr-batches.npz --initial-weights /tmp/enfr-init.npz \\
        --minutes 5 --threads 2 --out runs/enfr-torch
    build/cli/attn eval --checkpoint runs/enfr-torch          # BLEU beside attn's

--steps K stops after K steps even if time is left (the batches file must hold enough
steps; training stops, with a note, when they run out). Only the training steps are timed
(padding the batch, forward, loss, backward, clipping, Adam, schedule), as attn's "training
time" counts its steps; the seconds, steps done and steps/s are printed and written to
OUT/torch_run.json. Time on a quiet machine: while another process keeps a core busy,
torch's OpenMP threads spin against it and two threads ran 12 times slower than one
(OMP_WAIT_POLICY=PASSIVE avoids that). OUT gets OUT/checkpoint/ as attn writes
it (config.json, vocab.json and bpe.codes copied from RUN, model.npz under attn's
parameter names, manifest.json with each file's size and FNV-1a hash; no trainer state:
`attn eval` does not need it, `attn train --resume` cannot continue this run).

What is reproduced (models/bahdanau.cpp, models/bidirectional_encoder.cpp, train/trainer.cpp):
  encoder   bidirectional LSTM over the true lengths (packed), h_j = [fwd; bwd]
  start     s_0 = tanh(init([h_m fwd; h_1 bwd])), decoder cell state 0
  step t    e_tj = v^T tanh(W1 s_{t-1} + W2 h_j), padding masked; c_t = sum_j a_tj h_j;
            s_t = LSTMCell([y_{t-1}; c_t], s_{t-1}); logits = out([s_t; c_t; y_{t-1}])
  loss      cross-entropy over tgt_out, <pad> ignored, the run's label smoothing, mean over tokens
  update    clip_grad_norm_(clip_norm) (none when 0), Adam(lr, betas (0.9, 0.999), eps 1e-8),
            the run's warm-up lr * min(n / w, sqrt(w / n)) when config.train.warmup is set
  dtype     the run's (config.dtype); torch.set_num_threads(--threads), OPENBLAS_NUM_THREADS and
            MKL_NUM_THREADS 1 unless set (bench/run.sh's torch@2)
coverage (--set coverage=true) is not reproduced: such a run is refused.

--self-test --attn build/cli/attn proves the equality on a small run (needs a scratch folder,
--work DIR, default a new temporary one):
  (a) float32: PyTorch with attn's initial weights, and with the weights of attn's run after
      40 steps, gives the held-out loss `attn eval` prints for those weights (to its 4
      printed decimals: 5e-5 absolute, plus 1e-5 relative);
  (b) float64, 150 steps with clipping, label smoothing and warm-up: the weights PyTorch
      reaches equal attn's after the same steps (1e-9), and `attn eval` prints the same line
      (loss, exact match, BLEU) for both run folders.
Exit status 0 when both hold, 1 otherwise; 77 (skipped) when torch is missing.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

# As bench/run.sh: torch's own threads (--threads) run its ops, OpenBLAS's products run on one
# (two pools of two threads on two cores would fight); set these variables to change that.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

try:  # after the thread settings, which numpy's BLAS reads when loaded
    import numpy as np
except ImportError:  # python3-numpy comes with python3-torch (tools/setup.sh --with-bench)
    np = None

try:
    if np is None:
        raise ImportError("numpy")
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:  # python3-torch is installed by tools/setup.sh --with-bench
    torch = None

CODES_FILE = "bpe.codes"


def fail(message):
    sys.stderr.write("torch_bahdanau_budget: error: " + message + "\n")
    sys.exit(1)


# ---- the model, under attn's parameter names ----

if torch is not None:

    class AdditiveScore(nn.Module):
        """attention.score: e_tj = v^T tanh(W1 s + W2 h_j) (nn/attention/score.cpp)."""

        def __init__(self, query_dim, key_dim, attn_dim):
            super().__init__()
            self.W1 = nn.Parameter(torch.zeros(attn_dim, query_dim))  # [A, Hd]
            self.W2 = nn.Parameter(torch.zeros(attn_dim, key_dim))    # [A, 2 He]
            self.v = nn.Parameter(torch.zeros(attn_dim))              # [A]

    class Attention(nn.Module):
        def __init__(self, query_dim, key_dim, attn_dim):
            super().__init__()
            self.score = AdditiveScore(query_dim, key_dim, attn_dim)

    class BahdanauSeq2Seq(nn.Module):
        def __init__(self, src_vocab, tgt_vocab, embed_dim, encoder_dim, decoder_dim, attention_dim, pad_id):
            super().__init__()
            self.pad_id = pad_id
            self.src_embed = nn.Embedding(src_vocab, embed_dim, padding_idx=pad_id)
            self.tgt_embed = nn.Embedding(tgt_vocab, embed_dim, padding_idx=pad_id)
            self.encoder = nn.LSTM(embed_dim, encoder_dim, batch_first=True, bidirectional=True)
            self.init = nn.Linear(2 * encoder_dim, decoder_dim)
            self.attention = Attention(decoder_dim, 2 * encoder_dim, attention_dim)
            self.decoder = nn.LSTMCell(embed_dim + 2 * encoder_dim, decoder_dim)
            self.out = nn.Linear(decoder_dim + 2 * encoder_dim + embed_dim, tgt_vocab)
            self.mask_padding = True  # the self-test turns it off once to see check (a) fail

        def forward(self, src, src_lengths, tgt_in):
            """src [B, S], src_lengths [B] (a CPU int64 tensor), tgt_in [B, T] -> logits [B, T, V]."""
            B, S = src.shape
            x = self.src_embed(src)                                                   # [B, S, E]
            packed = nn.utils.rnn.pack_padded_sequence(x, src_lengths, batch_first=True, enforce_sorted=False)
            out, (h, _) = self.encoder(packed)                                        # h [2, B, He]
            memory, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=S)  # [B, S, 2 He]
            s = torch.tanh(self.init(torch.cat([h[0], h[1]], 1)))                     # s_0: [B, Hd]
            c = torch.zeros_like(s)
            score = self.attention.score
            keys = F.linear(memory, score.W2)                                         # W2 h_j: [B, S, A]
            padding = torch.arange(S).unsqueeze(0) >= src_lengths.unsqueeze(1)        # [B, S], true = padding
            y = self.tgt_embed(tgt_in)                                                # [B, T, E]
            features = []
            for t in range(tgt_in.shape[1]):
                q = F.linear(s, score.W1).unsqueeze(1)                                # W1 s_{t-1}: [B, 1, A]
                e = torch.tanh(q + keys).matmul(score.v)                              # [B, S]
                if self.mask_padding:
                    e = e.masked_fill(padding, float("-inf"))
                a = torch.softmax(e, dim=1)                                           # a_tj: [B, S]
                context = torch.bmm(a.unsqueeze(1), memory).squeeze(1)                # c_t: [B, 2 He]
                s, c = self.decoder(torch.cat([y[:, t], context], 1), (s, c))         # s_t: [B, Hd]
                features.append(torch.cat([s, context, y[:, t]], 1))                 # [B, Hd + 2 He + E]
            return self.out(torch.stack(features, 1))                                 # [B, T, V]


def read_npz(path, what):
    try:
        with np.load(path) as z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        fail("%s %s: cannot read (%s)" % (what, path, e))


class Batches:
    """The .npz of `attn batches`: ragged examples and the order of every step."""

    def __init__(self, path):
        z = read_npz(path, "--batches")
        need = ["src_ids", "src_offsets", "tgt_ids", "tgt_offsets", "test_src_ids", "test_src_offsets",
                "test_tgt_ids", "test_tgt_offsets", "order", "batch_sizes", "src_vocab_size", "tgt_vocab_size",
                "pad_id", "bos_id", "eos_id", "seed", "batch_size"]
        for k in need:
            if k not in z:
                fail("--batches %s: no array '%s' (not written by attn batches?)" % (path, k))
        ints = {k: z[k].astype(np.int64) for k in need}
        self.train = self._examples(ints, "")
        self.test = self._examples(ints, "test_")
        self.sizes = ints["batch_sizes"]
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)])
        self.order = ints["order"]
        if self.starts[-1] != len(self.order):
            fail("--batches %s: batch_sizes add up to %d, but order holds %d indices" % (path, self.starts[-1], len(self.order)))
        if len(self.order) and (self.order.min() < 0 or self.order.max() >= len(self.train)):
            fail("--batches %s: order holds an index outside the %d training examples" % (path, len(self.train)))
        for k in ("src_vocab_size", "tgt_vocab_size", "pad_id", "bos_id", "eos_id", "seed", "batch_size"):
            setattr(self, k, int(ints[k][0]))

    @staticmethod
    def _examples(z, prefix):
        src, so, tgt, to = (z[prefix + k] for k in ("src_ids", "src_offsets", "tgt_ids", "tgt_offsets"))
        return [(src[so[i]:so[i + 1]], tgt[to[i]:to[i + 1]]) for i in range(len(so) - 1)]

    def steps(self):
        return len(self.sizes)

    def step(self, n):
        """The example indices of step n (1-based), in the batch's row order."""
        return self.order[self.starts[n - 1]:self.starts[n]]


def pad_batch(examples, indices, pad, bos, eos):
    """data/batch.hpp's padding: src [B, S]; tgt_in = <bos> + tgt, tgt_out = tgt + <eos>, both [B, T + 1]."""
    srcs = [examples[i][0] for i in indices]
    tgts = [examples[i][1] for i in indices]
    S, T = max(len(s) for s in srcs), max(len(t) for t in tgts) + 1
    src = np.full((len(indices), S), pad, dtype=np.int64)
    tgt_in = np.full((len(indices), T), pad, dtype=np.int64)
    tgt_out = np.full((len(indices), T), pad, dtype=np.int64)
    for b, (s, t) in enumerate(zip(srcs, tgts)):
        src[b, :len(s)] = s
        tgt_in[b, 0] = bos
        tgt_in[b, 1:len(t) + 1] = t
        tgt_out[b, :len(t)] = t
        tgt_out[b, len(t)] = eos
    lengths = np.array([len(s) for s in srcs], dtype=np.int64)
    return torch.from_numpy(src), torch.from_numpy(lengths), torch.from_numpy(tgt_in), torch.from_numpy(tgt_out)


# ---- the run folder ----

def fnv1a64(path):
    h = 14695981039346656037
    with open(path, "rb") as f:
        data = f.read()
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return len(data), "%016x" % h


def read_run(run):
    unit = os.path.join(run, "checkpoint")
    for name in ("config.json", "vocab.json", "manifest.json", "model.npz"):
        if not os.path.isfile(os.path.join(unit, name)):
            fail("--run %s: no %s (expected a run folder written by attn train)" % (run, os.path.join(unit, name)))
    with open(os.path.join(unit, "config.json")) as f:
        config = json.load(f)
    model = config.get("model", {})
    if model.get("model") != "bahdanau":
        fail("--run %s: config.json's model is '%s'; this script reproduces --model bahdanau only" % (run, model.get("model")))
    if model.get("coverage", False):
        fail("--run %s: config.json's model has coverage=true, which this script does not reproduce" % run)
    return unit, config


def build(config, batches, initial_weights):
    m = config["model"]
    dtype = torch.float64 if config.get("dtype") == "float64" else torch.float32
    model = BahdanauSeq2Seq(batches.src_vocab_size, batches.tgt_vocab_size, m["embed_dim"], m["encoder_dim"],
                            m["decoder_dim"], m["attention_dim"], batches.pad_id).to(dtype)
    weights = read_npz(initial_weights, "--initial-weights")
    own = model.state_dict()
    if set(weights) != set(own):
        fail("--initial-weights %s: its arrays (%s) are not this model's parameters (%s)"
             % (initial_weights, ", ".join(sorted(set(weights) - set(own))) or "-",
                ", ".join(sorted(set(own) - set(weights))) or "-"))
    for k, v in weights.items():
        if tuple(v.shape) != tuple(own[k].shape):
            fail("--initial-weights %s: %s is %s, the model's is %s" % (initial_weights, k, v.shape, tuple(own[k].shape)))
    model.load_state_dict({k: torch.from_numpy(np.array(v)).to(dtype) for k, v in weights.items()})
    return model, dtype


def attn_names(unit):
    """The order attn saves parameters in (its model.npz), so ours reads the same."""
    with zipfile.ZipFile(os.path.join(unit, "model.npz")) as z:
        return [n[:-len(".npy")] for n in z.namelist()]


def write_run(out, src_unit, config, model, names, dtype, info):
    """OUT/checkpoint/ as cli/run_dir.cpp commits one: files, then the manifest, then one rename."""
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        fail("--out %s: exists and is not an empty folder (choose a new one)" % out)
    os.makedirs(out, exist_ok=True)
    tmp = os.path.join(out, "checkpoint.tmp.%d.0" % os.getpid())
    os.mkdir(tmp)
    copied = ["config.json", "vocab.json"] + ([CODES_FILE] if os.path.exists(os.path.join(src_unit, CODES_FILE)) else [])
    for name in copied:
        shutil.copyfile(os.path.join(src_unit, name), os.path.join(tmp, name))
    state = model.state_dict()
    np_dtype = np.float64 if dtype == torch.float64 else np.float32
    arrays = {k: state[k].detach().numpy().astype(np_dtype) for k in names}
    with open(os.path.join(tmp, "model.npz"), "wb") as f:
        np.savez(f, **arrays)  # uncompressed, "<name>.npy" members, in attn's order
    files = {}
    for name in sorted(os.listdir(tmp)):
        size, h = fnv1a64(os.path.join(tmp, name))
        files[name] = {"bytes": size, "fnv1a64": h}
    with open(os.path.join(tmp, "manifest.json"), "w") as f:
        json.dump({"format": "attn-checkpoint-manifest", "files": files}, f, indent=2)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, os.path.join(out, "checkpoint"))
    with open(os.path.join(out, "torch_run.json"), "w") as f:
        json.dump(info, f, indent=2)
        f.write("\n")


# ---- training ----

def train(model, config, batches, seconds, max_steps, log=print, snapshots=()):
    """snapshots: (seconds, write(done, spent)) pairs, each called once its seconds of training are spent."""
    snapshots = sorted(snapshots, key=lambda s: s[0])
    t = config["train"]
    lr, clip, smoothing, warmup = t["lr"], t.get("clip_norm", 1.0), t.get("label_smoothing", 0.0), t.get("warmup", 0)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.999), eps=1e-8, foreach=False)
    factor = lr * math.sqrt(warmup) if warmup else 0.0  # cli/train.cpp's NoamLR: peak lr at step `warmup`
    limit = batches.steps() if max_steps is None else min(max_steps, batches.steps())
    spent, done, losses = 0.0, 0, []
    model.train()
    while done < limit and (seconds is None or spent < seconds):
        n = done + 1
        begin = time.perf_counter()  # padding the batch counts, as attn's "training time" counts making its batches
        src, lengths, tgt_in, tgt_out = pad_batch(batches.train, batches.step(n), batches.pad_id, batches.bos_id,
                                                  batches.eos_id)
        if warmup:
            for g in optimizer.param_groups:
                g["lr"] = factor * min(1.0 / math.sqrt(n), n * warmup ** -1.5)
        optimizer.zero_grad(set_to_none=False)
        logits = model(src, lengths, tgt_in)                                             # [B, T, V]
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1),
                               ignore_index=batches.pad_id, label_smoothing=smoothing)
        loss.backward()
        if clip > 0:
            nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        spent += time.perf_counter() - begin
        done = n
        losses.append(loss.item())
        while snapshots and spent >= snapshots[0][0]:
            snapshots.pop(0)[1](done, spent)
        if done % 100 == 0:
            log("step %d: loss %.4f (%.1f s, %.2f steps/s)" % (done, sum(losses[-100:]) / 100, spent, done / spent))
    if done == batches.steps() and (max_steps is None or done < max_steps) and (seconds is None or spent < seconds):
        log("note: the %d steps of the batches file are all done before the budget (write more with attn batches --steps)"
            % done)
    return done, spent, losses


def held_out_loss(model, batches):
    """attn's evaluate(): teacher-forced cross-entropy summed over tokens, <pad> ignored, batches of 64 by length."""
    model.eval()
    order = sorted(range(len(batches.test)), key=lambda i: len(batches.test[i][0]))  # stable, as std::stable_sort
    total, tokens = 0.0, 0
    with torch.no_grad():
        for first in range(0, len(order), 64):
            src, lengths, tgt_in, tgt_out = pad_batch(batches.test, order[first:first + 64], batches.pad_id,
                                                      batches.bos_id, batches.eos_id)
            logits = model(src, lengths, tgt_in)
            total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1),
                                     ignore_index=batches.pad_id, reduction="sum").item()
            tokens += int((tgt_out != batches.pad_id).sum())
    return total / max(tokens, 1)


def run_budget(args):
    torch.set_num_threads(args.threads)
    unit, config = read_run(args.run)
    batches = Batches(args.batches)
    if batches.batch_size != config["train"]["batch_size"] or batches.seed != config["seed"]:
        fail("--batches %s: made for seed %d, batch size %d; the run has seed %d, batch size %d (make them with "
             "attn batches --checkpoint %s)" % (args.batches, batches.seed, batches.batch_size, config["seed"],
                                                config["train"]["batch_size"], args.run))
    with open(os.path.join(unit, "vocab.json")) as f:
        vocab = json.load(f)
    sizes = (len(vocab["src"]["tokens"]), len(vocab["tgt"]["tokens"]))
    if (batches.src_vocab_size, batches.tgt_vocab_size) != sizes:
        fail("--batches %s: vocabularies of %d and %d tokens; the run's vocab.json has %d and %d (make them with "
             "attn batches --checkpoint %s)" % (args.batches, batches.src_vocab_size, batches.tgt_vocab_size, *sizes,
                                                args.run))
    if os.path.exists(args.out) and (not os.path.isdir(args.out) or os.listdir(args.out)):
        fail("--out %s: exists and is not an empty folder (choose a new one)" % args.out)
    model, dtype = build(config, batches, args.initial_weights)
    seconds = args.seconds if args.seconds is not None else (args.minutes * 60 if args.minutes is not None else None)
    print("training attn's bahdanau in PyTorch %s (%s, %d threads) for %s on %d batches of %s"
          % (torch.__version__, str(dtype).replace("torch.", ""), args.threads,
             "%g s" % seconds if seconds is not None else "%d steps" % args.steps, batches.steps(), args.batches))
    def snapshot(minutes):
        def write(done, spent):
            out = "%s.%gmin" % (args.out.rstrip("/"), minutes)
            rate = done / spent if spent > 0 else 0.0
            print("training time: %d steps in %.1f s (%.2f steps/s; only the steps are timed)" % (done, spent, rate))
            write_run(out, unit, config, model, attn_names(unit), dtype,
                      {"steps": done, "seconds": spent, "steps_per_second": rate, "threads": args.threads,
                       "torch": torch.__version__, "budget_seconds": minutes * 60})
            print("wrote %s (score it with: attn eval --checkpoint %s)" % (out, out), flush=True)
        return write

    also = [(m * 60, snapshot(m)) for m in args.also_at]
    if seconds is not None and any(s >= seconds for s, _ in also):
        fail("--also-at: every snapshot must come before the budget's end")
    for m in args.also_at:
        if os.path.exists("%s.%gmin" % (args.out.rstrip("/"), m)):
            fail("--also-at %g: %s.%gmin exists (choose a new --out)" % (m, args.out.rstrip("/"), m))
    done, spent, losses = train(model, config, batches, seconds, args.steps, snapshots=also)
    rate = done / spent if spent > 0 else 0.0
    print("training time: %d steps in %.1f s (%.2f steps/s; only the steps are timed)" % (done, spent, rate))
    info = {"steps": done, "seconds": spent, "steps_per_second": rate, "threads": args.threads,
            "torch": torch.__version__, "openblas_threads": os.environ["OPENBLAS_NUM_THREADS"], "dtype": str(dtype).replace("torch.", ""), "run": os.path.abspath(args.run),
            "batches": os.path.abspath(args.batches), "budget_seconds": seconds,
            "last_loss": losses[-1] if losses else None}
    write_run(args.out, unit, config, model, attn_names(unit), dtype, info)
    print("wrote %s (score it with: attn eval --checkpoint %s)" % (args.out, args.out))


# ---- the self-test ----

def sh(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        fail("%s failed: %s" % (" ".join(cmd), p.stderr.strip()))
    return p.stdout


def eval_line(attn, run, cwd):
    """`attn eval`'s summary line and its loss."""
    line = sh([attn, "eval", "--checkpoint", run], cwd).splitlines()[0]
    return line, float(line.rsplit("loss ", 1)[1])


def self_test(args):
    attn = os.path.abspath(args.attn)
    work = args.work or tempfile.mkdtemp(prefix="torch_bahdanau_")
    os.makedirs(work, exist_ok=True)
    torch.set_num_threads(args.threads)
    tiny = ["--model", "bahdanau", "--task", "reverse", "--n-train", "300", "--max-length", "9", "--batch-size", "16",
            "--set", "embed_dim=8", "--set", "encoder_dim=8", "--set", "decoder_dim=12", "--set", "attention_dim=10",
            "--eval-every", "0", "--seed", "5"]
    ok = True

    # (a) float32, initial weights: PyTorch's held-out loss against attn eval's.
    sh([attn, "train", *tiny, "--steps", "40", "--lr", "0.01", "--dtype", "float32", "--out", "a32"], work)
    sh([attn, "batches", "--checkpoint", "a32", "--steps", "1", "--out", "a32.npz", "--initial-weights",
        "a32-init.npz"], work)
    unit, config = read_run(os.path.join(work, "a32"))
    batches = Batches(os.path.join(work, "a32.npz"))
    model, dtype = build(config, batches, os.path.join(work, "a32-init.npz"))
    write_run(os.path.join(work, "a32-init"), unit, config, model, attn_names(unit), dtype, {"steps": 0})
    line, attn_loss = eval_line(attn, "a32-init", work)
    if args.plant == "mask":
        model.mask_padding = False
    torch_loss = held_out_loss(model, batches)
    close = abs(torch_loss - attn_loss) <= 5e-5 + 1e-5 * abs(attn_loss)  # attn prints 4 decimals
    print("(a) float32, initial weights: held-out loss PyTorch %.6f, attn eval %.4f: %s"
          % (torch_loss, attn_loss, "equal" if close else "DIFFERENT"))
    ok = ok and close
    # The same with attn's weights after 40 steps: a sharper attention, where padding weighs more.
    model.load_state_dict({n: torch.from_numpy(v) for n, v in read_npz(os.path.join(unit, "model.npz"), "a32").items()})
    line, attn_loss = eval_line(attn, "a32", work)
    torch_loss = held_out_loss(model, batches)
    close = abs(torch_loss - attn_loss) <= 5e-5 + 1e-5 * abs(attn_loss)
    print("    float32, attn's weights after 40 steps: held-out loss PyTorch %.6f, attn eval %.4f: %s"
          % (torch_loss, attn_loss, "equal" if close else "DIFFERENT"))
    ok = ok and close

    # (b) float64, k steps with clipping, label smoothing and warm-up: the same weights and the same eval.
    k = 150
    sh([attn, "train", *tiny, "--steps", str(k), "--dtype", "float64", "--clip", "0.5", "--label-smoothing", "0.1",
        "--warmup", "4", "--lr", "0.01", "--out", "a64"], work)
    sh([attn, "batches", "--checkpoint", "a64", "--steps", str(k), "--out", "a64.npz", "--initial-weights",
        "a64-init.npz"], work)
    unit, config = read_run(os.path.join(work, "a64"))
    batches = Batches(os.path.join(work, "a64.npz"))
    if args.plant == "shuffle":  # one batch's rows in another order: the same examples, another step
        s = batches.starts
        batches.order[s[k - 1]:s[k]] = batches.order[s[k - 2]:s[k - 1]][:batches.sizes[k - 1]].copy()
    model, dtype = build(config, batches, os.path.join(work, "a64-init.npz"))
    model.mask_padding = args.plant != "mask"
    done, _, _ = train(model, config, batches, None, k, log=lambda m: None)
    write_run(os.path.join(work, "t64"), unit, config, model, attn_names(unit), dtype, {"steps": done})
    theirs = read_npz(os.path.join(unit, "model.npz"), "attn's weights")
    ours = {k2: v.detach().numpy() for k2, v in model.state_dict().items()}
    worst = max(float(np.max(np.abs(ours[n] - theirs[n]) / np.maximum(1.0, np.abs(theirs[n])))) for n in theirs)
    same_weights = done == k and worst <= 1e-9
    print("(b) float64, %d steps: largest weight difference %.3g (relative to max(1, |w|)): %s"
          % (done, worst, "equal" if same_weights else "DIFFERENT"))
    attn_line, _ = eval_line(attn, "a64", work)
    torch_line, _ = eval_line(attn, "t64", work)
    same_eval = attn_line == torch_line
    print("    attn eval of attn's run:    %s\n    attn eval of PyTorch's run: %s\n    %s"
          % (attn_line, torch_line, "equal" if same_eval else "DIFFERENT"))
    ok = ok and same_weights and same_eval
    print("self-test %s (work folder %s)" % ("passed" if ok else "FAILED", work))
    if ok and not args.work:
        shutil.rmtree(work)
    return 0 if ok else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--run", help="an attn run folder trained with --model bahdanau")
    p.add_argument("--batches", help="the .npz of attn batches --checkpoint RUN")
    p.add_argument("--initial-weights", help="the .npz of attn batches --initial-weights")
    p.add_argument("--minutes", type=float)
    p.add_argument("--seconds", type=float)
    p.add_argument("--steps", type=int, help="stop after this many steps (also with a time budget)")
    p.add_argument("--also-at", type=lambda t: [float(x) for x in t.split(",") if x], default=[],
                   help="minutes, e.g. 5,15: also write the weights as they are after these minutes of training, "
                        "to OUT.5min, OUT.15min (scored by attn eval like OUT)")
    p.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default 2)")
    p.add_argument("--out", help="the run folder to write (new or empty)")
    p.add_argument("--self-test", action="store_true", help="prove the equality on a small run (see above)")
    p.add_argument("--attn", default="build/cli/attn", help="the attn executable (self-test)")
    p.add_argument("--work", help="scratch folder of the self-test (kept)")
    p.add_argument("--plant", choices=["mask", "shuffle"], help=argparse.SUPPRESS)  # a bug the self-test must catch
    args = p.parse_args()
    if torch is None:
        print("skipped: PyTorch is not installed (tools/setup.sh --with-bench installs python3-torch)")
        sys.exit(77)
    if args.threads < 1:
        fail("--threads %d: expected at least 1" % args.threads)
    if args.self_test:
        sys.exit(self_test(args))
    for flag in ("run", "batches", "initial_weights", "out"):
        if not getattr(args, flag):
            fail("--%s is required (see --help)" % flag.replace("_", "-"))
    if args.minutes is None and args.seconds is None and args.steps is None:
        fail("give a budget: --minutes M, --seconds S or --steps K")
    for flag in ("minutes", "seconds", "steps"):
        v = getattr(args, flag)
        if v is not None and not (v > 0 and math.isfinite(v)):
            fail("--%s %s: expected a positive number" % (flag, v))
    run_budget(args)


if __name__ == "__main__":
    main()
