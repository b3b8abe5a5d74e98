"""PyTorch reference values for nn::MultiheadAttention and the sinusoidal
positional encoding (nn/attention/).

MultiheadAttention cases use torch.nn.MultiheadAttention(batch_first=True) with
fixed weights recorded under PyTorch's names (in_proj_weight, in_proj_bias,
out_proj.weight, out_proj.bias). Each records the inputs, the masks (1.0 = true
= may not be attended), the output and weights, a grad_output for each, and the
gradient of
    loss = sum(output * grad_output) + sum(weights * grad_weights)
with respect to every input (grad_query, grad_key, grad_value, or grad_x for
self-attention, where one tensor is query, key and value) and every weight
(grad_<name>). No case has a fully masked row: PyTorch returns NaN there.

Cases:
  mha_self_causal    self-attention, B 2, T 4, E 6, 2 heads, key_padding_mask from
                     lengths [4, 3] and a causal attn_mask [T, T]; averaged weights
  mha_cross_heads    query [2, 3, 6], key/value [2, 5, 6], 3 heads, key_padding_mask
                     from lengths [5, 2], attn_mask [B * H, Tq, Tk]; per-head weights
  mha_nobias         bias=False, query [2, 3, 4], key/value [2, 2, 4], 2 heads, no masks
  sinusoidal_d6      PE for 50 positions, d_model 6; sinusoidal_d7: 20 positions, d_model 7
"""
import math

import torch

from common import Writer, fixed


def set_weights(module, seed):
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            p.copy_(fixed(p.shape, seed + i, -0.5, 0.5, requires_grad=False))
    return {name: p.detach().clone() for name, p in module.named_parameters()}


def grads(module):
    return {"grad_" + name: p.grad for name, p in module.named_parameters()}


def padding(lengths, tk):
    return torch.arange(tk)[None, :] >= torch.tensor(lengths)[:, None]  # [B, Tk], True = padded


def run(mha, query, key, value, kpm, attn_mask, average, seed):
    out, weights = mha(query, key, value, key_padding_mask=kpm, need_weights=True, attn_mask=attn_mask,
                       average_attn_weights=average)
    grad_output = fixed(out.shape, seed, requires_grad=False)
    grad_weights = fixed(weights.shape, seed + 1, requires_grad=False)
    ((out * grad_output).sum() + (weights * grad_weights).sum()).backward()
    assert torch.isfinite(out).all() and torch.isfinite(weights).all()
    return dict(output=out, weights=weights, grad_output=grad_output, grad_weights=grad_weights)


def mha_cases(w):
    # Self-attention with key padding and a causal mask.
    mha = torch.nn.MultiheadAttention(6, 2, batch_first=True).double()
    weights = set_weights(mha, 10)
    x = fixed((2, 4, 6), 1)
    kpm = padding([4, 3], 4)
    causal = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)
    r = run(mha, x, x, x, kpm, causal, True, 2)
    w.case("mha_self_causal", x=x, key_padding_mask=kpm, attn_mask=causal, grad_x=x.grad, **r, **weights,
           **grads(mha))

    # Cross-attention, per-head weights, a different mask per sequence and head.
    mha = torch.nn.MultiheadAttention(6, 3, batch_first=True).double()
    weights = set_weights(mha, 20)
    q, k, v = fixed((2, 3, 6), 3), fixed((2, 5, 6), 4), fixed((2, 5, 6), 5)
    kpm = padding([5, 2], 5)
    g = torch.Generator().manual_seed(6)
    attn_mask = torch.rand(6, 3, 5, generator=g) < 0.4  # [B * H, Tq, Tk]
    attn_mask[:, :, 0] = False  # key 0 is never masked: no row is fully masked
    r = run(mha, q, k, v, kpm, attn_mask, False, 7)
    w.case("mha_cross_heads", query=q, key=k, value=v, key_padding_mask=kpm, attn_mask=attn_mask,
           grad_query=q.grad, grad_key=k.grad, grad_value=v.grad, **r, **weights, **grads(mha))

    # No biases, no masks.
    mha = torch.nn.MultiheadAttention(4, 2, bias=False, batch_first=True).double()
    weights = set_weights(mha, 30)
    q, k, v = fixed((2, 3, 4), 8), fixed((2, 2, 4), 9), fixed((2, 2, 4), 10)
    r = run(mha, q, k, v, None, None, True, 11)
    w.case("mha_nobias", query=q, key=k, value=v, grad_query=q.grad, grad_key=k.grad, grad_value=v.grad,
           **r, **weights, **grads(mha))


def sinusoidal(max_len, d):
    """PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(same angle)."""
    pe = torch.zeros(max_len, d)
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    for i in range(0, d, 2):
        angle = pos[:, 0] / math.pow(10000.0, i / d)
        pe[:, i] = torch.sin(angle)
        if i + 1 < d:
            pe[:, i + 1] = torch.cos(angle)
    return pe


def main():
    w = Writer("nn_attention")
    mha_cases(w)
    w.case("sinusoidal_d6", pe=sinusoidal(50, 6))
    w.case("sinusoidal_d7", pe=sinusoidal(20, 7))
    w.save()


if __name__ == "__main__":
    main()
