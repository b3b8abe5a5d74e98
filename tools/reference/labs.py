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


def hard_sample(scores, u):
    """Show, Attend and Tell's sampled cell: the first k whose cumulative weight a_0 + ... + a_k exceeds u,
    a = softmax(scores) (searchsorted on the right), the last cell when rounding leaves u above the total."""
    c = torch.cumsum(torch.softmax(scores, -1), -1)
    return torch.searchsorted(c, u[:, None].contiguous(), right=True)[:, 0].clamp(max=scores.shape[-1] - 1)


def hard_surrogate(scores, cells, rewards, b, reinforce, entropy_weight):
    """train/grid_loss.cpp's loss for one step of B captions: (1/B) sum_b [-R_b - lambda_r (R_b - b) log a_k
    - lambda_e H(a_b)], the advantage R_b - b a constant."""
    log_a = torch.log_softmax(scores, -1)
    choice = log_a.gather(1, cells[:, None])[:, 0]
    entropy = -(torch.softmax(scores, -1) * log_a).sum(-1)
    advantage = (rewards - b).detach()
    return (-rewards.sum() - reinforce * (advantage * choice).sum() - entropy_weight * entropy.sum()) / len(rewards)


def lab19():
    w = LabWriter("lab19_hard_attention")
    # B = 4, N = 6, one draw per row spread over [0, 1).
    scores = fixed([4, 6], 200, -2.0, 2.0)
    u = torch.tensor([0.05, 0.41, 0.77, 0.97])
    cells = hard_sample(scores.detach(), u)
    features = fixed([4, 6, 3], 201, -2.0, 2.0)
    context = features[torch.arange(4), cells]
    r = fixed([4, 3], 202, requires_grad=False)
    (gf,) = grads(context, r, features)
    w.case("sample", scores=scores, u=u, cells=cells, features=features, context=context, r=r, grad_features=gf)
    # The surrogate with a running baseline (started), then on a first batch (b = the batch's mean reward).
    rewards = fixed([4], 203, -3.0, -0.5)
    b, reinforce, entropy_weight, decay = -1.7, 1.0, 0.05, 0.9
    for name, base in (("surrogate", b), ("first", rewards.detach().mean().item())):
        loss = hard_surrogate(scores, cells, rewards, base, reinforce, entropy_weight)
        gs, gr = torch.autograd.grad(loss, (scores, rewards))
        w.case(name, scores=scores, cells=cells, rewards=rewards, baseline=torch.tensor([base]),
               baseline_after=torch.tensor([decay * base + (1 - decay) * rewards.detach().mean().item()]),
               options=torch.tensor([reinforce, entropy_weight, decay]), loss=loss, grad_scores=gs, grad_rewards=gr)
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


def coverage_penalty(att, steps, src_lengths):
    """Chapter 9's coverage penalty per sentence: P_b = sum_{j < src_lengths[b]} (1 - cov_bj)^2,
    cov_bj = sum_{t < steps[b]} a_btj (notebooks/09_alignment.ipynb, coverage_penalty)."""
    B, T, S = att.shape
    rows = torch.zeros(B, T, 1)
    cols = torch.zeros(B, S)
    for b in range(B):
        rows[b, :steps[b]] = 1.0
        cols[b, :src_lengths[b]] = 1.0
    cov = (att * rows).sum(1) * cols
    return ((1.0 - cov) ** 2 * cols).sum(1)


def gnmt_coverage(weights, src_length, beta):
    """GNMT's coverage penalty (Wu et al. 2016) as decode/decode.cpp's coverage_score computes it:
    beta * sum_{j < src_length} log(max(min(c_j, 1), 1e-10)), c_j = sum_t a_tj."""
    c = weights[:, :src_length].sum(0)
    return beta * torch.log(torch.clamp(torch.clamp(c, max=1.0), min=1e-10)).sum()


