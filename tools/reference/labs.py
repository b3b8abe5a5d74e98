#!/usr/bin/python3
"""PyTorch reference values for the lab track's graders (labs/grader/).

Writes labs/reference/<lab>.json in the format of tools/reference/common.py:
fixed float64 inputs, the outputs, and the gradients of L = sum(out * r) for a
fixed r (so every output element is weighted by a different number).

    /usr/bin/python3 tools/reference/labs.py
"""
import json
import math
import os

import torch
import torch.nn.functional as F

from common import ROOT, encode, fixed

OUT_DIR = os.path.join(ROOT, "labs", "reference")


class LabWriter:
    def __init__(self, name):
        self.name = name
        self.cases = {}

    def case(self, case_name, **tensors):
        assert case_name not in self.cases, case_name
        self.cases[case_name] = {k: encode(v) for k, v in tensors.items()}

    def save(self):
        os.makedirs(OUT_DIR, exist_ok=True)
        path = os.path.join(OUT_DIR, self.name + ".json")
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"generator": "tools/reference/labs.py", "torch": torch.__version__,
                       "cases": self.cases}, f, indent=0)
            f.write("\n")
        os.replace(tmp, path)  # written whole or not at all
        print("wrote", path, len(self.cases), "cases")


def grads(out, r, *inputs):
    """Gradients of sum(out * r) with respect to inputs."""
    for t in inputs:
        t.grad = None
    (out * r).sum().backward()
    return [t.grad.clone() for t in inputs]


def away_from_zero(shape, seed, low=0.5, high=2.0):
    mag = fixed(shape, seed, low, high, requires_grad=False)
    sign = torch.where(fixed(shape, seed + 1, requires_grad=False) < 0, -1.0, 1.0)
    return (mag * sign).requires_grad_(True)


def lab00():
    w = LabWriter("lab00_engine")
    a, b = fixed([3, 1], 1), fixed([4], 2)
    r = fixed([3, 4], 3, requires_grad=False)
    ga, gb = grads(a * b, r, a, b)
    w.case("mul", a=a, b=b, r=r, grad_a=ga, grad_b=gb)

    a, b = fixed([2, 3], 4), away_from_zero([3], 5)
    r = fixed([2, 3], 7, requires_grad=False)
    ga, gb = grads(a / b, r, a, b)
    w.case("div", a=a, b=b, r=r, grad_a=ga, grad_b=gb)

    x = fixed([2, 4], 8, -5.0, 5.0)
    r = fixed([2, 4], 9, requires_grad=False)
    (gx,) = grads(torch.exp(x), r, x)
    w.case("exp", x=x, r=r, grad_x=gx)

    # large magnitudes: tanh saturates, its gradient vanishes (and must not be NaN)
    x = torch.tensor([[-1000.0, -20.0, -3.0, -0.5], [0.0, 0.5, 3.0, 20.0]], requires_grad=True)
    r = fixed([2, 4], 10, requires_grad=False)
    (gx,) = grads(torch.tanh(x), r, x)
    w.case("tanh", x=x, r=r, grad_x=gx)

    a, b = fixed([3, 4], 11), fixed([4, 5], 12)
    r = fixed([3, 5], 13, requires_grad=False)
    ga, gb = grads(a @ b, r, a, b)
    w.case("matmul", a=a, b=b, r=r, grad_a=ga, grad_b=gb)

    # square factors: a transposed product has the right shape, only its values are wrong
    a, b = fixed([3, 3], 14), fixed([3, 3], 15)
    r = fixed([3, 3], 16, requires_grad=False)
    ga, gb = grads(a @ b, r, a, b)
    w.case("matmul_square", a=a, b=b, r=r, grad_a=ga, grad_b=gb)
    w.save()


def lab01():
    w = LabWriter("lab01_softmax")
    x = fixed([2, 3, 5], 20, -3.0, 3.0)
    r = fixed([2, 3, 5], 21, requires_grad=False)
    y = torch.softmax(x, -1)
    (gx,) = grads(y, r, x)
    ly = torch.log_softmax(x, -1)
    (lgx,) = grads(ly, r, x)
    w.case("fixed", x=x, r=r, softmax=y, softmax_grad_x=gx, log_softmax=ly, log_softmax_grad_x=lgx)

    x = torch.tensor([[1000.0, 999.0, 998.0, 0.0],
                      [-1000.0, -1001.0, -1e4, -999.0],
                      [1e4, 1e4, -1e4, 0.0]], requires_grad=True)
    w.case("large", x=x, softmax=torch.softmax(x, -1), log_softmax=torch.log_softmax(x, -1))
    w.save()


