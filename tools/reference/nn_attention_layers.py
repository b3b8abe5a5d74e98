"""PyTorch reference values for the attention layers of nn/attention/ that
PyTorch has no module for: each layer is written here from its equations in
plain torch (float64), with fixed weights recorded under attn's parameter names
(score.W1, query_proj.weight, conv1.bias, ...), so tests/attention/
test_reference_values.cpp loads them into the C++ layer and compares.

Each case records the inputs, the weights, the outputs, a fixed grad_<output>
for every output, and the gradient of
    loss = sum over outputs of sum(output * grad_<output>)
with respect to every input (grad_query, grad_keys, grad_values, grad_x, ...) and
every weight (grad_<name>). Masks are recorded as lengths (padding from there on).

Cases:
  additive         Bahdanau: v^T tanh(W1 s + W2 h), query [2, 2, 3], keys [2, 4, 4], values [2, 4, 2], lengths [4, 2]
  luong_dot        s . h, query [2, 3, 4], keys [2, 4, 4], values [2, 4, 3], lengths [3, 4]
  luong_general    s^T W h, query [2, 2, 3], keys [2, 5, 4], values [2, 5, 2], lengths [5, 3]
  luong_concat     v^T tanh(W [s; h]), query [2, 2, 3], keys [2, 4, 4], values [2, 4, 2], lengths [2, 4]
  self_attention   SelfAttention(4, 3, 5, bias), x [2, 4, 4], lengths [4, 3], causal mask
  qkv_attention    QKVAttention(3, 4, 2), query [2, 3, 3], inputs [2, 5, 4], lengths [5, 2]
  local_m          local-m (general score), D 1, query [2, 3, 3], keys [2, 5, 4], lengths [5, 4]
  local_p          local-p (concat score), D 2, Gaussian, query [2, 3, 3], keys [2, 6, 4], lengths [6, 4]
  convolutional    ConvolutionalAttention(3, 4, 5, 5, 3, 3, copy), E [2, 6, 3], h [2, 2, 4], lengths [6, 4]
  monotonic        MonotonicAttention(3, 4, 5), query [2, 3, 3], keys [2, 5, 4], values [2, 5, 2], lengths [5, 3]
"""
import math

import torch
import torch.nn.functional as F

from common import Writer, fixed


def padding(lengths, tk):
    return torch.arange(tk)[None, :] >= torch.tensor(lengths)[:, None]  # [B, Tk], True = padded


def masked_softmax(scores, blocked):
    return torch.softmax(scores.masked_fill(blocked, float("-inf")), dim=-1)


def record(w, name, inputs, params, outputs, lengths=None, seed=100):
    """Backpropagates sum(out * grad_out) and writes one case."""
    grads_out = {"grad_" + k: fixed(v.shape, seed + i, requires_grad=False) for i, (k, v) in enumerate(outputs.items())}
    loss = sum((v * grads_out["grad_" + k]).sum() for k, v in outputs.items())
    loss.backward()
    for k, v in outputs.items():
        assert torch.isfinite(v).all(), (name, k)
    tensors = dict(inputs)
    tensors.update(params)
    tensors.update(outputs)
    tensors.update(grads_out)
    tensors.update({"grad_" + k: v.grad for k, v in inputs.items() if v.requires_grad})
    tensors.update({"grad_" + k: v.grad for k, v in params.items()})
    if lengths is not None:
        tensors["lengths"] = torch.tensor(lengths, dtype=torch.float64)
    w.case(name, **tensors)


def score_attention(w, name, score_fn, params, dq, dk, dv, tq, tk, lengths, seed):
    q, k, v = fixed((2, tq, dq), seed), fixed((2, tk, dk), seed + 1), fixed((2, tk, dv), seed + 2)
    scores = score_fn(q, k)  # [B, Tq, Tk]
    weights = masked_softmax(scores, padding(lengths, tk)[:, None, :])
    context = weights @ v
    record(w, name, dict(query=q, keys=k, values=v), params, dict(context=context, weights=weights), lengths, seed + 50)