def peaks(weights, src_length, steps):
    """The links (t, argmax_j a_tj), t < steps, over the first src_length positions (the first maximum)."""
    j = torch.argmax(weights[:steps, :src_length], 1)
    return torch.tensor([[t, int(j[t])] for t in range(steps)], dtype=torch.float64).reshape(-1, 2)


def masked_rows(scores, src_length):
    """Softmax rows over the first src_length positions, exactly 0 on the rest."""
    w = torch.softmax(scores[:, :src_length], -1)
    return torch.cat([w, torch.zeros(scores.shape[0], scores.shape[1] - src_length)], 1)


def lab20():
    from nltk.translate import Alignment, alignment_error_rate
    w = LabWriter("lab20_coverage_aer")
    # The coverage penalty, the chapter's tiny case: [1, 3, 4], 2 valid steps, 3 valid source tokens.
    att = torch.softmax(fixed([1, 3, 4], 200, -2.0, 2.0, requires_grad=False), -1).requires_grad_(True)
    w.case("tiny", attention=att, steps=[2], src_lengths=[3], penalty=coverage_penalty(att, [2], [3]))
    # A padded batch [3, 5, 4], T != S: steps (5, 3, 4), source lengths (4, 2, 3); the rows past steps[b]
    # still attend (as a model does at padded target steps), the padding columns are 0 (masked softmax).
    steps, lengths = [5, 3, 4], [4, 2, 3]
    scores = fixed([3, 5, 4], 201, -3.0, 3.0, requires_grad=False)
    att = torch.stack([masked_rows(scores[b], lengths[b]) for b in range(3)]).requires_grad_(True)
    p = coverage_penalty(att, steps, lengths)
    r = fixed([3], 202, requires_grad=False)
    (g,) = grads(p, r, att)
    w.case("padded", attention=att, steps=steps, src_lengths=lengths, penalty=p, r=r, grad_attention=g)
    # GNMT's penalty. ordinary: [4, 5], some words over-attended (c > 1), some under.
    wt = masked_rows(fixed([4, 5], 203, -4.0, 4.0, requires_grad=False), 5)
    w.case("gnmt_ordinary", weights=wt, src_length=[5], beta=[0.2], cp=gnmt_coverage(wt, 5, 0.2))
    # padded: [4, 6], 4 real source words, the last 2 columns 0.
    wt = masked_rows(fixed([4, 6], 204, -4.0, 4.0, requires_grad=False), 4)
    w.case("gnmt_padded", weights=wt, src_length=[4], beta=[0.4], cp=gnmt_coverage(wt, 4, 0.4))
    # never attended: [3, 4], no step puts any weight on word 2 (c_2 = 0 exactly: log 0 without the floor).
    wt = torch.tensor([[0.7, 0.3, 0.0, 0.0], [0.1, 0.5, 0.0, 0.4], [0.0, 0.2, 0.0, 0.8]])
    w.case("gnmt_unattended", weights=wt, src_length=[4], beta=[0.3], cp=gnmt_coverage(wt, 4, 0.3))
    # The same weights with word 2 given a little weight (c_2 = 0.05): what the floor is not about.
    wt2 = torch.tensor([[0.7, 0.25, 0.05, 0.0], [0.1, 0.5, 0.0, 0.4], [0.0, 0.2, 0.0, 0.8]])
    w.case("gnmt_attended", weights=wt2, src_length=[4], beta=[0.3], cp=gnmt_coverage(wt2, 4, 0.3))
    # Hard links. The chapter's 5 x 5 toy, 4 steps with a gold source (<eos> left out).
    toy = torch.tensor([[0.90, 0.05, 0.05, 0.00, 0.00], [0.10, 0.20, 0.60, 0.10, 0.00],
                        [0.20, 0.20, 0.25, 0.20, 0.15], [0.00, 0.00, 0.10, 0.10, 0.80],
                        [0.20, 0.20, 0.20, 0.20, 0.20]])
    w.case("links_toy", weights=toy, src_length=[5], steps=[4], links=peaks(toy, 5, 4))
    # corners: T = 6 steps, S = 5 positions; 4 real positions (column 4 is padding and holds the largest
    # weight of rows 1 and 4), 5 steps counted (row 5 is not), a tie in row 2 (first maximum: position 1).
    wc = torch.tensor([[0.10, 0.60, 0.10, 0.10, 0.10], [0.30, 0.05, 0.05, 0.05, 0.55],
                       [0.05, 0.40, 0.10, 0.40, 0.05], [0.05, 0.05, 0.80, 0.05, 0.05],
                       [0.02, 0.03, 0.05, 0.30, 0.60], [0.90, 0.02, 0.03, 0.03, 0.02]])
    w.case("links_corners", weights=wc, src_length=[4], steps=[5], links=peaks(wc, 4, 5))
    # AER. The chapter's toy: A = {(0,0), (1,2), (2,2), (3,4)}, S = {(0,0), (1,1), (2,2), (3,3)}, P = S: 0.5.
    a = {(0, 0), (1, 2), (2, 2), (3, 4)}
    s = {(0, 0), (1, 1), (2, 2), (3, 3)}
    w.case("aer_toy", a=torch.tensor(sorted(a), dtype=torch.float64), sure=torch.tensor(sorted(s), dtype=torch.float64),
           aer=[alignment_error_rate(Alignment(s), Alignment(a))])
    # A corpus of 3 sentences with sure links and possible-only links (`possible` does not repeat S; P = S u possible):
    # A hits sure links, possible-only links and links neither; |A| != |S| != |P| per sentence and overall.
    corpus_a = [{(0, 0), (1, 1), (2, 3), (3, 2)},
                {(0, 1), (1, 0), (2, 2)},
                {(0, 0), (1, 2), (2, 1), (3, 3), (4, 4)}]
    corpus_s = [{(0, 0), (1, 1), (2, 2), (3, 3)},
                {(0, 0), (2, 2)},
                {(0, 0), (2, 2), (4, 4)}]
    corpus_p = [{(2, 3), (3, 2)},
                {(0, 1), (1, 1), (1, 2)},
                {(1, 2), (3, 1), (3, 2)}]

    def triples(sets):
        return sorted((k, t, j) for k, links in enumerate(sets) for (t, j) in links)

    def nltk_corpus(a_sets, s_sets, p_sets):
        # Corpus AER: the counts add up over the sentences, then one ratio. NLTK's alignment_error_rate on the
        # links (sentence, t, j) of the whole corpus gives exactly that (it asks P to contain S: P = S u possible).
        A, S = set(triples(a_sets)), set(triples(s_sets))
        P = S | set(triples(p_sets))
        return alignment_error_rate(S, A, P)

    per_sentence = [alignment_error_rate(Alignment(s_), Alignment(a_), Alignment(s_ | p_))
                    for a_, s_, p_ in zip(corpus_a, corpus_s, corpus_p)]
    w.case("aer_corpus", a=torch.tensor(triples(corpus_a), dtype=torch.float64),
           sure=torch.tensor(triples(corpus_s), dtype=torch.float64),
           possible=torch.tensor(triples(corpus_p), dtype=torch.float64), sentences=[3],
           aer=[nltk_corpus(corpus_a, corpus_s, corpus_p)], aer_per_sentence=per_sentence)
    w.save()


