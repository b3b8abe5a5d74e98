"""PyTorch reference values for translation from several sources (Zoph & Knight 2016):
nn::BasicStateCombiner and nn::ChildSumStateCombiner (nn/state_combiner.hpp) and
models::MultiSourceSeq2Seq (models/multi_source.hpp), written here from PyTorch's own layers:

  basic       h = tanh(W_c [h1; h2]), c = c1 + c2
  child-sum   [i; o; u] = W [h1; h2] + b, f_k = sigmoid(W_f^k h_k + b_f^k)
              c = sigmoid(i) * tanh(u) + sum_k f_k * c_k, h = sigmoid(o) * tanh(c)
  model       one nn.LSTM per source over its packed sequence, one shared source embedding,
              s_0 from the combiner, an nn.LSTMCell over [y_{t-1}; ~s_{t-1}] (~s_0 = 0),
              separate: a^k = softmax_j(s_t . W_k h^k_j) (masked), ~s_t = tanh(W_c [c^1; c^2; s_t])
              flat:     one softmax over [h^1; h^2],               ~s_t = tanh(W_c [c; s_t])
              logits = W_s ~s_t + b_s

Parameters are named as the C++ modules name them (encoders.1.weight_ih_l0,
combiner.gates.weight, attentions.0.score.W, ...).

Cases:
  basic, child_sum   2 sources, B = 3, H = 4: h, c of each source in, h, c out, and the
                     gradients of sum(h * rh + c * rc)
  separate, flat     the whole model, 2 sources packed as x1 <sep> x2 in rows of uneven
                     lengths (each source padded in one row), tgt_in [2, 4]: logits, attention
                     of each source, the share of each source (flat: its attention mass;
                     separate: |W_c^k c^k_t| over their sum), and every gradient of
                     sum(logits * r). separate uses child-sum, flat uses basic.
"""
import torch

from common import Writer, fixed, run_packed, set_named_weights as set_weights


class Basic(torch.nn.Module):
    def __init__(self, H, K):
        super().__init__()
        self.combine = torch.nn.Linear(K * H, H, bias=False)

    def forward(self, states):
        h = torch.tanh(self.combine(torch.cat([s[0] for s in states], 1)))
        return h, sum(s[1] for s in states)


class ChildSum(torch.nn.Module):
    def __init__(self, H, K):
        super().__init__()
        self.H = H
        self.gates = torch.nn.Linear(K * H, 3 * H)
        self.forget = torch.nn.ModuleList([torch.nn.Linear(H, H) for _ in range(K)])

    def forward(self, states):
        g = self.gates(torch.cat([s[0] for s in states], 1))
        H = self.H
        i, o, u = torch.sigmoid(g[:, :H]), torch.sigmoid(g[:, H:2 * H]), torch.tanh(g[:, 2 * H:])
        c = i * u + sum(torch.sigmoid(f(s[0])) * s[1] for f, s in zip(self.forget, states))
        return o * torch.tanh(c), c


def combiner_case(w, name, cls, seed):
    H, K, B = 4, 2, 3
    comb = cls(H, K)
    named = list(comb.named_parameters())
    set_weights(named, seed)
    ins = {}
    states = []
    for k in range(K):
        ins["h%d" % k] = fixed((B, H), seed + 50 + 2 * k)
        ins["c%d" % k] = fixed((B, H), seed + 51 + 2 * k)
        states.append((ins["h%d" % k], ins["c%d" % k]))
    h, c = comb(states)
    rh, rc = fixed(h.shape, seed + 60, requires_grad=False), fixed(c.shape, seed + 61, requires_grad=False)
    (h * rh + c * rc).sum().backward()
    w.case(name, h=h, c=c, rh=rh, rc=rc, **{n: t.detach() for n, t in ins.items()},
           **{"grad_" + n: t.grad for n, t in ins.items()},
           **{n: p.detach() for n, p in named}, **{"grad_" + n: p.grad for n, p in named})


def encode(lstm, x, lengths):
    out, (h, c) = run_packed(lstm, x, lengths)
    return out, h[0], c[0]