def lab02():
    w = LabWriter("lab02_layer_norm")
    x, gamma, beta = fixed([2, 3, 6], 30, -2.0, 2.0), fixed([6], 31, 0.5, 1.5), fixed([6], 32)
    r = fixed([2, 3, 6], 33, requires_grad=False)
    y = F.layer_norm(x, [6], gamma, beta, 1e-5)
    gx, gg, gb = grads(y, r, x, gamma, beta)
    w.case("fixed", x=x, gamma=gamma, beta=beta, eps=torch.tensor(1e-5), y=y, r=r,
           grad_x=gx, grad_gamma=gg, grad_beta=gb)

    # a large common offset: mean(x^2) - mean(x)^2 loses the variance to rounding
    x = (fixed([4, 5], 34, requires_grad=False) + 1e6).requires_grad_(True)
    gamma, beta = torch.ones(5), torch.zeros(5)
    w.case("offset", x=x, gamma=gamma, beta=beta, eps=torch.tensor(1e-5),
           y=F.layer_norm(x, [5], gamma, beta, 1e-5))

    # a large eps shows whether it sits inside the square root
    x, gamma, beta = fixed([3, 4], 35), fixed([4], 36), fixed([4], 37)
    w.case("big_eps", x=x, gamma=gamma, beta=beta, eps=torch.tensor(0.5), y=F.layer_norm(x, [4], gamma, beta, 0.5))
    w.save()


def lab03():
    w = LabWriter("lab03_lstm_cell")
    B, I, H = 2, 3, 4
    cell = torch.nn.LSTMCell(I, H)
    with torch.no_grad():
        for k, p in enumerate(cell.parameters()):
            p.copy_(fixed(list(p.shape), 40 + k, -0.7, 0.7, requires_grad=False))
    x, h, c = fixed([B, I], 45, -2.0, 2.0), fixed([B, H], 46), fixed([B, H], 47)
    h1, c1 = cell(x, (h, c))
    rh, rc = fixed([B, H], 48, requires_grad=False), fixed([B, H], 49, requires_grad=False)
    params = [cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh]
    for t in [x, h, c] + params:
        t.grad = None
    ((h1 * rh).sum() + (c1 * rc).sum()).backward()
    w.case("fixed", x=x, h=h, c=c, w_ih=cell.weight_ih, w_hh=cell.weight_hh, b_ih=cell.bias_ih,
           b_hh=cell.bias_hh, h1=h1, c1=c1, rh=rh, rc=rc,
           grad_x=x.grad, grad_h=h.grad, grad_c=c.grad, grad_w_ih=cell.weight_ih.grad,
           grad_w_hh=cell.weight_hh.grad, grad_b_ih=cell.bias_ih.grad, grad_b_hh=cell.bias_hh.grad)
    w.save()


def masked_softmax(scores, blocked):
    """Softmax over the last axis with blocked positions at 0; a row blocked entirely is all 0
    (attn's convention, docs/masks.md; PyTorch alone would give NaN there)."""
    y = torch.softmax(scores.masked_fill(blocked, -math.inf), -1)
    return torch.nan_to_num(y, nan=0.0)


def lab04():
    w = LabWriter("lab04_additive")
    B, T, Hd, He, A = 2, 5, 3, 4, 6
    s, h = fixed([B, Hd], 50), fixed([B, T, He], 51)
    W, U, v = fixed([A, Hd], 52), fixed([A, He], 53), fixed([A], 54)
    lengths = [5, 3]
    blocked = torch.tensor([[j >= n for j in range(T)] for n in lengths])
    e = torch.tanh((s @ W.T).unsqueeze(1) + h @ U.T) @ v  # [B, T]
    alpha = masked_softmax(e, blocked)
    context = (alpha.unsqueeze(1) @ h).squeeze(1)  # [B, He]
    rw, rc = fixed([B, T], 55, requires_grad=False), fixed([B, He], 56, requires_grad=False)
    for t in [s, h, W, U, v]:
        t.grad = None
    ((alpha * rw).sum() + (context * rc).sum()).backward()
    w.case("fixed", s=s, h=h, W=W, U=U, v=v, mask=blocked.double(), scores=e, weights=alpha, context=context,
           rw=rw, rc=rc, grad_s=s.grad, grad_h=h.grad, grad_W=W.grad, grad_U=U.grad, grad_v=v.grad)
    w.save()


