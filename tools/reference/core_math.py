"""PyTorch references for the math ops of core/: reductions, softmax, matmul, linear.

For each case: the inputs, a fixed grad_output, the output, and the gradient of
every input (grad_<input>) after output.backward(grad_output), all in float64.
tests/core/test_reference_math.cpp compares attn's values within 1e-12.
Run:  /usr/bin/python3 tools/reference/core_math.py
"""
import torch
import torch.nn.functional as F

from common import Writer, fixed

w = Writer("core_math")
seed = [100]


def next_seed():
    seed[0] += 1
    return seed[0]


def record(case, fn, **inputs):
    """Runs fn(**inputs), backpropagates a fixed grad_output, writes the case."""
    y = fn(**inputs)
    # (common.fixed cannot make a 0-d tensor: torch.rand(*()) has no size; reshape a [1] instead)
    g = fixed(y.shape or (1,), next_seed(), requires_grad=False).reshape(y.shape)
    y.backward(g)
    grads = {"grad_" + k: v.grad for k, v in inputs.items()}
    w.case(case, **inputs, grad_output=g, y=y, **grads)


def inputs(**shapes):
    return {k: fixed(s, next_seed(), low=-2.0, high=2.0) for k, s in shapes.items()}


# softmax and log_softmax over every dim of a [2, 3, 4] input.
for dim in (0, 1, 2, -1):
    name = "m" + str(-dim) if dim < 0 else str(dim)
    record("softmax_dim" + name, lambda x: torch.softmax(x, dim), **inputs(x=(2, 3, 4)))
    record("log_softmax_dim" + name, lambda x: torch.log_softmax(x, dim), **inputs(x=(2, 3, 4)))
record("softmax_1d", lambda x: torch.softmax(x, 0), **inputs(x=(5,)))

# logsumexp, max with dim, keepdim on and off.
for dim in (1, -1):
    for keepdim in (False, True):
        tag = ("dim" + ("m1" if dim < 0 else "1")) + ("_keepdim" if keepdim else "")
        record("logsumexp_" + tag, lambda x: torch.logsumexp(x, dim, keepdim), **inputs(x=(2, 3, 4)))
        record("max_" + tag, lambda x: torch.max(x, dim, keepdim).values, **inputs(x=(2, 3, 4)))
record("max_all", lambda x: torch.max(x), **inputs(x=(3, 4)))  # no ties in random inputs

# sum and mean over dims lists.
record("sum_dims02_keepdim", lambda x: torch.sum(x, (0, 2), keepdim=True), **inputs(x=(2, 3, 4)))
record("sum_dimm1", lambda x: torch.sum(x, -1), **inputs(x=(2, 3, 4)))
record("mean_dim1", lambda x: torch.mean(x, 1), **inputs(x=(2, 3, 4)))
record("mean_dims01_keepdim", lambda x: torch.mean(x, (0, 1), keepdim=True), **inputs(x=(2, 3, 4)))
record("mean_all", lambda x: torch.mean(x), **inputs(x=(2, 3)))

# matmul: 1-D cases, folded batch, broadcast batch dims.
matmul_shapes = {
    "dot": ((3,), (3,)),
    "mat_vec": ((2, 3), (3,)),
    "vec_mat": ((3,), (3, 4)),
    "mat_mat": ((2, 3), (3, 4)),
    "batch_mat": ((2, 3, 4), (4, 5)),
    "batch_vec": ((2, 3, 4), (4,)),
    "vec_batch": ((4,), (2, 4, 3)),
    "broadcast": ((2, 1, 3, 4), (3, 4, 2)),
    "heads": ((2, 2, 3, 4), (2, 2, 4, 5)),
}
for name, (sa, sb) in matmul_shapes.items():
    record("matmul_" + name, lambda a, b: torch.matmul(a, b), **inputs(a=sa, b=sb))

# linear: x [..., in], weight [out, in], bias [out].
record("linear_bias", lambda x, weight, bias: F.linear(x, weight, bias), **inputs(x=(2, 3, 4), weight=(5, 4), bias=(5,)))
record("linear_nobias", lambda x, weight: F.linear(x, weight), **inputs(x=(3, 4), weight=(2, 4)))
record("linear_1d", lambda x, weight, bias: F.linear(x, weight, bias), **inputs(x=(4,), weight=(3, 4), bias=(3,)))

w.save()