def bpe_merge(symbols, pair):
    """Every occurrence of pair, left to right, as one symbol (a a a -> aa a)."""
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            out.append(symbols[i] + symbols[i + 1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


def bpe_learn(words, n):
    """Sennrich, Haddow & Birch (2016)'s Algorithm 1 over a word-frequency dictionary: each word as its
    characters and the end-of-word mark "</w>" (a symbol of its own, as data/bpe.hpp writes it), every
    adjacent pair counted with its word's frequency, the most frequent merged; ties to the pair first in
    string order (data/bpe.hpp's rule; the paper's max() over a dict takes the first one inserted)."""
    vocab = [(list(w) + ["</w>"], c) for w, c in sorted(words.items())]
    merges = []
    for _ in range(n):
        pairs = {}
        for symbols, c in vocab:
            for pair in zip(symbols, symbols[1:]):
                pairs[pair] = pairs.get(pair, 0) + c
        if not pairs:  # every word one symbol
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        merges.append(best)
        vocab = [(bpe_merge(symbols, best), c) for symbols, c in vocab]
    return merges


def bpe_apply(merges, word):
    """A new word's symbols: repeatedly the earliest-learned merge present in it, everywhere in it
    (data/bpe.hpp's Bpe::encode before it writes "@@")."""
    rank = {}
    for i, m in enumerate(merges):
        rank.setdefault(tuple(m), i)
    symbols = list(word) + ["</w>"]
    while len(symbols) > 1:
        present = [rank[p] for p in zip(symbols, symbols[1:]) if p in rank]
        if not present:
            break
        symbols = bpe_merge(symbols, tuple(merges[min(present)]))
    return symbols


def lab21():
    """Lab 21: BPE merges (Algorithm 1, above) and corpus BLEU, by NLTK's corpus_bleu (no smoothing),
    its modified_precision and closest_ref_length. Strings are stored as JSON lists, not tensors."""
    import warnings
    import nltk
    from nltk.translate.bleu_score import closest_ref_length, corpus_bleu, modified_precision
    w = LabWriter("lab21_bpe_bleu")

    def learn_case(name, words, n):
        w.cases[name] = {"words": sorted([k, c] for k, c in words.items()), "n": n,
                         "merges": [list(m) for m in bpe_learn(words, n)]}

    paper = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
    learn_case("paper", paper, 10)
    # "the" 9 times against rare words that share pairs: unweighted counts would merge the rare pairs first
    learn_case("weighted", {"the": 9, "oxen": 1, "boxes": 1, "foxes": 1, "axe": 1, "sixes": 1}, 6)
    # every pair once: ties everywhere; "</w>" (0x3C) sorts before the letters
    learn_case("ties", {"ab": 1, "ba": 1, "cd": 1, "dc": 1}, 6)
    # (a, a) counted at each position (twice in aaa: 9 in all, above (b, c)'s 6; 5 counted once), merged left
    # to right (aaa -> aa a)
    learn_case("overlap", {"aaa": 2, "aaaa": 1, "bc": 6, "abaaab": 1}, 7)
    # one-letter words: a pair across words (</w>, a) would be frequent; 2 merges are all there are
    learn_case("boundary", {"a": 10, "b": 10}, 4)
    learn_case("french", {"fichier": 4, "fichiers": 2, "créé": 3, "créer": 2, "échec": 3, "été": 2, "écrire": 2,
                          "répertoire": 3, "dépôt": 1}, 14)

    merges = bpe_learn(paper, 10)
    words = ["lowest", "newer", "wider", "low", "newest", "est", "slow", "x"]
    w.cases["apply_paper"] = {"merges": [list(m) for m in merges], "words": words,
                              "symbols": [bpe_apply(merges, x) for x in words]}
    # merges (b, c) before (a, b): "abc" takes (b, c) first although (a, b) is further left; (a, a) overlaps
    order = bpe_learn({"bc": 5, "ab": 3, "aa": 2, "aaa": 1}, 8)
    # aabab: (a, a) makes "aa b a b", where the text "a b" also spans the symbols "aa" and "b"
    words = ["abc", "cab", "abab", "aaaaa", "aabc", "bcab", "aabab"]
    w.cases["apply_order"] = {"merges": [list(m) for m in order], "words": words,
                              "symbols": [bpe_apply(order, x) for x in words]}

    def bleu_case(name, references, hypotheses):
        assert all(len(h) >= 4 for h in hypotheses)  # NLTK's max(1, n-grams) never differs from the count
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NLTK warns of a zero precision
            bleu = corpus_bleu(references, hypotheses)
        counts = []
        for refs, hyp in zip(references, hypotheses):
            ps = [modified_precision(refs, hyp, n) for n in range(1, 5)]
            counts.append({"matches": [p.numerator for p in ps], "totals": [p.denominator for p in ps],
                           "hyp_length": len(hyp), "ref_length": closest_ref_length(refs, len(hyp))})
        w.cases[name] = {"references": references, "hypotheses": hypotheses, "bleu": bleu, "counts": counts,
                         "nltk": nltk.__version__}

    split = str.split
    # Papineni et al.'s example of clipping: "the" 7 times, at most 2 in one reference
    bleu_case("clip", [[split("there is a cat on the mat"), split("the cat is on the mat")],
                       [split("a cat sat on the mat")]],
              [split("the the the the the the the"), split("the cat sat on the mat")])
    # "the" 3 times in each reference: clipped to 3 (the largest), not 6 (the sum)
    bleu_case("multi_ref", [[split("the dog and the cat and the bird"), split("the bird saw the cat near the dog")]],
              [split("the the the the dog and the cat")])
    # closest reference lengths: 7 of (3, 7) for 6 words; 4 of (4, 8), a tie, for 6 words; 5 of (9, 5, 2) for 5;
    # 4 of (8, 4), the tie with the longer first (a tie kept to the first met fails here); 5 of (5, 8) for 6, the
    # closer one shorter (a distance len - c in unsigned integers wraps around and takes 8)
    bleu_case("ref_length", [[split("a b c"), split("a b c d e f g")],
                             [split("a b c d"), split("a b c d e f g h")],
                             [split("a b c d e f g h i"), split("a b c d e"), split("a b")],
                             [split("a b c d e f g h"), split("a b c d")],
                             [split("a b c d e"), split("a b c d e f g h")]],
              [split("a b c d e f"), split("a b c d e f"), split("a b c d e"), split("a b c d e f"),
               split("a b c d e f")])
    hyp1 = split("It is a guide to action which ensures that the military always obeys the commands of the party")
    ref1a = split("It is a guide to action that ensures that the military will forever heed Party commands")
    ref1b = split("It is the guiding principle which guarantees the military forces always being under the "
                  "command of the Party")
    ref1c = split("It is the practical guide for the army always to heed the directions of the party")
    hyp2 = split("he read the book because he was interested in world history")
    ref2a = split("he was interested in world history because he read the book")
    bleu_case("nltk_doc", [[ref1a, ref1b, ref1c], [ref2a]], [hyp1, hyp2])
    # shorter than the references: a penalty below 1
    bleu_case("short", [[split("the cat sat on the mat today")], [split("a dog ran in the big park")]],
              [split("the cat sat on the mat"), split("a dog ran in the park")])
    # longer than the references: no penalty (c > r)
    bleu_case("long", [[split("the cat sat on the mat")], [split("a dog ran in the park")]],
              [split("the cat sat on the red mat now"), split("a big dog ran in the park today")])
    # words match, no 4-gram does: NLTK gives bp * exp(log(p1 p2 p3) / 4 + log(float min) / 4) ~ 1e-78, attn 0
    bleu_case("zero_p4", [[split("a b c d e f")], [split("g h i j k")]],
              [split("a b c x d e f"), split("g h x i j")])
    # nothing matches: NLTK and attn 0
    bleu_case("zero_p1", [[split("a b c d e")]], [split("v w x y z")])
    # one sentence without a 4-gram match: its sentence BLEU is 0, the corpus's is not
    bleu_case("sentence_zero", [[split("the cat sat on the mat")], [split("it is raining in paris today")]],
              [split("the cat sat on the mat"), split("it rains in paris now")])
    w.save()


def conv_attention(E, lengths, h, K):
    """Chapter 12's convolutional attention (nn::ConvolutionalAttention with its copy head), PyTorch's conv1d
    with "same" padding: the padded positions zeroed before every convolution reads them, the gated
    features normalised per position, the weights softmaxes over the real positions, lambda the largest
    sigmoid over them. E [B, S, D], h [B, T, H] -> a, n, kappa, lambda."""
    B, S, _ = E.shape
    T, H = h.shape[1], h.shape[2]
    pad = torch.tensor([[j >= n for j in range(S)] for n in lengths])[:, None, :]  # [B, 1, S]
    x = E.transpose(1, 2).masked_fill(pad, 0.0)
    l1 = F.relu(F.conv1d(x, K["k1_w"], K["k1_b"], padding="same")).masked_fill(pad, 0.0)
    f = F.conv1d(l1, K["k2_w"], K["k2_b"], padding="same").masked_fill(pad, 0.0).transpose(1, 2)  # [B, S, H]
    l2 = f[:, None] * h[:, :, None]                                                                # [B, T, S, H]
    lfeat = l2 / torch.sqrt((l2 * l2).sum(-1, keepdim=True) + 1e-12)
    rows = lfeat.reshape(B * T, S, H).transpose(1, 2)

    def score(w, b):
        return F.conv1d(rows, w, b, padding="same").reshape(B, T, S)

    a = torch.softmax(score(K["att_w"], K["att_b"]).masked_fill(pad, float("-inf")), -1)
    kappa = torch.softmax(score(K["copy_w"], K["copy_b"]).masked_fill(pad, float("-inf")), -1)
    lam = torch.sigmoid(score(K["gate_w"], K["gate_b"])).masked_fill(pad, 0.0).max(-1, keepdim=True).values
    return a, a @ E, kappa, lam


def copy_mixture(p_gen, kappa, lam, copy_ids, extended):
    """p(y) = lambda p_gen(y) + (1 - lambda) sum_{j: copy_ids_j = y} kappa_j over the extended vocabulary
    (p_gen 0 on the source-only ids V..), the copies added by scatter_add."""
    B, T, V = p_gen.shape
    gen = torch.cat([p_gen, torch.zeros(B, T, extended - V)], -1)
    copied = torch.zeros(B, T, extended).scatter_add(-1, copy_ids[:, None, :].expand(B, T, -1), kappa)
    return lam * gen + (1 - lam) * copied


def conv_kernels(D, H, k1, w1, w2, w3, seed):
    shapes = {"k1_w": [k1, D, w1], "k1_b": [k1], "k2_w": [H, k1, w2], "k2_b": [H], "att_w": [1, H, w3], "att_b": [1],
              "copy_w": [1, H, w3], "copy_b": [1], "gate_w": [1, H, w3], "gate_b": [1]}
    return {k: fixed(s, seed + i, -0.8, 0.8) for i, (k, s) in enumerate(shapes.items())}


def lab22():
    w = LabWriter("lab22_conv_copy")
    # Chapter 12's layer: D = 4, H = 3, k1 = 5, windows 5, 3, 3; B = 2, S = 6, T = 2; row 1 has 4 real tokens.
    K = conv_kernels(4, 3, 5, 5, 3, 3, 220)
    E, h = fixed([2, 6, 4], 230, -1.5, 1.5), fixed([2, 2, 3], 231, -1.5, 1.5)
    lengths = [6, 4]
    out = conv_attention(E, lengths, h, K)
    r = [fixed(list(t.shape), 232 + k, requires_grad=False) for k, t in enumerate(out)]
    names = ["E", "h"] + list(K)
    for t in [E, h] + list(K.values()):
        t.grad = None
    sum((t * rr).sum() for t, rr in zip(out, r)).backward()
    tensors = {"E": E, "h": h, "lengths": torch.tensor(lengths), "a": out[0], "n": out[1], "kappa": out[2],
               "lambda": out[3], "r_a": r[0], "r_n": r[1], "r_kappa": r[2], "r_lambda": r[3]}
    tensors.update(K)
    for name, t in zip(names, [E, h] + list(K.values())):
        tensors["grad_" + name] = t.grad
    # The whole head on this batch: V = 7, extended 10 (7, 8, 9 source-only); row 0 holds 5 twice, row 1 9 twice.
    ids = torch.tensor([[5, 7, 5, 8, 3, 2], [9, 4, 9, 6, 0, 0]])
    p_gen = torch.softmax(fixed([2, 2, 7], 236, -2.0, 2.0, requires_grad=False), -1)
    with torch.no_grad():
        tensors.update({"copy_ids": ids, "p_gen": p_gen, "p": copy_mixture(p_gen, out[2], out[3], ids, 10)})
    w.case("attention", **tensors)

    # The mixture alone: V = 6, S = 5, extended 9. Row 0: word 4 twice, the source-only 6 and 7, word 2;
    # row 1 (3 real tokens): the source-only 8 twice, word 5, then <pad> (0) with kappa 0 there.
    ids = torch.tensor([[4, 6, 4, 7, 2], [8, 5, 8, 0, 0]])
    pad = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])[:, None, :]
    p_gen = torch.softmax(fixed([2, 2, 6], 240, -2.0, 2.0, requires_grad=False), -1).requires_grad_(True)
    kappa = torch.softmax(fixed([2, 2, 5], 241, -2.0, 2.0, requires_grad=False).masked_fill(pad, float("-inf")), -1)
    kappa = kappa.detach().requires_grad_(True)
    lam = torch.sigmoid(fixed([2, 2, 1], 242, -1.5, 1.5, requires_grad=False)).requires_grad_(True)
    p = copy_mixture(p_gen, kappa, lam, ids, 9)
    r = fixed([2, 2, 9], 243, requires_grad=False)
    gp, gk, gl = grads(p, r, p_gen, kappa, lam)
    w.case("mixture", p_gen=p_gen, kappa=kappa, **{"lambda": lam}, copy_ids=ids, p=p, r=r, grad_p_gen=gp,
           grad_kappa=gk, grad_lambda=gl)

    # One decoder step: h_t = GRUCell(y_{t-1}, h_{t-1}), then the attention gated by h_t (after the step).
    cell = torch.nn.GRUCell(4, 3)
    with torch.no_grad():
        for k, prm in enumerate(cell.parameters()):
            prm.copy_(fixed(list(prm.shape), 250 + k, -0.7, 0.7, requires_grad=False))
    y_prev, h_prev = fixed([2, 4], 255, -1.5, 1.5), fixed([2, 3], 256, -1.5, 1.5)
    with torch.no_grad():
        h1 = cell(y_prev, h_prev)
        a1, n1, k1, l1 = conv_attention(E, lengths, h1[:, None], K)
    w.case("step", E=E, lengths=torch.tensor(lengths), y_prev=y_prev, h_prev=h_prev, w_ih=cell.weight_ih,
           w_hh=cell.weight_hh, b_ih=cell.bias_ih, b_hh=cell.bias_hh, h=h1, a=a1, n=n1, kappa=k1, **{"lambda": l1})
    w.save()