def lab05():
    w = LabWriter("lab05_sdpa")
    B, T, D, Dv = 2, 4, 3, 5
    for name, kind in [("padding", "padding"), ("causal", "causal"), ("both", "both")]:
        q, k, v = fixed([B, T, D], 60), fixed([B, T, D], 61), fixed([B, T, Dv], 62)
        pad = torch.tensor([[j >= n for j in range(T)] for n in [4, 2]]).unsqueeze(1).expand(B, T, T)
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), 1).expand(B, T, T)
        blocked = {"padding": pad, "causal": causal, "both": pad | causal}[kind].clone()
        if kind == "both":
            blocked[1, 0, :] = True  # a row with every key blocked: its weights are all 0
        scores = q @ k.transpose(1, 2) / math.sqrt(D)
        weights = masked_softmax(scores, blocked)
        out = weights @ v
        ro, rw = fixed([B, T, Dv], 63, requires_grad=False), fixed([B, T, T], 64, requires_grad=False)
        for t in [q, k, v]:
            t.grad = None
        ((out * ro).sum() + (weights * rw).sum()).backward()
        w.case(name, q=q, k=k, v=v, mask=blocked.double(), out=out, weights=weights, ro=ro, rw=rw,
               grad_q=q.grad, grad_k=k.grad, grad_v=v.grad)
    w.save()


def lab06():
    w = LabWriter("lab06_heads")
    B, T, H, d = 2, 3, 2, 4
    x = fixed([B, T, H * d], 70)
    w.case("split", x=x, y=x.view(B, T, H, d).transpose(1, 2))  # [B, H, T, d]
    y = fixed([B, H, T, d], 71)
    w.case("merge", x=y, y=y.transpose(1, 2).reshape(B, T, H * d))
    w.save()


def sinusoidal(T, d):
    """The Transformer's positional encoding, as PyTorch's tutorials build it."""
    pe = torch.zeros(T, d)
    position = torch.arange(T, dtype=torch.float64).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * (-math.log(10000.0) / d))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


def lab07():
    w = LabWriter("lab07_positions")
    w.case("short", pe=sinusoidal(6, 8))
    w.case("long", pe=sinusoidal(1000, 4))
    w.save()


def lab08():
    w = LabWriter("lab08_cross_entropy")
    N, C = 6, 4
    logits = fixed([N, C], 80, -3.0, 3.0)
    targets = torch.tensor([2, 0, -100, 3, 1, -100])
    for name, t, s in [("plain", torch.tensor([2, 0, 1, 3, 1, 0]), 0.0), ("padding", targets, 0.0),
                       ("smoothing", targets, 0.1)]:
        logits.grad = None
        loss = F.cross_entropy(logits, t, ignore_index=-100, label_smoothing=s)
        loss.backward()
        w.case(name, logits=logits, targets=t.double(), label_smoothing=torch.tensor(s), loss=loss,
               grad_logits=logits.grad)
    w.save()


def lab09():
    w = LabWriter("lab09_adam")
    for name, scale, seed in [("steps", 1.0, 90), ("tiny", 1e-9, 95)]:
        p = fixed([3, 4], seed)
        p0 = p.detach().clone()
        opt = torch.optim.Adam([p], lr=0.01, betas=(0.9, 0.999), eps=1e-8)
        tensors = {"p0": p0}
        for t in range(1, 4):
            g = fixed([3, 4], seed + t, requires_grad=False) * scale
            p.grad = g.clone()
            opt.step()
            tensors["g%d" % t] = g
            tensors["p%d" % t] = p.detach().clone()
        state = opt.state[p]
        w.case(name, exp_avg=state["exp_avg"], exp_avg_sq=state["exp_avg_sq"], **tensors)
    w.save()