def model_case(w, name, flat, seed):
    V, Vt, E, H, K = 9, 7, 3, 4, 2
    sep = 8
    embed = torch.nn.Embedding(V, E, padding_idx=0)
    tgt_embed = torch.nn.Embedding(Vt, E, padding_idx=0)
    encoders = [torch.nn.LSTM(E, H, batch_first=True) for _ in range(K)]
    comb = Basic(H, K) if flat else ChildSum(H, K)
    scores = [torch.nn.Parameter(torch.zeros(H, H)) for _ in range(1 if flat else K)]
    decoder = torch.nn.LSTMCell(E + H, H)
    combine = torch.nn.Linear((2 if flat else K + 1) * H, H, bias=False)
    out = torch.nn.Linear(H, Vt)
    named = [("src_embed.weight", embed.weight), ("tgt_embed.weight", tgt_embed.weight)]
    for k, e in enumerate(encoders):
        named += [("encoders.%d.%s" % (k, n), p) for n, p in e.named_parameters()]
    named += [("combiner." + n, p) for n, p in comb.named_parameters()]
    named += [("attentions.%d.score.W" % k, W) for k, W in enumerate(scores)]
    named += [("decoder." + n, p) for n, p in decoder.named_parameters()]
    named += [("combine.weight", combine.weight), ("out.weight", out.weight), ("out.bias", out.bias)]
    set_weights(named, seed)
    with torch.no_grad():
        embed.weight[0].zero_()
        tgt_embed.weight[0].zero_()

    # Packed rows: x1 <sep> x2, then padding; both sources are padded in one of the rows.
    rows = [[3, 4, 5, sep, 6, 7], [2, sep, 5, 0, 0, 0]]
    lengths = [6, 3]
    parts = []  # parts[b][k]: row b's source k, split at <sep> as models::split_sources does
    for row, n in zip(rows, lengths):
        cut = row[:n].index(sep)
        parts.append([row[:cut], row[cut + 1:n]])
    tgt_in = torch.tensor([[1, 3, 4, 5], [1, 5, 6, 2]])
    memories, finals, pads = [], [], []
    for k in range(K):
        lens = [len(p[k]) for p in parts]
        width = max(lens)
        ids = torch.tensor([p[k] + [0] * (width - len(p[k])) for p in parts])
        m, h, c = encode(encoders[k], embed(ids), lens)
        memories.append(m)
        finals.append((h, c))
        pads.append(torch.arange(width)[None, :] >= torch.tensor(lens)[:, None])
    s, c = comb(finals)
    feed = torch.zeros(2, H)
    logits, weights, shares = [], [[] for _ in range(K)], []
    y = tgt_embed(tgt_in)
    for t in range(tgt_in.shape[1]):
        s, c = decoder(torch.cat([y[:, t], feed], 1), (s, c))
        if flat:
            mem, pad = torch.cat(memories, 1), torch.cat(pads, 1)
            e = torch.einsum("bh,bsh->bs", s, mem @ scores[0].T).masked_fill(pad, float("-inf"))
            a = torch.softmax(e, 1)
            ctx = [torch.einsum("bs,bsh->bh", a, mem)]
            offset, share = 0, []
            for k in range(K):
                width = memories[k].shape[1]
                weights[k].append(a[:, offset:offset + width])
                share.append(a[:, offset:offset + width].sum(1))  # source k's attention mass
                offset += width
        else:
            ctx, share = [], []
            for k in range(K):
                e = torch.einsum("bh,bsh->bs", s, memories[k] @ scores[k].T).masked_fill(pads[k], float("-inf"))
                a = torch.softmax(e, 1)
                ctx.append(torch.einsum("bs,bsh->bh", a, memories[k]))
                weights[k].append(a)
                # |W_c^k c^k_t|: the size of source k's part of ~s_t's pre-activation
                share.append(torch.linalg.norm(ctx[-1] @ combine.weight[:, k * H:(k + 1) * H].T, dim=1))
        share = torch.stack(share, 1)
        shares.append((share / share.sum(1, keepdim=True)).detach())
        feed = torch.tanh(combine(torch.cat(ctx + [s], 1)))
        logits.append(out(feed))
    logits = torch.stack(logits, 1)
    r = fixed(logits.shape, seed + 99, requires_grad=False)
    (logits * r).sum().backward()
    w.case(name, src=torch.tensor(rows, dtype=torch.float64), lengths=torch.tensor(lengths, dtype=torch.float64),
           tgt_in=tgt_in.to(torch.float64), logits=logits, r=r,
           **{"attention%d" % k: torch.stack(weights[k], 1) for k in range(K)}, share=torch.stack(shares, 1),
           **{n: p.detach() for n, p in named}, **{"grad_" + n: p.grad for n, p in named})


def main():
    w = Writer("multi_source")
    combiner_case(w, "basic", Basic, 500)
    combiner_case(w, "child_sum", ChildSum, 600)
    model_case(w, "separate", False, 700)
    model_case(w, "flat", True, 800)
    w.save()


if __name__ == "__main__":
    main()
