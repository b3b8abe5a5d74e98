"""PyTorch's side of bench/run.sh: the same workloads as bench/model_bench.cpp.

    /usr/bin/python3 bench/torch_models.py [--serve] <workload> <f32|f64>

Workloads (batch 32, length 20, vocabulary 32, every size 128), built like attn's:
  transformer         (a) training step: embeddings * sqrt(128) + sinusoidal positions,
                      dropout 0.1, torch.nn.Transformer(128, 4 heads, 2 + 2 layers, ff 512,
                      post-norm, batch_first), Linear(128, 32); cross-entropy; backward; Adam
  bahdanau            (b) training step of attn's BahdanauSeq2Seq written in torch:
                      biLSTM encoder, s_0 = tanh(W_init [h_fwd; h_bwd]), additive attention
                      from s_{t-1} (keys projected once), LSTMCell([y; c]), Linear([s; c; y])
  decode-transformer, decode-bahdanau
                      (e) greedy decoding of 20 tokens under no_grad, eval mode; the
                      Transformer runs its decoder over the whole prefix at every step,
                      as attn's step() does
  lstm                torch.nn.LSTM(128, 128, batch_first) forward + backward, [32, 20, 128]
A model workload may end in -v<V> and/or -t<T>: vocabulary V, length T (as model_bench's).

--serve: for bench/run.py. Reads lines "N", answers N times in us on one line;
"mem" answers "<VmHWM kB> <VmRSS kB after importing torch>". torch.set_num_threads(2)
(ATTN_TORCH_THREADS to change it); run with OPENBLAS_NUM_THREADS=1 and MKL_NUM_THREADS=1.
"""
import math
import os
import statistics
import sys
import time
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

B, T, V, D = 32, 20, 32, 128
PAD, BOS = 0, 1
warnings.filterwarnings("ignore", message=".*nested tensors.*")  # torch 1.13, eval mode


def status_kb(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return -1


def random_tokens(g):
    return torch.randint(4, V, (B, T), generator=g)


class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.src_embed = nn.Embedding(V, D, padding_idx=PAD)
        self.tgt_embed = nn.Embedding(V, D, padding_idx=PAD)
        for e in (self.src_embed, self.tgt_embed):
            nn.init.normal_(e.weight, 0.0, 1.0 / math.sqrt(D))
            with torch.no_grad():
                e.weight[PAD] = 0
        pos = torch.arange(512).unsqueeze(1)
        div = torch.exp(torch.arange(0, D, 2) * (-math.log(10000.0) / D))
        pe = torch.zeros(512, D)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * div), torch.cos(pos * div)
        self.register_buffer("pe", pe)
        self.dropout = nn.Dropout(0.1)
        self.transformer = nn.Transformer(D, 4, 2, 2, 512, 0.1, batch_first=True)
        self.out = nn.Linear(D, V)

    def embed(self, embedding, tokens):
        return self.dropout(embedding(tokens) * math.sqrt(D) + self.pe[: tokens.shape[1]])

    def encode(self, src):
        padding = src == PAD  # attn builds the padding mask from the lengths
        return self.transformer.encoder(self.embed(self.src_embed, src), src_key_padding_mask=padding), padding

    def decode(self, tgt, memory, padding):
        causal = torch.triu(torch.ones(tgt.shape[1], tgt.shape[1], dtype=torch.bool), 1)
        return self.transformer.decoder(self.embed(self.tgt_embed, tgt), memory, tgt_mask=causal,
                                        memory_key_padding_mask=padding)

    def forward(self, src, tgt_in):
        memory, padding = self.encode(src)
        return self.out(self.decode(tgt_in, memory, padding))  # [B, T, V]

    def start(self, src):
        return self.encode(src)

    def step(self, state, prefix):
        memory, padding = state
        return self.out(self.decode(prefix, memory, padding)[:, -1])  # [B, V]


class Bahdanau(nn.Module):
    def __init__(self):
        super().__init__()
        self.src_embed = nn.Embedding(V, D, padding_idx=PAD)
        self.tgt_embed = nn.Embedding(V, D, padding_idx=PAD)
        self.encoder = nn.LSTM(D, D, batch_first=True, bidirectional=True)
        self.init = nn.Linear(2 * D, D)
        self.W1 = nn.Linear(D, D, bias=False)      # the query s_{t-1}
        self.W2 = nn.Linear(2 * D, D, bias=False)  # the keys h_j
        self.v = nn.Parameter(torch.empty(D).uniform_(-0.1, 0.1))
        self.decoder = nn.LSTMCell(2 * D + D, D)
        self.out = nn.Linear(D + 2 * D + D, V)

    def start(self, src):
        memory, (h, _) = self.encoder(self.src_embed(src))  # [B, S, 2D], h [2, B, D]
        s = torch.tanh(self.init(torch.cat([h[0], h[1]], 1)))
        padding = (src == PAD).unsqueeze(1)  # [B, 1, S]
        return {"memory": memory, "keys": self.W2(memory), "h": s, "c": torch.zeros_like(s), "padding": padding}

    def decode(self, state, y_prev):
        q = self.W1(state["h"]).unsqueeze(1).unsqueeze(2)                    # [B, 1, 1, A]
        scores = torch.tanh(q + state["keys"].unsqueeze(1)) @ self.v         # [B, 1, S]
        weights = torch.softmax(scores.masked_fill(state["padding"], -math.inf), -1)
        context = (weights @ state["memory"]).squeeze(1)                     # [B, 2D]
        h, c = self.decoder(torch.cat([y_prev, context], 1), (state["h"], state["c"]))
        state["h"], state["c"], state["attention"] = h, c, weights.squeeze(1).detach()
        return torch.cat([h, context, y_prev], 1)

    def forward(self, src, tgt_in):
        state = self.start(src)
        y = self.tgt_embed(tgt_in)
        features = [self.decode(state, y[:, t]) for t in range(tgt_in.shape[1])]
        return self.out(torch.stack(features, 1))  # [B, T, V]

    def step(self, state, prefix):
        return self.out(self.decode(state, self.tgt_embed(prefix[:, -1])))