def lab10():
    w = LabWriter("lab10_beam")
    for name, K, V, beam, seed in [("step", 3, 5, 3, 100), ("first", 1, 6, 4, 101)]:
        scores = fixed([K], seed, -3.0, 0.0, requires_grad=False)
        log_probs = torch.log_softmax(fixed([K, V], seed + 1, -2.0, 2.0, requires_grad=False), -1)
        top, flat = torch.topk((scores.unsqueeze(1) + log_probs).reshape(-1), beam)  # best first
        w.case(name, scores=scores, log_probs=log_probs, beam=torch.tensor(float(beam)), top_scores=top,
               hypothesis=(flat // V).double(), token=(flat % V).double())
    w.save()


ENCODER_PARAMS = ["in_proj_weight", "in_proj_bias", "out_proj_weight", "out_proj_bias", "linear1_weight",
                  "linear1_bias", "linear2_weight", "linear2_bias", "norm1_weight", "norm1_bias", "norm2_weight",
                  "norm2_bias"]


def lab11():
    w = LabWriter("lab11_encoder_layer")
    B, T, D, H, F_ = 2, 4, 8, 2, 16
    layer = torch.nn.TransformerEncoderLayer(D, H, F_, dropout=0.0, batch_first=True)
    layer.train()  # dropout is 0; training mode keeps PyTorch off its fused fast path
    params = dict(layer.named_parameters())
    names = {"in_proj_weight": "self_attn.in_proj_weight", "in_proj_bias": "self_attn.in_proj_bias",
             "out_proj_weight": "self_attn.out_proj.weight", "out_proj_bias": "self_attn.out_proj.bias",
             "linear1_weight": "linear1.weight", "linear1_bias": "linear1.bias",
             "linear2_weight": "linear2.weight", "linear2_bias": "linear2.bias",
             "norm1_weight": "norm1.weight", "norm1_bias": "norm1.bias",
             "norm2_weight": "norm2.weight", "norm2_bias": "norm2.bias"}
    with torch.no_grad():
        for k, (ours, theirs) in enumerate(names.items()):
            p = params[theirs]
            p.copy_(fixed(list(p.shape), 110 + k, -0.5, 0.5, requires_grad=False) + (1.0 if "norm" in ours and "weight" in ours else 0.0))
    x = fixed([B, T, D], 130, -1.5, 1.5)
    r = fixed([B, T, D], 131, requires_grad=False)
    for case, mask in [("no_mask", None), ("padding", torch.tensor([[False] * 4, [False, False, True, True]]))]:
        x.grad = None
        for p in layer.parameters():
            p.grad = None
        out = layer(x, src_key_padding_mask=mask)
        (out * r).sum().backward()
        tensors = {"x": x, "out": out, "r": r, "grad_x": x.grad,
                   "mask": (mask if mask is not None else torch.zeros(B, T, dtype=torch.bool)).double()}
        for ours, theirs in names.items():
            tensors[ours] = params[theirs]
            tensors["grad_" + ours] = params[theirs].grad
        w.case(case, **tensors)
    w.save()


def luong_step(y, h_tilde, h, c, hs, blocked, cell, W_a, W_c):
    """Luong et al. 2015, general score with input feeding: one decoder step."""
    h1, c1 = cell(torch.cat([y, h_tilde], -1), (h, c))              # input feeding: [y; h~_prev]
    e = torch.bmm(hs @ W_a.T, h1.unsqueeze(2)).squeeze(2)            # e[b, s] = h1[b] . W_a hs[b, s]
    alpha = masked_softmax(e, blocked)
    context = torch.bmm(alpha.unsqueeze(1), hs).squeeze(1)
    return torch.tanh(torch.cat([context, h1], -1) @ W_c.T), h1, c1, alpha


def lab12():
    w = LabWriter("lab12_luong")
    B, S, E, H = 2, 5, 3, 4
    cell = torch.nn.LSTMCell(E + H, H)
    with torch.no_grad():
        for k, p in enumerate(cell.parameters()):
            p.copy_(fixed(list(p.shape), 140 + k, -0.6, 0.6, requires_grad=False))
    W_a, W_c = fixed([H, H], 145), fixed([H, 2 * H], 146)
    y1, y2 = fixed([B, E], 147), fixed([B, E], 148)
    h_tilde, h, c = fixed([B, H], 149), fixed([B, H], 150), fixed([B, H], 151)
    hs = fixed([B, S, H], 152)
    blocked = torch.tensor([[j >= n for j in range(S)] for n in [5, 3]])
    params = {"w_ih": cell.weight_ih, "w_hh": cell.weight_hh, "b_ih": cell.bias_ih, "b_hh": cell.bias_hh,
              "W_a": W_a, "W_c": W_c}
    inputs = {"y": y1, "h_tilde": h_tilde, "h": h, "c": c, "hs": hs}
    out = luong_step(y1, h_tilde, h, c, hs, blocked, cell, W_a, W_c)
    r = [fixed(list(t.shape), 160 + k, requires_grad=False) for k, t in enumerate(out)]
    sum((t * rr).sum() for t, rr in zip(out, r)).backward()
    tensors = dict(inputs, **params)
    tensors.update({"mask": blocked.double(), "h_tilde1": out[0], "h1": out[1], "c1": out[2], "weights1": out[3],
                    "r_h_tilde": r[0], "r_h": r[1], "r_c": r[2], "r_weights": r[3]})
    for name, t in list(inputs.items()) + list(params.items()):
        tensors["grad_" + name] = t.grad
    with torch.no_grad():  # a second step, fed the first one's attentional vector
        out2 = luong_step(y2, out[0], out[1], out[2], hs, blocked, cell, W_a, W_c)
    tensors.update({"y2": y2, "h_tilde2": out2[0], "h2": out2[1], "c2": out2[2], "weights2": out2[3]})
    w.case("fixed", **tensors)
    w.save()

def partial(s, v):
    """The online softmax's partial result of a block of scores s [Tq, n] and values v [n, Dv]."""
    m = s.max(dim=1).values
    p = torch.exp(s - m[:, None])
    return m, p.sum(dim=1), p @ v


def lab13():
    w = LabWriter("lab13_online_softmax")
    Tq, Tk, D, Dv, split = 5, 7, 3, 4, 3
    q, k, v = fixed([Tq, D], 170, -2.0, 2.0), fixed([Tk, D], 171, -2.0, 2.0), fixed([Tk, Dv], 172)
    s = q @ k.T / math.sqrt(D)
    ma, la, ua = partial(s[:, :split], v[:split])
    mb, lb, ub = partial(s[:, split:], v[split:])
    # The merge must be tried both ways round: some rows' max lies in the first part, some in the second.
    assert bool((ma > mb).any()) and bool((mb > ma).any())
    m, l, u = partial(s, v)
    out = torch.softmax(s, dim=1) @ v
    lse = torch.logsumexp(s, dim=1)
    r = fixed([Tq, Dv], 173, requires_grad=False)
    (out * r).sum().backward()
    w.case("fixed", q=q, k=k, v=v, a_m=ma, a_l=la, a_u=ua, b_m=mb, b_l=lb, b_u=ub, m=m, l=l, u=u, out=out,
           lse=lse, dout=r, grad_q=q.grad, grad_k=k.grad, grad_v=v.grad)
    w.save()


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def rope(x, start, base):
    """Rotary embeddings in the rotate-half layout (GPT-NeoX's, Hugging Face Llama's): feature k pairs
    with k + d/2, pair k of row t turns by (start + t) base^(-2k/d)."""
    T, d = x.shape[-2], x.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)              # [d/2]
    angle = (start + torch.arange(T, dtype=torch.float64))[:, None] * theta[None]  # [T, d/2]
    cos, sin = torch.cat([angle.cos()] * 2, -1), torch.cat([angle.sin()] * 2, -1)
    return x * cos + rotate_half(x) * sin


def alibi_slopes(n):
    """ALiBi's slopes, the paper's own get_slopes (github.com/ofirpress/attention_with_linear_biases)."""
    def power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]
    if math.log2(n).is_integer():
        return power_of_2(n)
    p = 2 ** math.floor(math.log2(n))
    return power_of_2(p) + alibi_slopes(2 * p)[0::2][:n - p]


