"""PyTorch reference values for attn::conv2d, max_pool2d, avg_pool2d and nn::BatchNorm2d
(tests/core/test_conv2d.cpp, tests/core/test_pool2d.cpp, tests/nn/test_conv2d_layers.cpp).

Writes into tests/reference/:
  core_conv2d.json   inputs, outputs and gradients of F.conv2d, F.max_pool2d and F.avg_pool2d for
                     the loss sum(y * grad_y), in float64; torch.nn.BatchNorm2d over two training
                     steps (outputs, gradients, running statistics) and then in eval mode; and a small
                     conv/batch-norm/pool network's output in eval mode for a fixed input
  torch_conv2d_net.npz   that network's state_dict (np.savez), num_batches_tracked an int64 as PyTorch keeps it

Run:  /usr/bin/python3 tools/reference/core_conv2d.py
"""
import os

import numpy as np
import torch
import torch.nn.functional as F

from common import OUT_DIR, Writer, fixed, set_named_weights

w = Writer("core_conv2d")


def conv(name, n, c, h, wd, o, k, stride, padding, bias=True, seed=0):
    x = fixed((n, c, h, wd), seed)
    weight = fixed((o, c) + tuple(k), seed + 1)
    b = fixed((o,), seed + 2) if bias else None
    y = F.conv2d(x, weight, b, stride=stride, padding=padding)
    g = fixed(tuple(y.shape), seed + 3, requires_grad=False)  # upstream gradient dL/dy
    (y * g).sum().backward()
    tensors = dict(x=x, weight=weight, y=y, grad_y=g, grad_x=x.grad, grad_weight=weight.grad,
                   stride=torch.tensor(stride, dtype=torch.float64), padding=torch.tensor(padding, dtype=torch.float64))
    if bias:
        tensors.update(bias=b, grad_bias=b.grad)
    w.case(name, **tensors)


conv("conv_3x3", 2, 3, 5, 6, 4, (3, 3), (1, 1), (0, 0), seed=10)
conv("conv_stride2_pad1", 2, 2, 7, 6, 3, (3, 3), (2, 2), (1, 1), seed=20)
conv("conv_nonsquare", 1, 2, 6, 5, 2, (2, 3), (1, 2), (1, 0), seed=30)
conv("conv_odd", 3, 2, 5, 7, 3, (3, 2), (2, 3), (1, 1), seed=40)
conv("conv_no_bias", 3, 1, 4, 4, 2, (2, 2), (1, 1), (1, 1), bias=False, seed=50)
conv("conv_1x1", 2, 4, 3, 3, 5, (1, 1), (1, 1), (0, 0), seed=60)


def pool(name, kind, n, c, h, wd, k, stride, padding, seed=0):
    x = fixed((n, c, h, wd), seed)
    fn = F.max_pool2d if kind == "max" else F.avg_pool2d  # avg: count_include_pad=True, the default
    y = fn(x, k, stride=stride, padding=padding)
    g = fixed(tuple(y.shape), seed + 1, requires_grad=False)
    (y * g).sum().backward()
    w.case(name, x=x, y=y, grad_y=g, grad_x=x.grad, kernel=torch.tensor(k, dtype=torch.float64),
           stride=torch.tensor(stride, dtype=torch.float64), padding=torch.tensor(padding, dtype=torch.float64))


for kind in ("max", "avg"):
    pool(kind + "_2x2", kind, 2, 3, 6, 6, (2, 2), (2, 2), (0, 0), seed=100)
    pool(kind + "_3x3_stride2_pad1", kind, 2, 2, 7, 6, (3, 3), (2, 2), (1, 1), seed=110)
    pool(kind + "_nonsquare", kind, 1, 2, 5, 7, (2, 3), (1, 2), (1, 1), seed=120)
    pool(kind + "_overlap_odd", kind, 3, 1, 5, 5, (3, 3), (1, 1), (0, 0), seed=130)


def batch_norm():
    torch.manual_seed(0)
    bn = torch.nn.BatchNorm2d(3)
    with torch.no_grad():
        bn.weight.copy_(fixed((3,), 200, 0.5, 1.5, requires_grad=False))
        bn.bias.copy_(fixed((3,), 201, requires_grad=False))
    bn.train()
    x1 = fixed((2, 3, 4, 5), 202, -2.0, 3.0)
    y1 = bn(x1)
    g1 = fixed(tuple(y1.shape), 203, requires_grad=False)
    (y1 * g1).sum().backward()
    rm1, rv1 = bn.running_mean.clone(), bn.running_var.clone()
    x2 = fixed((3, 3, 2, 3), 204, -1.0, 2.0, requires_grad=False)
    y2 = bn(x2)
    bn.eval()
    x3 = fixed((2, 3, 3, 3), 205, requires_grad=False)
    y3 = bn(x3)
    w.case("batch_norm", weight=bn.weight, bias=bn.bias, x1=x1, y1=y1, grad_y1=g1, grad_x1=x1.grad,
           grad_weight=bn.weight.grad, grad_bias=bn.bias.grad, running_mean1=rm1, running_var1=rv1,
           x2=x2, y2=y2, running_mean2=bn.running_mean, running_var2=bn.running_var,
           num_batches_tracked=bn.num_batches_tracked, x3=x3, y3=y3)


class Net(torch.nn.Module):
    """conv -> batch norm -> relu -> max pool -> conv -> avg pool, as tests/nn/test_conv2d_layers.cpp builds it."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(4)
        self.pool1 = torch.nn.MaxPool2d(2)
        self.conv2 = torch.nn.Conv2d(4, 2, (2, 3), stride=(1, 2), bias=False)
        self.pool2 = torch.nn.AvgPool2d(2, stride=1, padding=1)

    def forward(self, x):
        return self.pool2(self.conv2(self.pool1(torch.relu(self.bn1(self.conv1(x))))))


def network():
    torch.manual_seed(0)
    net = Net()
    set_named_weights(list(net.named_parameters()), 300)
    net.train()
    with torch.no_grad():
        for step in range(3):  # running statistics that are not the initial ones
            net(fixed((2, 3, 8, 9), 310 + step, requires_grad=False))
    net.eval()
    x = fixed((2, 3, 8, 9), 320, requires_grad=False)
    with torch.no_grad():
        y = net(x)
    state = {k: v.detach().numpy() for k, v in net.state_dict().items()}
    assert state["bn1.num_batches_tracked"].dtype == np.int64
    np.savez(os.path.join(OUT_DIR, "torch_conv2d_net.npz"), **state)
    w.case("network", x=x, y=y, **{k: torch.as_tensor(v) for k, v in state.items()})


if __name__ == "__main__":
    batch_norm()
    network()
    w.save()