def additive_cases(w):
    p = {"score.W1": fixed((5, 3), 11), "score.W2": fixed((5, 4), 12), "score.v": fixed((5,), 13)}
    score_attention(w, "additive", lambda q, k: torch.tanh((q @ p["score.W1"].T)[:, :, None, :] +
                                                           (k @ p["score.W2"].T)[:, None, :, :]) @ p["score.v"],
                    p, 3, 4, 2, 2, 4, [4, 2], 20)

    score_attention(w, "luong_dot", lambda q, k: q @ k.transpose(1, 2), {}, 4, 4, 3, 3, 4, [3, 4], 30)

    p = {"score.W": fixed((3, 4), 41)}
    score_attention(w, "luong_general", lambda q, k: q @ (k @ p["score.W"].T).transpose(1, 2), p, 3, 4, 2, 2, 5,
                    [5, 3], 40)

    p = {"score.W": fixed((5, 7), 51), "score.v": fixed((5,), 52)}

    def concat(q, k):
        tq, tk = q.shape[1], k.shape[1]
        pairs = torch.cat([q[:, :, None, :].expand(-1, -1, tk, -1), k[:, None, :, :].expand(-1, tq, -1, -1)], -1)
        return torch.tanh(pairs @ p["score.W"].T) @ p["score.v"]  # v^T tanh(W [s; h]): [B, Tq, Tk]

    score_attention(w, "luong_concat", concat, p, 3, 4, 2, 2, 4, [2, 4], 50)


def projection_cases(w):
    # SelfAttention(4, 3, 5, bias=True): Q, K, V = x W^T + b; softmax(Q K^T / sqrt(3)) V,
    # with key padding and a causal mask.
    x = fixed((2, 4, 4), 60)
    p = {"query_proj.weight": fixed((3, 4), 61), "query_proj.bias": fixed((3,), 62),
         "key_proj.weight": fixed((3, 4), 63), "key_proj.bias": fixed((3,), 64),
         "value_proj.weight": fixed((5, 4), 65), "value_proj.bias": fixed((5,), 66)}
    Q = x @ p["query_proj.weight"].T + p["query_proj.bias"]
    K = x @ p["key_proj.weight"].T + p["key_proj.bias"]
    V = x @ p["value_proj.weight"].T + p["value_proj.bias"]
    causal = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)
    blocked = padding([4, 3], 4)[:, None, :] | causal[None, :, :]
    weights = masked_softmax(Q @ K.transpose(1, 2) / math.sqrt(3), blocked)
    record(w, "self_attention", dict(x=x), p, dict(context=weights @ V, weights=weights), [4, 3], 67)

    # QKVAttention(3, 4, 2): the queries are given; keys and values are projections of the inputs.
    q, x = fixed((2, 3, 3), 70), fixed((2, 5, 4), 71)
    p = {"key_proj.weight": fixed((3, 4), 72), "value_proj.weight": fixed((2, 4), 73)}
    K, V = x @ p["key_proj.weight"].T, x @ p["value_proj.weight"].T
    weights = masked_softmax(q @ K.transpose(1, 2) / math.sqrt(3), padding([5, 2], 5)[:, None, :])
    record(w, "qkv_attention", dict(query=q, inputs=x), p, dict(context=weights @ V, weights=weights), [5, 2], 74)


def local(w, name, score_fn, params, D, gaussian, predictive, tq, tk, lengths, seed):
    """Luong's local attention on whole rows: the window |j - p_t| <= D inside [0, S) is
    chosen without gradient; softmax over it, times the Gaussian (local-p)."""
    q, k, v = fixed((2, tq, 3), seed), fixed((2, tk, 4), seed + 1), fixed((2, tk, 2), seed + 2)
    S = torch.tensor(lengths, dtype=torch.float64)
    if predictive:
        p_t = S[:, None] * torch.sigmoid(torch.tanh(q @ params["W_p"].T) @ params["v_p"])  # [B, Tq]
    else:
        p_t = torch.arange(tq, dtype=torch.float64)[None, :].expand(2, -1)  # p_t = t
    j = torch.arange(tk, dtype=torch.float64)[None, None, :]
    pd = p_t.detach()[:, :, None]
    blocked = ((j - pd).abs() > D) | (j >= S[:, None, None])
    weights = masked_softmax(score_fn(q, k), blocked)
    if gaussian:
        sigma = D / 2
        weights = weights * torch.exp(-(j - p_t[:, :, None]) ** 2 / (2 * sigma * sigma))
    record(w, name, dict(query=q, keys=k, values=v), params, dict(context=weights @ v, weights=weights), lengths,
           seed + 50)


def local_cases(w):
    p = {"score.W": fixed((3, 4), 81)}
    local(w, "local_m", lambda q, k: q @ (k @ p["score.W"].T).transpose(1, 2), p, 1, False, False, 3, 5, [5, 4], 80)

    p = {"score.W": fixed((5, 7), 91), "score.v": fixed((5,), 92), "W_p": fixed((4, 3), 93), "v_p": fixed((4,), 94)}

    def concat(q, k):
        Ws, Wh = p["score.W"][:, :3], p["score.W"][:, 3:]
        return torch.tanh((q @ Ws.T)[:, :, None, :] + (k @ Wh.T)[:, None, :, :]) @ p["score.v"]

    local(w, "local_p", concat, p, 2, True, True, 3, 6, [6, 4], 90)