def alibi_scores(scores, causal):
    """scores [B, H, T, T] - m_h |i - j| (attn's symmetric form); causal: keys j > i filled with -1e30."""
    H, T = scores.shape[1], scores.shape[-1]
    m = torch.tensor(alibi_slopes(H))
    pos = torch.arange(T, dtype=torch.float64)
    out = scores - m[:, None, None] * (pos[:, None] - pos[None, :]).abs()
    if causal:
        out = out.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), -1e30)
    return out


def lab14():
    w = LabWriter("lab14_rotary_alibi")
    x = fixed([2, 3, 5, 8], 170)
    r = fixed([2, 3, 5, 8], 171, requires_grad=False)
    out = rope(x, 3, 10000.0)
    (gx,) = grads(out, r, x)
    w.case("rope", x=x, out=out, r=r, grad_x=gx)
    x = fixed([1, 2, 4, 6], 172, requires_grad=False)
    w.case("rope_base", x=x, out=rope(x, 0, 500.0))
    for n in [1, 2, 4, 8, 16, 3, 5, 6, 7, 12]:
        w.case("slopes_%d" % n, slopes=torch.tensor(alibi_slopes(n)))
    s = fixed([2, 4, 5, 5], 173, -2.0, 2.0, requires_grad=False)
    w.case("symmetric", scores=s, out=alibi_scores(s, False))
    s = fixed([1, 6, 6, 6], 174, -2.0, 2.0, requires_grad=False)
    w.case("causal", scores=s, out=alibi_scores(s, True))
    # causal ALiBi attention, 4 heads: softmax(alibi_scores(q k^T / sqrt(D))) v, and its gradients
    q, k, v = fixed([2, 4, 5, 3], 175), fixed([2, 4, 5, 3], 176), fixed([2, 4, 5, 3], 177)
    out = torch.softmax(alibi_scores(q @ k.transpose(-2, -1) / math.sqrt(3), True), -1) @ v
    r = fixed(list(out.shape), 178, requires_grad=False)
    gq, gk, gv = grads(out, r, q, k, v)
    w.case("attention", q=q, k=k, v=v, out=out, r=r, grad_q=gq, grad_k=gk, grad_v=gv)
    w.save()