def conv2d_case(w, name, n, c, h, wd, o, k, stride, padding, seed):
    """F.conv2d on fixed inputs (float64), with im2col's columns and col2im's sums in lab 23's layout:
    cols [C kH kW, N outH outW], row (c, u, v), column (n, i, j); F.unfold gives [N, C kH kW, outH outW]."""
    x, weight, b = fixed((n, c, h, wd), seed), fixed((o, c) + k, seed + 1), fixed((o,), seed + 2)
    y = F.conv2d(x, weight, b, stride=stride, padding=padding)
    r = fixed(tuple(y.shape), seed + 3, requires_grad=False)  # dL/dy
    gx, gw, gb = grads(y, r, x, weight, b)
    unfold = F.unfold(x.detach(), k, padding=padding, stride=stride)  # [N, K, L]
    K, L = unfold.shape[1], unfold.shape[2]
    cols = unfold.permute(1, 0, 2).reshape(K, n * L)
    dcols = fixed((K, n * L), seed + 4, requires_grad=False)
    folded = F.fold(dcols.reshape(K, n, L).permute(1, 0, 2), (h, wd), k, padding=padding, stride=stride)
    w.case(name, x=x, weight=weight, bias=b, kernel=torch.tensor(k), stride=torch.tensor(stride),
           padding=torch.tensor(padding), y=y, r=r, grad_x=gx, grad_weight=gw, grad_bias=gb, cols=cols,
           dcols=dcols, col2im=folded)


