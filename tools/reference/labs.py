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