def monotonic_alignment(energy, lengths):
    """Raffel et al. 2017's expected alignment, the division-free recurrence (their eqs. 11-14):
    q_tj = (1 - p_t,j-1) q_t,j-1 + alpha_t-1,j, alpha_tj = p_tj q_tj, p = sigmoid(energy), 0 on padding,
    alpha_-1 all on position 0."""
    B, Tq, Tk = energy.shape
    valid = torch.arange(Tk)[None, :] < torch.tensor(lengths)[:, None]  # [B, Tk]
    p = torch.where(valid[:, None, :], torch.sigmoid(energy), torch.zeros(()))
    previous = torch.zeros(B, Tk)
    previous[:, 0] = 1.0
    steps = []
    for t in range(Tq):
        alpha, q = [], None
        for j in range(Tk):
            q = previous[:, 0] if j == 0 else (1 - p[:, t, j - 1]) * q + previous[:, j]
            alpha.append(p[:, t, j] * q)
        previous = torch.stack(alpha, 1)
        steps.append(previous)
    return torch.stack(steps, 1)


def hard_monotonic(energy, lengths):
    """Hard decoding: from where the last step stopped, the first j with p >= 0.5 (energy >= 0), or -1."""
    B, Tq, Tk = energy.shape
    out = torch.zeros(B, Tq)
    for b in range(B):
        j = 0
        for t in range(Tq):
            while j < lengths[b] and energy[b, t, j] < 0:
                j += 1
            out[b, t] = j if j < lengths[b] else -1
    return out


def lab15():
    w = LabWriter("lab15_monotonic")
    # the chapter's hand case: p = (0.5, 0.5, 0.5) then (0.2, 0.4, 0.6), as energies logit(p)
    p = torch.tensor([[[0.5, 0.5, 0.5], [0.2, 0.4, 0.6]]])
    e = torch.log(p / (1 - p))
    w.case("hand", energy=e, lengths=torch.tensor([3.0]), alpha=monotonic_alignment(e, [3]),
           positions=hard_monotonic(e, [3]))
    # padded: lengths 5 and 3
    e = fixed([2, 4, 5], 180, -3.0, 3.0)
    alpha = monotonic_alignment(e, [5, 3])
    r = fixed([2, 4, 5], 181, requires_grad=False)
    (ge,) = grads(alpha, r, e)
    w.case("padded", energy=e, lengths=torch.tensor([5.0, 3.0]), alpha=alpha, r=r, grad_energy=ge)
    # saturated energies: p exactly 1 (40, 800) or exactly 0 (-800) in float64, next to ordinary ones
    e = torch.tensor([[[-800.0, 40.0, -1.0, 0.5, 2.0],
                       [-40.0, -800.0, 800.0, -0.3, 1.0],
                       [0.2, -800.0, -800.0, 40.0, -2.0]]])
    w.case("saturated", energy=e, lengths=torch.tensor([5.0]), alpha=monotonic_alignment(e, [5]),
           ordinary=torch.clamp(e, -3.0, 3.0), alpha_ordinary=monotonic_alignment(torch.clamp(e, -3.0, 3.0), [5]))
    # hard decoding: an energy of exactly 0 (stops there), a step that runs off the end, padding with
    # positive energies (never stopped on), a stop repeated by the next step
    e = torch.tensor([[[-1.0, -2.0, 0.0, 3.0, 1.0],
                       [-1.0, -1.0, 1.0, -2.0, -1.0],
                       [2.0, -1.0, -0.5, 1.0, -1.0],
                       [1.0, 1.0, 1.0, -1.0, -1.0],
                       [1.0, 1.0, 1.0, 1.0, 1.0]],
                      [[-1.0, 2.0, 1.0, 1.0, 1.0],
                       [1.0, -1.0, -3.0, 2.0, 2.0],
                       [1.0, 1.0, 1.0, 1.0, 1.0],
                       [-1.0, -1.0, -1.0, -1.0, -1.0],
                       [1.0, 1.0, 1.0, 1.0, 1.0]]])
    w.case("hard", energy=e, lengths=torch.tensor([5.0, 3.0]), positions=hard_monotonic(e, [5, 3]))
    w.save()


def pointer_mixture(logits, scores, sentinel, window):
    """The pointer sentinel's next-word distribution (Merity et al. 2016), row by row as chapter 20's
    reference writes it: one softmax over [scores; sentinel], the gate g its last weight, then
    g p_vocab plus each slot's weight added to its word (index_add)."""
    rows = []
    for b in range(logits.shape[0]):
        w = torch.softmax(torch.cat([scores[b], sentinel[b]]), 0)
        g = w[-1]
        p_ptr = torch.zeros(logits.shape[1]).index_add(0, window[b], w[:-1])
        rows.append(g * torch.softmax(logits[b], 0) + p_ptr)
    return torch.stack(rows)


def pointer_log_prob(logits, scores, sentinel, window, targets):
    """log p(y) from log weights: logsumexp over log g + log p_vocab(y) and the log weights of the
    slots holding y, so that it stays finite where p(y) rounds to 0."""
    log_w = torch.log_softmax(torch.cat([scores, sentinel], -1), -1)
    log_pv = torch.log_softmax(logits, -1).gather(1, targets[:, None])[:, 0]
    out = []
    for b in range(logits.shape[0]):
        copies = [log_w[b, j] for j in range(window.shape[1]) if window[b, j] == targets[b]]
        out.append(torch.logsumexp(torch.stack([log_w[b, -1] + log_pv[b]] + copies), 0))
    return torch.stack(out)