def convolutional_case(w):
    B, S, D, H, k1, T = 2, 6, 3, 4, 5, 2
    E, h = fixed((B, S, D), 100), fixed((B, T, H), 101)
    p = {"conv1.weight": fixed((k1, D, 5), 102), "conv1.bias": fixed((k1,), 103),
         "conv2.weight": fixed((H, k1, 3), 104), "conv2.bias": fixed((H,), 105),
         "attention.weight": fixed((1, H, 3), 106), "attention.bias": fixed((1,), 107),
         "copy_conv.weight": fixed((1, H, 3), 108), "copy_conv.bias": fixed((1,), 109),
         "copy_gate_conv.weight": fixed((1, H, 3), 110), "copy_gate_conv.bias": fixed((1,), 111)}
    lengths = [6, 4]
    pad = padding(lengths, S)  # [B, S]

    def conv(x, name):  # "same" padding, odd windows: (w - 1) / 2 zeros on each side
        return F.conv1d(x, p[name + ".weight"], p[name + ".bias"], padding=p[name + ".weight"].shape[2] // 2)

    zero = lambda t: t.masked_fill(pad[:, None, :], 0.0)  # [B, C, S]
    l1 = zero(torch.relu(conv(zero(E.transpose(1, 2)), "conv1")))
    feats = zero(conv(l1, "conv2")).transpose(1, 2)  # [B, S, H]
    l2 = feats[:, None, :, :] * h[:, :, None, :]  # [B, T, S, H]
    lfeat = l2 / torch.sqrt((l2 * l2).sum(-1, keepdim=True) + 1e-12)

    def score(name):  # [B, T, S]
        rows = lfeat.reshape(B * T, S, H).transpose(1, 2)
        return conv(rows, name).reshape(B, T, S)

    blocked = pad[:, None, :]
    weights = masked_softmax(score("attention"), blocked)
    copy_weights = masked_softmax(score("copy_conv"), blocked)
    gate = torch.sigmoid(score("copy_gate_conv")).masked_fill(blocked, 0.0)
    copy_gate = gate.max(dim=-1, keepdim=True).values
    record(w, "convolutional", dict(embedded=E, query=h), p,
           dict(context=weights @ E, weights=weights, copy_weights=copy_weights, copy_gate=copy_gate), lengths, 112)


def monotonic_case(w):
    q, k, v = fixed((2, 3, 3), 120), fixed((2, 5, 4), 121), fixed((2, 5, 2), 122)
    p = {"W1": fixed((5, 3), 123), "W2": fixed((5, 4), 124), "b": fixed((5,), 125), "v": fixed((5,), 126),
         "g": fixed((1,), 127, 0.3, 0.6), "r": fixed((1,), 128, -1.0, -0.5)}
    lengths = [5, 3]
    v_hat = p["v"] * p["g"] / p["v"].norm()
    e = torch.tanh((q @ p["W1"].T + p["b"])[:, :, None, :] + (k @ p["W2"].T)[:, None, :, :]) @ v_hat + p["r"]
    prob = torch.sigmoid(e).masked_fill(padding(lengths, 5)[:, None, :], 0.0)  # never stops on padding
    alpha = torch.zeros(2, 5)
    alpha[:, 0] = 1.0  # before the first step the reading starts at h_0
    steps = []
    for i in range(3):
        qs, new = [], []
        for j in range(5):
            # q_ij = (1 - p_{i,j-1}) q_{i,j-1} + alpha_{i-1,j}; alpha_ij = p_ij q_ij
            qj = alpha[:, 0] if j == 0 else (1 - prob[:, i, j - 1]) * qs[-1] + alpha[:, j]
            qs.append(qj)
            new.append(prob[:, i, j] * qj)
        alpha = torch.stack(new, 1)
        steps.append(alpha)
    weights = torch.stack(steps, 1)  # [B, Tq, Tk]
    record(w, "monotonic", dict(query=q, keys=k, values=v), p, dict(context=weights @ v, weights=weights), lengths,
           129)


def main():
    w = Writer("nn_attention_layers")
    additive_cases(w)
    projection_cases(w)
    local_cases(w)
    convolutional_case(w)
    monotonic_case(w)
    w.save()


if __name__ == "__main__":
    main()
