"""PyTorch reference values for attn::conv1d (tests/attention/test_convolutional.cpp).

Writes tests/reference/core_conv.json: inputs, outputs and gradients of
torch.nn.functional.conv1d for a sum-of-squares-weighted loss, in float64.
Run:  /usr/bin/python3 tools/reference/core_conv.py
"""
import torch
import torch.nn.functional as F

from common import Writer, fixed

w = Writer("core_conv")


def case(name, n, c_in, length, c_out, k, padding, bias=True, seed=0):
    x = fixed((n, c_in, length), seed)
    weight = fixed((c_out, c_in, k), seed + 1)
    b = fixed((c_out,), seed + 2) if bias else None
    y = F.conv1d(x, weight, b, padding=padding)
    g = fixed(tuple(y.shape), seed + 3, requires_grad=False)  # upstream gradient dL/dy
    (y * g).sum().backward()
    tensors = dict(x=x, weight=weight, y=y, grad_y=g, grad_x=x.grad, grad_weight=weight.grad)
    if bias:
        tensors.update(bias=b, grad_bias=b.grad)
    w.case(name, **tensors)


case("valid", 2, 3, 7, 4, 3, 0, seed=10)
case("padding_1", 2, 3, 5, 2, 3, 1, seed=20)
case("same_odd", 1, 2, 6, 3, 5, "same", seed=30)
case("same_even", 2, 2, 5, 3, 4, "same", seed=40)   # PyTorch puts the extra zero at the end
case("no_bias", 1, 4, 4, 2, 1, 0, bias=False, seed=50)
w.save()