def lab17():
    w = LabWriter("lab17_pointer_sentinel")
    # V = 8, L = 6. Row 0: word 6 three times; row 1: <unk> (id 3, for words outside the vocabulary) three
    # times; row 2: every word once, the target none of them; row 3: three words twice each, the target none.
    window = torch.tensor([[6, 5, 6, 4, 6, 2], [3, 4, 3, 7, 2, 3], [2, 3, 4, 5, 6, 7], [5, 5, 2, 2, 4, 4]])
    targets = torch.tensor([6, 3, 1, 6])
    logits, scores, sentinel = fixed([4, 8], 180, -2.0, 2.0), fixed([4, 6], 181, -2.0, 2.0), fixed([4, 1], 182, -2.0, 2.0)
    p = pointer_mixture(logits, scores, sentinel, window)
    r = fixed([4, 8], 183, requires_grad=False)
    gl, gs, gt = grads(p, r, logits, scores, sentinel)
    w.case("mixture", logits=logits, scores=scores, sentinel=sentinel, window=window, p=p, r=r,
           grad_logits=gl, grad_scores=gs, grad_sentinel=gt)
    lp = pointer_log_prob(logits, scores, sentinel, window, targets)
    assert torch.allclose(lp, torch.log(p.gather(1, targets[:, None])[:, 0]), rtol=1e-12, atol=0)
    r = fixed([4], 184, requires_grad=False)
    gl, gs, gt = grads(lp, r, logits, scores, sentinel)
    w.case("log_prob", logits=logits, scores=scores, sentinel=sentinel, window=window, targets=targets,
           log_prob=lp, r=r, grad_logits=gl, grad_scores=gs, grad_sentinel=gt)
    # scores and logits near 1000: exp overflows unless the softmax subtracts its maximum
    big = lambda shape, seed: (1000.0 + fixed(shape, seed, -3.0, 3.0, requires_grad=False))
    logits, scores, sentinel = big([2, 5], 185), big([2, 4], 186), big([2, 1], 187)
    window = torch.tensor([[1, 2, 1, 3], [4, 4, 0, 2]])
    w.case("large", logits=logits, scores=scores, sentinel=sentinel, window=window,
           p=pointer_mixture(logits, scores, sentinel, window))
    # p(y) far below the smallest float64 (near e^-1600, e^-900 and e^-2e12): log p is finite only from log
    # weights. Row 0: the target is not in the window, the gate near e^-800 and p_vocab(y) near e^-800;
    # row 1: the target twice in the window, every term near e^-900; row 2: the target not in the window,
    # logits[y] and the sentinel near -1e12, the window's scores ordinary, so log p(y) near -2e12: the slots
    # not holding y blocked with a finite fill (-1e4, -1e9) would outweigh it.
    logits = torch.tensor([[0.0, 0.5, -0.5, 1.0, -800.0], [0.0, 1.0, -900.0, 0.5, -1.0],
                           [0.3, -0.4, -1e12 - 2.0, 0.8, -1.2]])
    scores = torch.tensor([[0.0, 1.0, -1.0, 0.5], [-900.0, -905.0, 0.0, 0.3], [0.5, -0.3, 1.2, 0.1]])
    sentinel = torch.tensor([[-800.0], [0.0], [-1e12 + 1.0]])
    window = torch.tensor([[1, 2, 1, 3], [2, 2, 3, 1], [1, 0, 3, 1]])
    targets = torch.tensor([4, 2, 2])
    w.case("tiny", logits=logits, scores=scores, sentinel=sentinel, window=window, targets=targets,
           log_prob=pointer_log_prob(logits, scores, sentinel, window, targets))
    w.save()


def copynet_joint(psi_g, psi_c, copy_ids, lengths, extended):
    """CopyNet's distribution over the extended vocabulary (Gu et al. 2016), row by row as chapter 21's
    reference writes it: one softmax over the V generate scores and the copy scores of the real source
    positions, then p(y) = p_g(y) [y < V] + the copy weights of the positions holding y (index_add)."""
    V = psi_g.shape[1]
    rows = []
    for b in range(psi_g.shape[0]):
        n = int(lengths[b])
        w = torch.softmax(torch.cat([psi_g[b], psi_c[b, :n]]), 0)
        p = torch.cat([w[:V], torch.zeros(extended - V)]).index_add(0, copy_ids[b, :n], w[V:])
        rows.append(p)
    return torch.stack(rows)


