"""PyTorch reference values for nn layers and losses (tests/nn/test_layers.cpp, test_loss.cpp).

Every case records the layer's weights, the input, the output y, a fixed
upstream gradient gy, and the gradients that y.backward(gy) gives to the input
and to every weight. The C++ tests copy the weights into the attn module and
must reproduce y and every gradient within 1e-10.
Run: /usr/bin/python3 tools/reference/nn_layers.py
"""
import torch
import torch.nn.functional as F

from common import Writer, fixed

w = Writer("nn_layers")


def upstream(shape, seed):
    """A fixed gradient for y.backward(gy); works for scalar y too."""
    return fixed(tuple(shape) or (1,), seed, requires_grad=False).reshape(shape)


def grads(**named):
    return {"grad_" + k: v.grad for k, v in named.items()}


# ---- Linear: x [2, 3, 4] -> [2, 3, 5], with and without bias --------------------
for bias in (True, False):
    lin = torch.nn.Linear(4, 5, bias=bias)
    with torch.no_grad():
        lin.weight.copy_(fixed((5, 4), 1))
        if bias:
            lin.bias.copy_(fixed((5,), 2))
    x = fixed((2, 3, 4), 3)
    y = lin(x)
    gy = upstream(y.shape, 4)
    y.backward(gy)
    params = {"weight": lin.weight}
    if bias:
        params["bias"] = lin.bias
    w.case("linear" if bias else "linear_nobias", x=x, y=y, gy=gy, **params,
           **grads(x=x, **params))

# ---- Embedding with padding_idx: the padding row gets no gradient ---------------
emb = torch.nn.Embedding(6, 3, padding_idx=1)
with torch.no_grad():
    emb.weight.copy_(fixed((6, 3), 5))  # the padding row too: its value is still used in forward
ids = torch.tensor([[1, 2, 3, 2], [0, 1, 5, 2]])
y = emb(ids)
gy = upstream(y.shape, 6)
y.backward(gy)
w.case("embedding_padding", ids=ids, weight=emb.weight, y=y, gy=gy, grad_weight=emb.weight.grad)

# ---- LayerNorm over the last dim and over the last two dims ----------------------
for name, shape, normalized in (("layer_norm", (2, 3, 4), (4,)), ("layer_norm_2d", (2, 3, 4), (3, 4))):
    ln = torch.nn.LayerNorm(normalized)
    with torch.no_grad():
        ln.weight.copy_(fixed(normalized, 7, 0.5, 1.5))
        ln.bias.copy_(fixed(normalized, 8))
    x = fixed(shape, 9, -2.0, 2.0)
    y = ln(x)
    gy = upstream(y.shape, 10)
    y.backward(gy)
    w.case(name, x=x, weight=ln.weight, bias=ln.bias, y=y, gy=gy,
           **grads(x=x, weight=ln.weight, bias=ln.bias))

# ---- MLP {3, 5, 4, 2}: Linear, act, Linear, act, Linear --------------------------
for act_name, act in (("tanh", torch.nn.Tanh()), ("gelu", torch.nn.GELU())):
    sizes = [3, 5, 4, 2]
    layers = [torch.nn.Linear(sizes[i], sizes[i + 1]) for i in range(3)]
    with torch.no_grad():
        for i, lin in enumerate(layers):
            lin.weight.copy_(fixed(lin.weight.shape, 20 + 2 * i))
            lin.bias.copy_(fixed(lin.bias.shape, 21 + 2 * i))
    net = torch.nn.Sequential(layers[0], act, layers[1], act, layers[2])
    x = fixed((6, 3), 30, -2.0, 2.0)
    y = net(x)
    gy = upstream(y.shape, 31)
    y.backward(gy)
    params = {}
    for i, lin in enumerate(layers):
        params["layers_%d_weight" % i] = lin.weight
        params["layers_%d_bias" % i] = lin.bias
    w.case("mlp_" + act_name, x=x, y=y, gy=gy, **params, **grads(x=x, **params))

# ---- Dropout in eval mode is the identity ----------------------------------------
drop = torch.nn.Dropout(0.3).eval()
x = fixed((3, 4), 40)
y = drop(x)
gy = upstream(y.shape, 41)
y.backward(gy)
w.case("dropout_eval", x=x, y=y, gy=gy, grad_x=x.grad)

# ---- cross_entropy: logits [6, 5], some targets ignored --------------------------
targets = torch.tensor([3, -100, 0, 4, 4, -100])
targets_7 = torch.tensor([3, 7, 0, 4, 7, 2])  # ignore_index = 7
for reduction in ("none", "mean", "sum"):
    for smoothing in (0.0, 0.1):
        for tname, t, ignore in (("ignore", targets, -100), ("ignore7", targets_7, 7)):
            logits = fixed((6, 5), 50, -3.0, 3.0)
            loss = F.cross_entropy(logits, t, ignore_index=ignore, label_smoothing=smoothing, reduction=reduction)
            gy = upstream(loss.shape, 51)
            loss.backward(gy)
            w.case("cross_entropy_%s_ls%g_%s" % (reduction, smoothing, tname), logits=logits, targets=t,
                   loss=loss, gy=gy, grad_logits=logits.grad)

# Sequence layout: logits [B, T, C] with targets [B, T], as PyTorch's view(-1, C).
logits = fixed((2, 3, 4), 52, -3.0, 3.0)
t = torch.tensor([[1, 0, -100], [3, 2, -100]])
loss = F.cross_entropy(logits.view(-1, 4), t.view(-1), label_smoothing=0.2)
loss.backward()
w.case("cross_entropy_sequence", logits=logits, targets=t, loss=loss, grad_logits=logits.grad)

# PyTorch's K-dimensional layout, class dim 1: logits [N, C, d1, ...] with targets [N, d1, ...].
for name, shape, t, smoothing, reduction in (
        ("cross_entropy_kdim_3d", (2, 4, 3), [[1, 0, -100], [3, 2, 1]], 0.1, "mean"),
        ("cross_entropy_kdim_3d_none", (2, 4, 3), [[1, 0, -100], [3, 2, 1]], 0.0, "none"),
        ("cross_entropy_kdim_4d", (2, 3, 2, 2), [[[0, 2], [1, -100]], [[2, 2], [0, 1]]], 0.2, "sum")):
    logits = fixed(shape, 53, -3.0, 3.0)
    t = torch.tensor(t)
    loss = F.cross_entropy(logits, t, label_smoothing=smoothing, reduction=reduction)
    gy = upstream(loss.shape, 54)
    loss.backward(gy)
    w.case(name, logits=logits, targets=t, loss=loss, gy=gy, grad_logits=logits.grad)

# ---- nll_loss on log-probabilities -----------------------------------------------
for reduction in ("none", "mean", "sum"):
    log_probs = fixed((6, 5), 60, -4.0, 0.0)
    loss = F.nll_loss(log_probs, targets, reduction=reduction)
    gy = upstream(loss.shape, 61)
    loss.backward(gy)
    w.case("nll_loss_" + reduction, log_probs=log_probs, targets=targets, loss=loss, gy=gy,
           grad_log_probs=log_probs.grad)

# ---- mse_loss ---------------------------------------------------------------------
for reduction in ("none", "mean", "sum"):
    a = fixed((3, 4), 70)
    b = fixed((3, 4), 71)
    loss = F.mse_loss(a, b, reduction=reduction)
    gy = upstream(loss.shape, 72)
    loss.backward(gy)
    w.case("mse_loss_" + reduction, input=a, target=b, loss=loss, gy=gy, grad_input=a.grad, grad_target=b.grad)

w.save()
