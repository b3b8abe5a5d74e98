"""PyTorch reference values for nn::rotary_embedding (nn/attention/rotary.hpp) and ALiBi
(nn/attention/alibi.hpp, and scaled_dot_product_attention with an additive bias).

Rotary embeddings as GPT-NeoX's and Llama's code write them ("rotate_half": feature k pairs with
feature k + d/2), written out here in PyTorch's ops, positions start .. start + T - 1:
    theta_k = base^(-2k/d),  angle[t, k] = (start + t) theta_k,  cos and sin repeated over both halves
    out = x * cos + rotate_half(x) * sin,   rotate_half(x) = cat(-x[..., d/2:], x[..., :d/2])
ALiBi's slopes by the paper's own get_slopes (github.com/ofirpress/attention_with_linear_biases),
and attention softmax(q k^T / sqrt(D) - m_h |i - j|, causal mask) v.

Cases:
  rope          x [2, 3, 5, 8], start 3, base 10000: output, gradient of sum(out * grad_output)
  rope_base     x [1, 2, 4, 6], start 0, base 500
  slopes_8, slopes_6, slopes_12   the slopes for 8, 6 and 12 heads
  alibi_causal  q, k, v [2, 4, 6, 5], causal, slopes of 4 heads: output and gradients
"""
import math

import torch

from common import Writer, fixed


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def rope(x, start, base):
    t, d = x.shape[-2], x.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # [d/2]: base^(-2k/d)
    angle = (start + torch.arange(t, dtype=torch.float64))[:, None] * theta[None, :]  # [T, d/2]
    cos = torch.cat([angle.cos(), angle.cos()], dim=-1)
    sin = torch.cat([angle.sin(), angle.sin()], dim=-1)
    return x * cos + rotate_half(x) * sin


def get_slopes(n):
    """The paper's code."""
    def get_slopes_power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        ratio = start
        return [start * ratio ** i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (get_slopes_power_of_2(closest_power_of_2)
            + get_slopes(2 * closest_power_of_2)[0::2][:n - closest_power_of_2])


def rope_case(w, name, shape, start, base, seed):
    x = fixed(shape, seed)
    out = rope(x, start, base)
    grad_output = fixed(out.shape, seed + 1, requires_grad=False)
    (out * grad_output).sum().backward()
    w.case(name, x=x, output=out, grad_output=grad_output, grad_x=x.grad,
           start=torch.tensor([float(start)]), base=torch.tensor([float(base)]))


def alibi_case(w, name, b, h, t, d, seed):
    q, k, v = fixed((b, h, t, d), seed), fixed((b, h, t, d), seed + 1), fixed((b, h, t, d), seed + 2)
    m = torch.tensor(get_slopes(h))  # [H]
    pos = torch.arange(t, dtype=torch.float64)
    bias = -m[:, None, None] * (pos[:, None] - pos[None, :]).abs()[None]  # [H, T, T]
    scores = q @ k.transpose(-2, -1) / math.sqrt(d) + bias
    causal = torch.ones(t, t, dtype=torch.bool).triu(diagonal=1)
    scores = scores.masked_fill(causal, float("-inf"))
    out = torch.softmax(scores, dim=-1) @ v
    grad_output = fixed(out.shape, seed + 3, requires_grad=False)
    (out * grad_output).sum().backward()
    w.case(name, query=q, key=k, value=v, bias=bias, output=out, grad_output=grad_output, grad_query=q.grad,
           grad_key=k.grad, grad_value=v.grad)


def main():
    w = Writer("rotary_alibi")
    rope_case(w, "rope", (2, 3, 5, 8), 3, 10000.0, 1)
    rope_case(w, "rope_base", (1, 2, 4, 6), 0, 500.0, 5)
    for n in (8, 6, 12):
        w.case("slopes_%d" % n, slopes=torch.tensor(get_slopes(n)))
    alibi_case(w, "alibi_causal", 2, 4, 6, 5, 11)
    w.save()


if __name__ == "__main__":
    main()