def pool2d_case(w, name, x, k, stride, padding, seed):
    """F.max_pool2d's gradient (the first maximum of each window, as PyTorch's CPU kernel) of sum(y * r)."""
    x = x.detach().requires_grad_(True)
    y = F.max_pool2d(x, k, stride=stride, padding=padding)
    r = fixed(tuple(y.shape), seed, requires_grad=False)
    (gx,) = grads(y, r, x)
    w.case(name, x=x, kernel=torch.tensor(k), stride=torch.tensor(stride), padding=torch.tensor(padding), y=y, r=r,
           grad_x=gx)


def lab23():
    w = LabWriter("lab23_conv2d")
    # N > 1 everywhere (dW and db sum over the batch); every kernel larger than its stride somewhere, so windows
    # overlap and col2im must add; stride 2 with padding 1; non-square kernels, strides and padding per dim.
    conv2d_case(w, "conv_3x3", 2, 3, 5, 6, 4, (3, 3), (1, 1), (0, 0), 2300)
    conv2d_case(w, "conv_stride2_pad1", 2, 2, 7, 6, 3, (3, 3), (2, 2), (1, 1), 2310)
    conv2d_case(w, "conv_nonsquare", 3, 2, 6, 5, 2, (2, 3), (1, 2), (1, 0), 2320)
    conv2d_case(w, "conv_odd", 2, 1, 5, 7, 3, (3, 2), (2, 3), (1, 1), 2330)

    pool2d_case(w, "pool_2x2", fixed((2, 3, 6, 6), 2340), (2, 2), (2, 2), (0, 0), 2341)
    pool2d_case(w, "pool_3x3_stride2_pad1", fixed((2, 2, 7, 6), 2342), (3, 3), (2, 2), (1, 1), 2343)
    pool2d_case(w, "pool_nonsquare", fixed((1, 2, 5, 7), 2344), (2, 3), (1, 2), (1, 1), 2345)
    pool2d_case(w, "pool_overlap", fixed((3, 1, 5, 5), 2346), (3, 3), (1, 1), (0, 0), 2347)
    # ties: values from {0, 1, 2}, overlapping windows (one pixel the first maximum of several), and a plateau
    g = torch.Generator().manual_seed(2348)
    ties = torch.randint(0, 3, (2, 2, 6, 7), generator=g).double()
    pool2d_case(w, "ties_overlap", ties, (3, 3), (1, 2), (1, 1), 2349)
    plateau = torch.tensor([[1.0, 1.0, 2.0, 2.0, 0.5], [1.0, 1.0, 2.0, 2.0, 0.5], [3.0, 0.0, 0.0, 0.0, 0.5],
                            [3.0, 3.0, 0.0, 0.0, 0.5]]).reshape(1, 1, 4, 5)
    pool2d_case(w, "ties_plateau", plateau, (2, 2), (2, 2), (0, 0), 2350)
    # near ties: those values each moved by a distinct multiple of 1e-6 (below 2e-4), so that no two are equal: a
    # comparison with a tolerance (|x - y| < 1e-3) takes a value just below the maximum when it comes first
    offsets = torch.randperm(ties.numel(), generator=torch.Generator().manual_seed(2355)).double() * 1e-6
    pool2d_case(w, "ties_near", ties + offsets.reshape(ties.shape), (3, 3), (1, 2), (1, 1), 2356)
    # every value negative, windows over the padding: padding read as 0 (not -inf) would be their maximum
    pool2d_case(w, "negative_padded", fixed((2, 2, 5, 6), 2351, -3.0, -0.5), (3, 3), (2, 2), (1, 1), 2352)
    pool2d_case(w, "negative_padded_nonsquare", fixed((1, 2, 4, 5), 2353, -3.0, -0.5), (2, 3), (1, 1), (1, 1), 2354)
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
    lab19()
    lab20()
    lab21()
    lab22()
    lab23()
