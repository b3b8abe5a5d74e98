"""PyTorch reference values for the pointer sentinel language model (models/pointer_sentinel.hpp,
Merity et al. 2016) and the plain LSTM language model beside it, written from PyTorch's own layers:

  h        = nn.LSTM(embedding(x))                                       [B, T, H]
  p_vocab  = softmax(out(h_t))                                           [V] for each step
  q        = tanh(query(h_t)); scores q . h_j for j = max(0, t - L + 1) .. t, then q . sentinel
  [a; g]   = softmax of those scores
  p        = g p_vocab + (each slot's weight added to its word, index_add)  [V]
  mass_t   = the pointer's share of p(y_t) (0 where y_t is <pad>)
  loss     = mean over targets that are not <pad> of -log p(y_t) - log(g_t + mass_t)

The model below computes each step on its own, with loops, so that it shares no mask or matrix trick
with the C++ code.

Parameters are named as the C++ modules name them (embedding.weight, lstm.weight_ih_l0, out.weight,
query.weight, sentinel, ...).

Cases (V = 9, E = 3, H = 4; B = 2, T = 6, the second chunk 4 predictions long; words repeat so the
pointer has copies to find; the distribution of every step, padded ones too):
  pointer        L = 3: log p(y_t), the gate, the pointer mass, the loss, every gradient of the loss;
                 the next-word distribution [B, T, V]
  pointer_wide   L = 100 (wider than the chunk), pointer_loss off: the same
  plain          the softmax alone: log p(y_t), the loss, every gradient
"""
import torch

from common import Writer, set_named_weights as set_weights

V, E, H = 9, 3, 4
# Two chunks of words, the second one shorter: inputs are all but the last word, targets all but the first.
CHUNKS = [[4, 5, 6, 4, 5, 7, 4], [8, 4, 8, 3, 8]]
T = max(len(c) for c in CHUNKS) - 1
INPUTS = torch.tensor([c[:-1] + [0] * (T + 1 - len(c)) for c in CHUNKS])
TARGETS = torch.tensor([c[1:] + [0] * (T + 1 - len(c)) for c in CHUNKS])


class LM(torch.nn.Module):
    """Written step by step: for every step t its own window of slots, its own softmax over them and
    the sentinel, and the pointer's distribution built by adding each slot's weight to its word."""

    def __init__(self, pointer, window, pointer_loss):
        super().__init__()
        self.embedding = torch.nn.Embedding(V, E, padding_idx=0)
        self.lstm = torch.nn.LSTM(E, H, batch_first=True)
        self.out = torch.nn.Linear(H, V)
        self.pointer, self.window, self.pointer_loss = pointer, window, pointer_loss
        if pointer:
            self.query = torch.nn.Linear(H, H)
            self.sentinel = torch.nn.Parameter(torch.zeros(H))

    def step(self, x, h, logits, b, t):
        """The next-word distribution of step t of row b [V], the sentinel's weight, and the pointer's
        distribution over words [V]."""
        p_vocab = torch.softmax(logits[b, t], 0)
        if not self.pointer:
            return p_vocab, torch.tensor(1.0), torch.zeros(V)
        q = torch.tanh(self.query(h[b, t]))
        slots = list(range(max(0, t - self.window + 1), t + 1))
        scores = torch.stack([q @ h[b, j] for j in slots] + [q @ self.sentinel])
        w = torch.softmax(scores, 0)
        g = w[-1]
        p_ptr = torch.zeros(V).index_add(0, x[b, slots], w[:-1])
        return g * p_vocab + p_ptr, g, p_ptr

    def forward(self, x, y):
        h, _ = self.lstm(self.embedding(x))
        logits = self.out(h)
        B, T = x.shape
        log_prob, gate, mass, extra, probs = [], [], [], [], []
        for b in range(B):
            for t in range(T):
                p, g, p_ptr = self.step(x, h, logits, b, t)
                probs.append(p)
                if y[b, t] == 0:  # <pad>: nothing to predict
                    log_prob.append(torch.tensor(0.0)), gate.append(g), mass.append(torch.tensor(0.0))
                    extra.append(torch.tensor(0.0))
                    continue
                log_prob.append(torch.log(p[y[b, t]]))
                gate.append(g)
                mass.append(p_ptr[y[b, t]])
                extra.append(torch.log(g + p_ptr[y[b, t]]))
        log_prob, gate, mass = torch.stack(log_prob).reshape(B, T), torch.stack(gate).reshape(B, T), torch.stack(mass).reshape(B, T)
        n = (y != 0).sum()
        loss = -log_prob.sum() / n
        if self.pointer and self.pointer_loss:
            loss = loss - torch.stack(extra).sum() / n
        return log_prob, gate, mass, loss, torch.stack(probs).reshape(B, T, V)


def case(w, name, model, seed):
    named = list(model.named_parameters())
    set_weights(named, seed)
    log_prob, g, mass, loss, probs = model(INPUTS, TARGETS)
    loss.backward()
    w.case(name, inputs=INPUTS, targets=TARGETS, log_prob=log_prob, gate=g, pointer_mass=mass, loss=loss,
           probabilities=probs, **{n: p.detach() for n, p in named}, **{"grad_" + n: p.grad for n, p in named})


def main():
    w = Writer("pointer_sentinel")
    case(w, "pointer", LM(True, 3, True), 700)
    case(w, "pointer_wide", LM(True, 100, False), 720)
    case(w, "plain", LM(False, 0, False), 740)
    w.save()


if __name__ == "__main__":
    main()
