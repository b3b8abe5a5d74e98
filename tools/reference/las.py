"""PyTorch reference values for Listen, Attend and Spell: nn::PyramidalLSTM
(nn/pyramidal_lstm.hpp) and models::ListenAttendSpell (models/las.hpp), written here
from PyTorch's own layers:

  pyramidal layer   x [B, T, F], zero past each length, one zero step appended if T is odd,
                    reshaped to [B, ceil(T/2), 2F], then a bidirectional nn.LSTM over
                    pack_padded_sequence(ceil(length / 2))
  listener          a bidirectional nn.LSTM over the frames, then the pyramidal layers
  speller           s_i = LSTMCell stack([embed(y_{i-1}); c_{i-1}]), c_0 = 0, zero states
                    e_iu = phi(s_i) . psi(h_u) (phi, psi: Linear-ReLU-Linear), masked softmax,
                    c_i = sum_u a_iu h_u, logits = Linear-ReLU-Linear([s_i; c_i])

Parameters are named as the C++ modules name them (listener.weight_ih_l0,
pyramid.0.lstm.weight_ih_l0, speller.1.weight_hh, phi.layers.0.weight, ...).

Cases:
  pyramid   one pyramidal layer, x [3, 7, 4] (odd T), lengths 7, 4, 1, hidden 3
  las       the whole model: features [2, 9, 3], lengths 9, 5, tgt_in [2, 4], 2 pyramid
            layers, 2 speller layers: logits, attention, and every gradient of sum(logits * r)
"""
import torch

from common import Writer, fixed, run_packed, set_named_weights as set_weights


def blstm(lstm, x, lengths):
    return run_packed(lstm, x, lengths)[0]


def pyramid_step(lstm, x, lengths):
    B, T, F = x.shape
    mask = (torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]).to(x.dtype)  # [B, T]
    x = x * mask[:, :, None]
    if T % 2 == 1:
        x = torch.cat([x, torch.zeros(B, 1, F)], dim=1)
    x = x.reshape(B, x.shape[1] // 2, 2 * F)
    half = [(n + 1) // 2 for n in lengths]
    return blstm(lstm, x, half), half


def pyramid_case(w):
    lstm = torch.nn.LSTM(8, 3, bidirectional=True, batch_first=True)
    named = [("lstm." + n, p) for n, p in lstm.named_parameters()]
    set_weights(named, 300)
    x = fixed((3, 7, 4), 30)
    lengths = [7, 4, 1]
    out, half = pyramid_step(lstm, x, lengths)
    r = fixed(out.shape, 31, requires_grad=False)
    (out * r).sum().backward()
    w.case("pyramid", x=x, lengths=torch.tensor(lengths, dtype=torch.float64), output=out, r=r, grad_x=x.grad,
           out_lengths=torch.tensor(half, dtype=torch.float64),
           **{n: p.detach() for n, p in named}, **{"grad_" + n: p.grad for n, p in named})


def mlp(sizes):
    return torch.nn.Sequential(torch.nn.Linear(sizes[0], sizes[1]), torch.nn.ReLU(), torch.nn.Linear(sizes[1], sizes[2]))


def las_case(w):
    n_mels, vocab, Hl, layers, E, Hs, S, A = 3, 6, 2, 2, 3, 4, 2, 3
    listener = torch.nn.LSTM(n_mels, Hl, bidirectional=True, batch_first=True)
    pyramid = [torch.nn.LSTM(4 * Hl, Hl, bidirectional=True, batch_first=True) for _ in range(layers)]
    embed = torch.nn.Embedding(vocab, E, padding_idx=0)
    speller = [torch.nn.LSTMCell(E + 2 * Hl if l == 0 else Hs, Hs) for l in range(S)]
    phi, psi = mlp([Hs, A, A]), mlp([2 * Hl, A, A])
    distribution = mlp([Hs + 2 * Hl, Hs, vocab])

    def linears(prefix, seq):
        return [(prefix + ".layers.%d.%s" % (i // 2, n.split(".")[1]), p) for i, (n, p) in
                enumerate((n, p) for n, p in seq.named_parameters())]

    named = [("listener." + n, p) for n, p in listener.named_parameters()]
    for l, lstm in enumerate(pyramid):
        named += [("pyramid.%d.lstm.%s" % (l, n), p) for n, p in lstm.named_parameters()]
    named += [("embed.weight", embed.weight)]
    for l, cell in enumerate(speller):
        named += [("speller.%d.%s" % (l, n), p) for n, p in cell.named_parameters()]
    named += linears("phi", phi) + linears("psi", psi) + linears("distribution", distribution)
    set_weights(named, 400)
    with torch.no_grad():
        embed.weight[0].zero_()  # padding_idx: the row of <pad> is zero, as nn::Embedding keeps it

    features = fixed((2, 9, n_mels), 40)
    lengths = [9, 5]
    tgt_in = torch.tensor([[1, 3, 4, 5], [1, 5, 3, 2]])
    h = blstm(listener, features, lengths)
    lens = lengths
    for lstm in pyramid:
        h, lens = pyramid_step(lstm, h, lens)
    B, U = h.shape[0], h.shape[1]
    pad = torch.arange(U)[None, :] >= torch.tensor(lens)[:, None]  # [B, U]
    keys = psi(h)  # [B, U, A]
    context = torch.zeros(B, 2 * Hl)
    states = [(torch.zeros(B, Hs), torch.zeros(B, Hs)) for _ in range(S)]
    logits, weights = [], []
    for i in range(tgt_in.shape[1]):
        x = torch.cat([embed(tgt_in[:, i]), context], dim=1)
        for l, cell in enumerate(speller):
            states[l] = cell(x, states[l])
            x = states[l][0]
        e = torch.einsum("ba,bua->bu", phi(x), keys).masked_fill(pad, float("-inf"))
        a = torch.softmax(e, dim=1)
        context = torch.einsum("bu,buh->bh", a, h)
        logits.append(distribution(torch.cat([x, context], dim=1)))
        weights.append(a)
    logits = torch.stack(logits, 1)  # [B, L, V]
    attention = torch.stack(weights, 1)  # [B, L, U]
    r = fixed(logits.shape, 41, requires_grad=False)
    (logits * r).sum().backward()
    w.case("las", features=features, lengths=torch.tensor(lengths, dtype=torch.float64),
           tgt_in=tgt_in.to(torch.float64), logits=logits, attention=attention, r=r, grad_features=features.grad,
           **{n: p.detach() for n, p in named}, **{"grad_" + n: p.grad for n, p in named})


def main():
    w = Writer("las")
    pyramid_case(w)
    las_case(w)
    w.save()


if __name__ == "__main__":
    main()
