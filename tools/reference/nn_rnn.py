"""PyTorch reference values for the recurrent cells and layers (nn/rnn_cell.*, nn/rnn.*).

Every case records fixed weights under PyTorch's parameter names, the inputs,
the outputs, a grad_output for each output, and the gradient of
    loss = sum(output * grad_output) + sum(h * grad_h) (+ sum(c * grad_c))
with respect to every weight (grad_<name>), the input (grad_x) and the initial
states (grad_h0, grad_c0).

Cases:
  {rnn,lstm,gru}_cell                one step of nn.RNNCell / LSTMCell / GRUCell
  {rnn,rnn_relu,lstm,gru}_plain      one layer, one direction, [T, B, in], given h0 (c0)
  {rnn,lstm,gru}_packed[_bf]         2 layers, bidirectional, uneven lengths through
                                     pack_padded_sequence(enforce_sorted=False) and
                                     pad_packed_sequence(total_length=T); _bf: batch_first.
                                     The inputs hold garbage at padded steps.
"""
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from common import Writer, fixed

IN, H, T, B = 3, 4, 5, 3
LENGTHS = [4, 5, 2]  # unsorted on purpose


def set_weights(module, seed):
    """Uniform(-0.5, 0.5) weights, reproducible, named as PyTorch names them."""
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            p.copy_(fixed(p.shape, seed + i, -0.5, 0.5, requires_grad=False))
    return {name: p.detach().clone() for name, p in module.named_parameters()}


def grads(module):
    return {"grad_" + name: p.grad for name, p in module.named_parameters()}


def cell_cases(w):
    for kind, cls in [("rnn", torch.nn.RNNCell), ("lstm", torch.nn.LSTMCell), ("gru", torch.nn.GRUCell)]:
        cell = cls(IN, H).double()
        weights = set_weights(cell, 100)
        x = fixed((B, IN), 1)
        h0 = fixed((B, H), 2)
        grad_h = fixed((B, H), 3, requires_grad=False)
        if kind == "lstm":
            c0 = fixed((B, H), 4)
            grad_c = fixed((B, H), 5, requires_grad=False)
            h, c = cell(x, (h0, c0))
            ((h * grad_h).sum() + (c * grad_c).sum()).backward()
            w.case(kind + "_cell", x=x, h0=h0, c0=c0, h=h, c=c, grad_h=grad_h, grad_c=grad_c,
                   grad_x=x.grad, grad_h0=h0.grad, grad_c0=c0.grad, **weights, **grads(cell))
        else:
            h = cell(x, h0)
            (h * grad_h).sum().backward()
            w.case(kind + "_cell", x=x, h0=h0, h=h, grad_h=grad_h, grad_x=x.grad, grad_h0=h0.grad,
                   **weights, **grads(cell))


def make_layer(kind, num_layers, bidirectional, batch_first):
    args = dict(num_layers=num_layers, bidirectional=bidirectional, batch_first=batch_first)
    if kind == "lstm":
        return torch.nn.LSTM(IN, H, **args).double()
    if kind == "gru":
        return torch.nn.GRU(IN, H, **args).double()
    return torch.nn.RNN(IN, H, nonlinearity="relu" if kind == "rnn_relu" else "tanh", **args).double()


def layer_case(w, case_name, kind, num_layers, bidirectional, batch_first, lengths):
    layer = make_layer(kind, num_layers, bidirectional, batch_first)
    weights = set_weights(layer, 200)
    D = 2 if bidirectional else 1
    x = fixed((B, T, IN) if batch_first else (T, B, IN), 10)
    h0 = fixed((num_layers * D, B, H), 11)
    c0 = fixed((num_layers * D, B, H), 12)
    grad_out = fixed((B, T, D * H) if batch_first else (T, B, D * H), 13, requires_grad=False)
    grad_h = fixed((num_layers * D, B, H), 14, requires_grad=False)
    grad_c = fixed((num_layers * D, B, H), 15, requires_grad=False)
    state = (h0, c0) if kind == "lstm" else h0

    if lengths is None:
        out, final = layer(x, state)
    else:
        packed = pack_padded_sequence(x, torch.tensor(lengths), batch_first=batch_first, enforce_sorted=False)
        out, final = layer(packed, state)
        out, _ = pad_packed_sequence(out, batch_first=batch_first, total_length=T)
    h, c = final if kind == "lstm" else (final, None)
    loss = (out * grad_out).sum() + (h * grad_h).sum()
    if kind == "lstm":
        loss = loss + (c * grad_c).sum()
    loss.backward()

    tensors = dict(x=x, h0=h0, output=out, h=h, grad_output=grad_out, grad_h=grad_h,
                   grad_x=x.grad, grad_h0=h0.grad, **weights, **grads(layer))
    if kind == "lstm":
        tensors.update(c0=c0, c=c, grad_c=grad_c, grad_c0=c0.grad)
    if lengths is not None:
        tensors["lengths"] = torch.tensor(lengths, dtype=torch.float64)
    w.case(case_name, **tensors)


def main():
    w = Writer("nn_rnn")
    cell_cases(w)
    for kind in ["rnn", "rnn_relu", "lstm", "gru"]:
        layer_case(w, kind + "_plain", kind, 1, False, False, None)
    for kind in ["rnn", "lstm", "gru"]:
        layer_case(w, kind + "_packed", kind, 2, True, False, LENGTHS)
        layer_case(w, kind + "_packed_bf", kind, 2, True, True, LENGTHS)
    w.save()


if __name__ == "__main__":
    main()