class TrainStep:
    def __init__(self, model):
        self.model = model
        self.adam = torch.optim.Adam(model.parameters(), lr=1e-3)
        g = torch.Generator().manual_seed(1)
        self.src, self.tgt_out = random_tokens(g), random_tokens(g)
        self.tgt_in = torch.cat([torch.full((B, 1), BOS), self.tgt_out[:, :-1]], 1)

    def __call__(self):
        self.adam.zero_grad(set_to_none=True)
        logits = self.model(self.src, self.tgt_in)
        loss = F.cross_entropy(logits.reshape(B * T, V), self.tgt_out.reshape(B * T), ignore_index=PAD)
        loss.backward()
        self.adam.step()


class Decode:
    """Greedy decoding of exactly T tokens, keeping each step's log-probability and attention, as attn's."""

    def __init__(self, model):
        self.model = model.eval()
        self.src = random_tokens(torch.Generator().manual_seed(2))

    def __call__(self):
        with torch.no_grad():
            state = self.model.start(self.src)
            prefix = torch.full((B, 1), BOS)
            log_prob, history = torch.zeros(B, dtype=torch.float64), []
            for _ in range(T):
                log_probs = torch.log_softmax(self.model.step(state, prefix), -1)
                best, token = log_probs.max(-1)
                log_prob += best
                if isinstance(state, dict):
                    history.append(state["attention"])
                prefix = torch.cat([prefix, token.unsqueeze(1)], 1)
        return prefix[:, 1:], log_prob, history


class LSTMStep:
    def __init__(self, dtype):
        self.lstm = nn.LSTM(D, D, batch_first=True).to(dtype)
        g = torch.Generator().manual_seed(1)
        self.x = torch.randn(B, T, D, generator=g, dtype=dtype).requires_grad_(True)
        self.grad_output = torch.randn(B, T, D, generator=g, dtype=dtype)

    def __call__(self):
        self.lstm.zero_grad(set_to_none=True)
        self.x.grad = None
        self.lstm(self.x)[0].backward(self.grad_output)


class OutputProducts:
    """The output layer's three products alone: Y = X W^T, dX = dY W, dW = dY^T X."""

    def __init__(self, features, dtype):
        g = torch.Generator().manual_seed(1)
        self.x = torch.randn(B * T, features, generator=g, dtype=dtype)  # [B*T, K]
        self.w = torch.randn(V, features, generator=g, dtype=dtype)      # [V, K]
        self.dy = torch.randn(B * T, V, generator=g, dtype=dtype)        # [B*T, V]

    def __call__(self):
        self.x @ self.w.t()   # [B*T, V]
        self.dy @ self.w      # [B*T, K]
        self.dy.t() @ self.x  # [V, K]


def parse_sizes(name):
    """Strips the suffixes -v<V> and -t<T> into the globals V and T."""
    global V, T
    while True:
        head, _, tail = name.rpartition("-")
        if not head or len(tail) < 2 or tail[0] not in "vt" or not tail[1:].isdigit():
            return name
        if tail[0] == "v":
            V = int(tail[1:])
        else:
            T = int(tail[1:])
        name = head


def make_work(name, dtype):
    torch.manual_seed(0)
    name = parse_sizes(name)
    models = {"transformer": Transformer, "bahdanau": Bahdanau}
    if name == "lstm":
        return LSTMStep(dtype)
    if name in ("outproj-bahdanau", "outproj-transformer"):
        return OutputProducts(4 * D if name == "outproj-bahdanau" else D, dtype)
    if name in models:
        return TrainStep(models[name]().to(dtype))
    if name.startswith("decode-") and name[7:] in models:
        return Decode(models[name[7:]]().to(dtype))
    raise SystemExit("torch_models.py: unknown workload " + name)


def timed(work):
    start = time.perf_counter()
    work()
    return (time.perf_counter() - start) * 1e6


def main():
    baseline_kb = status_kb("VmRSS")
    torch.set_num_threads(int(os.environ.get("ATTN_TORCH_THREADS", "2")))
    serve = sys.argv[1] == "--serve"
    name, tag = sys.argv[2:4] if serve else sys.argv[1:3]
    work = make_work(name, {"f32": torch.float32, "f64": torch.float64}[tag])
    if not serve:
        for _ in range(3):
            work()
        times = [timed(work) for _ in range(30)]
        print("torch %s %s: median %.3f ms, peak RSS %.1f MB"
              % (name, tag, statistics.median(times) / 1000, status_kb("VmHWM") / 1024))
        return
    for line in sys.stdin:
        request = line.strip()
        if request == "mem":
            print(status_kb("VmHWM"), baseline_kb, flush=True)
        elif request:
            print(" ".join("%.1f" % timed(work) for _ in range(int(request))), flush=True)


if __name__ == "__main__":
    main()