def lab18():
    w = LabWriter("lab18_copynet")
    # V = 8, S = 5, extended vocabulary 11. Row 0: word 4 (in the vocabulary) twice, 5 once, the source-only
    # word 10; row 1 (3 real tokens, 2 of padding): the source-only word 8 twice, and 9.
    copy_ids = torch.tensor([[4, 5, 4, 10, 6], [8, 9, 8, 0, 0]])
    lengths = torch.tensor([5, 3])
    psi_g, psi_c = fixed([2, 8], 190, -2.0, 2.0), fixed([2, 5], 191, -2.0, 2.0)
    p = copynet_joint(psi_g, psi_c, copy_ids, lengths, 11)
    r = fixed([2, 11], 192, requires_grad=False)
    gg, gc = grads(p, r, psi_g, psi_c)
    w.case("joint", psi_g=psi_g, psi_c=psi_c, copy_ids=copy_ids, lengths=lengths, p=p, r=r, grad_psi_g=gg,
           grad_psi_c=gc)
    # scores near 1000: exp overflows unless the softmax subtracts its maximum
    psi_g = 1000.0 + fixed([2, 6], 193, -3.0, 3.0, requires_grad=False)
    psi_c = 1000.0 + fixed([2, 4], 194, -3.0, 3.0, requires_grad=False)
    copy_ids = torch.tensor([[2, 6, 6, 7], [7, 3, 0, 0]])
    lengths = torch.tensor([4, 2])
    w.case("large", psi_g=psi_g, psi_c=psi_c, copy_ids=copy_ids, lengths=lengths,
           p=copynet_joint(psi_g, psi_c, copy_ids, lengths, 8))
    # real scores near -1e12, row 1 padded: a padding fill above them (-100, or -1e9) takes the weight;
    # -1e30 (nn::kBlockedScore) lies below every real score
    psi_g = -1e12 + fixed([2, 6], 195, -3.0, 3.0, requires_grad=False)
    psi_c = -1e12 + fixed([2, 4], 196, -3.0, 3.0, requires_grad=False)
    w.case("far", psi_g=psi_g, psi_c=psi_c, copy_ids=copy_ids, lengths=lengths,
           p=copynet_joint(psi_g, psi_c, copy_ids, lengths, 8))
    w.save()


def causal_attention(x, Wq, Wk, Wv):
    """One head of causal self-attention: softmax(Q K^T / sqrt(d), keys j <= i) V, Q = x Wq, ..."""
    q, k, v = x @ Wq, x @ Wk, x @ Wv
    T, d = x.shape[1], Wq.shape[1]
    scores = (q @ k.transpose(-2, -1) / math.sqrt(d)).masked_fill(torch.ones(T, T).triu(1).bool(), float("-inf"))
    return torch.softmax(scores, -1) @ v


def lab16():
    w = LabWriter("lab16_kv_cache")
    x = fixed([2, 6, 5], 190, requires_grad=False)
    Wq, Wk, Wv = (fixed([5, 3], s, requires_grad=False) for s in (191, 192, 193))
    w.case("steps", x=x, Wq=Wq, Wk=Wk, Wv=Wv, out=causal_attention(x, Wq, Wk, Wv),
           keys=x @ Wk, values=x @ Wv)
    # scores up to about 1e4: an exp without the maximum subtracted overflows
    w.case("large", x=x, Wq=3000 * Wq, Wk=Wk, Wv=Wv, out=causal_attention(x, 3000 * Wq, Wk, Wv))
    # a cache filled beforehand with keys and values of no input: the step must read them from the cache.
    # E = 6, so that neither sqrt(E) nor sqrt(d) = sqrt(3) equals sqrt(5), the positions cached after the step
    k_old, v_old = fixed([2, 4, 3], 194, requires_grad=False), fixed([2, 4, 3], 195, requires_grad=False)
    x_t = fixed([2, 1, 6], 196, requires_grad=False)
    Fq, Fk, Fv = (fixed([6, 3], s, requires_grad=False) for s in (197, 198, 199))
    keys, values = torch.cat([k_old, x_t @ Fk], 1), torch.cat([v_old, x_t @ Fv], 1)
    out = torch.softmax(x_t @ Fq @ keys.transpose(-2, -1) / math.sqrt(3), -1) @ values
    w.case("filled", key=k_old, value=v_old, x=x_t, Wq=Fq, Wk=Fk, Wv=Fv, out=out, keys=keys, values=values)
    w.save()


if __name__ == "__main__":
    torch.set_default_dtype(torch.float64)
    lab00()
    lab01()
    lab02()
    lab03()
    lab04()
    lab05()
    lab06()
    lab07()
    lab08()
    lab09()
    lab10()
    lab11()
    lab12()
    lab13()
    lab14()
    lab15()
    lab16()
    lab17()
    lab18()
