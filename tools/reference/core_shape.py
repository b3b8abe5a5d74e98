"""PyTorch reference values for the shape and index ops (core/ops/shape.cpp,
join.cpp, index.cpp): outputs, and input gradients for a fixed grad_output "gy".
Read by tests/core/test_reference_shape.cpp.  Run: /usr/bin/python3 tools/reference/core_shape.py
"""
import torch

from common import Writer, fixed

w = Writer("core_shape")


def record(name, fn, inputs, **extra):
    """Runs fn(*inputs.values()), backpropagates a fixed gy, writes every tensor."""
    y = fn(*inputs.values())
    gy = fixed(y.shape, seed=1000 + len(w.cases), requires_grad=False)
    grads = torch.autograd.grad(y, list(inputs.values()), gy)
    tensors = dict(inputs)
    tensors.update(extra)
    tensors.update(y=y, gy=gy)
    tensors.update({"d" + k: g for k, g in zip(inputs, grads)})
    w.case(name, **tensors)


record("permute", lambda x: x.permute(2, 0, -2), {"x": fixed((2, 3, 4), 1)})
record("reshape", lambda x: x.reshape(4, -1), {"x": fixed((2, 3, 4), 2)})
record("concat", lambda a, b, c: torch.cat([a, b, c], dim=1),
       {"a": fixed((2, 1, 3), 3), "b": fixed((2, 3, 3), 4), "c": fixed((2, 2, 3), 5)})
record("stack", lambda a, b, c: torch.stack([a, b, c], dim=1),
       {"a": fixed((2, 3), 6), "b": fixed((2, 3), 7), "c": fixed((2, 3), 8)})
record("narrow", lambda x: x.narrow(1, 1, 3), {"x": fixed((3, 5, 2), 9)})
record("select", lambda x: x.select(1, -2), {"x": fixed((2, 4, 3), 10)})

index = torch.tensor([3, 0, 3, 1])
record("index_select", lambda x: x.index_select(0, index), {"x": fixed((4, 3), 11)}, index=index)

ids = torch.tensor([[4, 1, 4], [0, 4, 2]])
record("embedding", lambda weight: torch.nn.functional.embedding(ids, weight), {"weight": fixed((5, 3), 12)}, ids=ids)

mask = torch.tensor([[[False, False, True, True]], [[False, True, False, True]]])  # [2, 1, 4]
record("masked_fill", lambda x: x.masked_fill(mask, -1e4), {"x": fixed((2, 3, 4), 13)}, mask=mask)

cond = torch.tensor([[[True, False, True]], [[False, False, True]]])  # [2, 1, 3]
record("where", lambda a, b: torch.where(cond, a, b), {"a": fixed((4, 1), 14), "b": fixed((3,), 15)}, cond=cond)

record("expand", lambda x: x.expand(2, 4, 3), {"x": fixed((2, 1, 3), 16)})

w.save()
