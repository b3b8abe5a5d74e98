"""PyTorch reference values for nn::flash_attention (nn/attention/flash_attention.hpp).

Each case computes attention in PyTorch, in float64, on [B, H, T, D] inputs, as
torch.nn.functional.scaled_dot_product_attention defines it:
    softmax(q k^T / sqrt(D) with blocked scores at -inf) v
(Debian 12's PyTorch, 1.13, predates that function, so its definition is written out here
in PyTorch's ops), and records the inputs, the masks in attn's convention (1.0 = true = may not be
attended; PyTorch's boolean attn_mask is the opposite, True = may attend), a grad_output,
the output, and the gradients of sum(output * grad_output) with respect to query, key and
value. is_causal blocks key j for query i when j > i, as PyTorch's is_causal. No case has a
query that sees no key: PyTorch returns NaN there.

Cases:
  padded      B 2, H 3, Tq 7, Tk 9, D 4, Dv 5; key_padding_mask from lengths [9, 4]
  causal      B 2, H 2, T 10, D 3; is_causal=True (recorded as is_causal = 1)
  causal_cross  B 1, H 2, Tq 6, Tk 10, D 4; is_causal=True: query i sees keys 0..i (top-left)
  cross_mask  B 1, H 2, Tq 6, Tk 11, D 5; an attn_mask [Tq, Tk] blocking about a third of
              the pairs (key 0 never) and key_padding_mask from length [8]
"""
import math

import torch

from common import Writer, fixed


def padding(lengths, tk):
    return torch.arange(tk)[None, :] >= torch.tensor(lengths)[:, None]  # [B, Tk], True = padded


def run(w, name, shape_q, shape_k, dv, seed, kpm=None, attn_mask=None, is_causal=False):
    q, k = fixed(shape_q, seed), fixed(shape_k, seed + 1)
    v = fixed(shape_k[:-1] + (dv,), seed + 2)
    blocked = None  # [B, 1 or Tq, ...] True = may not attend
    if kpm is not None:
        blocked = kpm[:, None, None, :]
    if attn_mask is not None:
        blocked = attn_mask[None, None] if blocked is None else (blocked | attn_mask[None, None])
    if is_causal:
        tq, tk = q.shape[-2], k.shape[-2]
        causal = torch.ones(tq, tk, dtype=torch.bool).triu(diagonal=1)[None, None]
        blocked = causal if blocked is None else (blocked | causal)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # [B, H, Tq, Tk]
    if blocked is not None:
        scores = scores.masked_fill(blocked, float("-inf"))
    out = torch.softmax(scores, dim=-1) @ v  # [B, H, Tq, Dv]
    grad_output = fixed(out.shape, seed + 3, requires_grad=False)
    (out * grad_output).sum().backward()
    assert torch.isfinite(out).all()
    extra = {}
    if kpm is not None:
        extra["key_padding_mask"] = kpm
    if attn_mask is not None:
        extra["attn_mask"] = attn_mask
    if is_causal:
        extra["is_causal"] = torch.ones(1)
    w.case(name, query=q, key=k, value=v, output=out, grad_output=grad_output, grad_query=q.grad,
           grad_key=k.grad, grad_value=v.grad, **extra)


def main():
    w = Writer("flash_attention")
    run(w, "padded", (2, 3, 7, 4), (2, 3, 9, 4), 5, 1, kpm=padding([9, 4], 9))
    run(w, "causal", (2, 2, 10, 3), (2, 2, 10, 3), 3, 11, is_causal=True)
    run(w, "causal_cross", (1, 2, 6, 4), (1, 2, 10, 4), 4, 31, is_causal=True)
    g = torch.Generator().manual_seed(25)
    attn_mask = torch.rand(6, 11, generator=g) < 0.35
    attn_mask[:, 0] = False  # key 0 is never masked: every query sees a key
    run(w, "cross_mask", (1, 2, 6, 5), (1, 2, 11, 5), 5, 21, kpm=padding([8], 11), attn_mask=attn_mask)
    w.save()


if __name__ == "__main__":
    main()
