"""PyTorch reference values for CopyNet (Gu, Lu, Li & Li 2016, "Incorporating Copying Mechanism in
Sequence-to-Sequence Learning"), models/copynet.hpp, written here from PyTorch's own layers:

  encoder     x = src_embed(src); a bidirectional nn.LSTM over the true lengths (packed):
              h_j = [forward; backward] [B, S, 2 He] (0 at padding)
              s_0 = tanh(init([final forward h; final backward h])) (the backward state at position 1),
              decoder cell state 0
  each step t = 0 .. T-1, y_prev = tgt_in[:, t], state s_{t-1}:
  attentive   e_j = v . tanh(W1 s_{t-1} + W2 h_j) over the valid positions, a = softmax of them,
              c_t = sum_j a_j h_j
  selective   rho_j = softmax over {valid j : copy_ids[j] == y_prev} of psi_c^{(t-1)}(j), the copy
              scores of the step before (rho = 0 when no position matches, always at t = 0),
              zeta_t = sum_j rho_j h_j
  decoder     s_t, cell = LSTMCell([tgt_embed(y_prev'); zeta_t; c_t], (s_{t-1}, cell))
              ([tgt_embed(y_prev'); c_t] without the selective read), y_prev' = y_prev with every id
              >= V replaced by <unk> = 3
  scores      psi_g = generate([s_t; c_t; e(y_prev)]) [V] (chapter 2's output layer, not the paper's W_o s_t);
              psi_c(j) = tanh(copy_key(h_j)) . s_t for each valid j
  one softmax Z = sum_v exp(psi_g(v)) + sum_j exp(psi_c(j)); p_g = exp(psi_g) / Z, p_c(j) = exp(psi_c(j)) / Z
  output      p(y) = p_g(y) [y < V] + sum_{valid j : copy_ids[j] == y} p_c(j) over the extended
              vocabulary, log(p(y) + FLT_MIN), FLT_MIN = 2**-126
              (copy off: log_softmax(psi_g) over V alone, no copy slots, no selective read)
  loss        mean over (b, t) with tgt_out[b, t] != <pad> of -log p(tgt_out[b, t])

Every row and every step is computed on its own, with Python loops over b, t and the source positions
j, so that the script shares no mask or matrix trick with the C++ code. The gradient flows through
rho into the previous step's copy scores (nothing is detached).

Parameters are named as the C++ modules name them (src_embed.weight, tgt_embed.weight,
encoder.weight_ih_l0, ..., init.weight, attention.score.W1, attention.score.W2, attention.score.v,
decoder.weight_ih, ..., generate.weight, generate.bias, copy_key.weight), set in that order by
set_named_weights (the embeddings' padding rows included: they are not zeroed).

Sizes: src vocabulary 9, V = 8, E = 3, He = 2, Hd = 4, A = 3; B = 2, S = 5 (rows of 5 and 3 tokens),
T = 4 (rows of 4 and 3 targets). <pad> = 0, <bos> = 1, <eos> = 2, <unk> = 3.

Cases: inputs src, src_lengths, copy_ids, extended_vocab (0-d), tgt_in, tgt_out; every parameter and
grad_<parameter> of the loss; log_prob [B, T, extended vocabulary] (or [B, T, V] without copy),
attention a [B, T, S], copy p_c [B, T, S] (with copy), selective_read rho [B, T, S] (with the selective
read), loss.
  copynet            copy, selective read, extended vocabulary 11 (source-only ids 8, 9, 10), seed 800
  no_selective_read  copy without the selective read (decoder input [e; c_t]), seed 820
  generate_only      copy off: log_softmax over V (copy_ids, extended_vocab written, unused; tgt_in and
                     tgt_out written with their ids >= V as <unk>: [[1, 4, 3, 3], [1, 3, 6, 0]] and
                     [[4, 3, 3, 2], [3, 6, 2, 0]]), seed 840
  plain_ids          copy, selective read, copy_ids all target ids (<unk> for source-only words),
                     extended vocabulary = V = 8, seed 860
"""
import torch

from common import Writer, run_packed, set_named_weights as set_weights

SRC_VOCAB, V, E, HE, HD, A = 9, 8, 3, 2, 4, 3
PAD, BOS, EOS, UNK = 0, 1, 2, 3
FLT_MIN = 2.0 ** -126

SRC = [[4, 5, 4, 6, 7], [8, 5, 8, 0, 0]]
SRC_LENGTHS = [5, 3]

# Extended ids: 4, 5 target words (4 repeated), 8, 9, 10 source-only words of this batch (8 in both
# rows, 10 repeated in row 1).
EXTENDED = dict(copy_ids=[[4, 8, 4, 9, 5], [10, 8, 10, 0, 0]], extended_vocab=11,
                tgt_in=[[1, 4, 8, 9], [1, 10, 6, 0]], tgt_out=[[4, 8, 9, 2], [10, 6, 2, 0]])
# Target ids only: the source-only words are <unk> (repeated, and fed back as y_prev).
PLAIN = dict(copy_ids=[[4, 3, 4, 3, 5], [3, 6, 3, 0, 0]], extended_vocab=V,
             tgt_in=[[1, 4, 3, 5], [1, 3, 6, 0]], tgt_out=[[4, 3, 5, 2], [3, 6, 2, 0]])


class Score(torch.nn.Module):
    """The additive score's parameters: e_j = v . tanh(W1 s + W2 h_j)."""

    def __init__(self):
        super().__init__()
        self.W1 = torch.nn.Parameter(torch.zeros(A, HD))
        self.W2 = torch.nn.Parameter(torch.zeros(A, 2 * HE))
        self.v = torch.nn.Parameter(torch.zeros(A))


class Attention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.score = Score()


class CopyNet(torch.nn.Module):
    def __init__(self, copy, selective_read):
        super().__init__()
        assert copy or not selective_read
        self.copy, self.selective_read = copy, selective_read
        self.src_embed = torch.nn.Embedding(SRC_VOCAB, E, padding_idx=PAD)
        self.tgt_embed = torch.nn.Embedding(V, E, padding_idx=PAD)
        self.encoder = torch.nn.LSTM(E, HE, batch_first=True, bidirectional=True)
        self.init = torch.nn.Linear(2 * HE, HD)
        self.attention = Attention()
        dec_in = E + 2 * HE + (2 * HE if selective_read else 0)
        self.decoder = torch.nn.LSTMCell(dec_in, HD)
        self.generate = torch.nn.Linear(HD + 2 * HE + E, V)  # chapter 2's output layer: [s_t; c_t; e(y_prev)]
        if copy:
            self.copy_key = torch.nn.Linear(2 * HE, HD, bias=False)

    def encode(self, src, lengths):
        x = self.src_embed(src)
        h, (h_n, _) = run_packed(self.encoder, x, lengths)
        # h_n [2, B, He]: layer 0 forward (after the last true token), backward (after position 1)
        s0 = torch.tanh(self.init(torch.cat([h_n[0], h_n[1]], 1)))
        return h, s0

    def forward(self, src, lengths, copy_ids, ext_vocab, tgt_in, tgt_out):
        h, s0 = self.encode(src, lengths)
        B, T = tgt_in.shape
        S = src.shape[1]
        W1, W2, v = self.attention.score.W1, self.attention.score.W2, self.attention.score.v
        out_size = ext_vocab if self.copy else V
        outputs, attn, copies, rhos = [], [], [], []
        for b in range(B):
            n = lengths[b]
            s = s0[b]
            cell = torch.zeros(HD)
            prev_psi_c = None  # the copy scores of the step before, one per valid position
            ids = [int(copy_ids[b, j]) for j in range(n)]
            for t in range(T):
                y_prev = int(tgt_in[b, t])
                # attentive read over the valid positions
                e = torch.stack([v @ torch.tanh(W1 @ s + W2 @ h[b, j]) for j in range(n)])
                a = torch.softmax(e, 0)
                c_t = sum(a[j] * h[b, j] for j in range(n))
                attn.append(torch.cat([a, torch.zeros(S - n)]))
                # selective read: the positions holding y_prev, weighted by the previous copy scores
                y_in = y_prev if y_prev < V else UNK
                emb = self.tgt_embed(torch.tensor(y_in))
                if self.selective_read:
                    match = [] if t == 0 else [j for j in range(n) if ids[j] == y_prev]
                    rho = [torch.tensor(0.0)] * S
                    zeta = torch.zeros(2 * HE)
                    if match:
                        w = torch.softmax(torch.stack([prev_psi_c[j] for j in match]), 0)
                        for k, j in enumerate(match):
                            rho[j] = w[k]
                            zeta = zeta + w[k] * h[b, j]
                    rhos.append(torch.stack(rho))
                    inp = torch.cat([emb, zeta, c_t])
                else:
                    inp = torch.cat([emb, c_t])
                s_new, cell_new = self.decoder(inp[None], (s[None], cell[None]))
                s, cell = s_new[0], cell_new[0]
                psi_g = self.generate(torch.cat([s, c_t, emb]))
                if not self.copy:
                    outputs.append(torch.log_softmax(psi_g, 0))
                    continue
                psi_c = torch.stack([torch.tanh(self.copy_key(h[b, j])) @ s for j in range(n)])
                prev_psi_c = psi_c
                probs = torch.softmax(torch.cat([psi_g, psi_c]), 0)  # one softmax over V + n slots
                p_g, p_c = probs[:V], probs[V:]
                copies.append(torch.cat([p_c, torch.zeros(S - n)]))
                p = []
                for y in range(out_size):
                    terms = [p_g[y]] if y < V else []
                    terms += [p_c[j] for j in range(n) if ids[j] == y]
                    p.append(sum(terms) if terms else torch.tensor(0.0))
                outputs.append(torch.log(torch.stack(p) + FLT_MIN))
        log_prob = torch.stack(outputs).reshape(B, T, out_size)
        total, count = torch.tensor(0.0), 0
        for b in range(B):
            for t in range(T):
                y = int(tgt_out[b, t])
                if y == PAD:
                    continue
                total = total - log_prob[b, t, y]
                count += 1
        loss = total / count
        res = dict(log_prob=log_prob, attention=torch.stack(attn).reshape(B, T, S), loss=loss)
        if self.copy:
            res["copy"] = torch.stack(copies).reshape(B, T, S)
        if self.selective_read:
            res["selective_read"] = torch.stack(rhos).reshape(B, T, S)
        return res


def check(res, data, copy):
    B, T, S = res["attention"].shape
    for b in range(B):
        n = SRC_LENGTHS[b]
        for t in range(T):
            a = res["attention"][b, t]
            assert abs(float(a[:n].sum()) - 1) < 1e-12 and float(a[n:].abs().sum()) == 0
            if "selective_read" in res:
                r = float(res["selective_read"][b, t].sum())
                assert abs(r - 1) < 1e-12 or r == 0, r
                assert float(res["selective_read"][b, t, n:].abs().sum()) == 0
            if copy:
                p = torch.exp(res["log_prob"][b, t].detach()) - FLT_MIN
                assert abs(float(p.sum()) - 1) < 1e-12, float(p.sum())
                assert float(res["copy"][b, t, n:].abs().sum()) == 0
            else:
                assert abs(float(torch.exp(res["log_prob"][b, t]).sum()) - 1) < 1e-12
    if "selective_read" in res:
        # the selective read has something to read: some step of some row has rho != 0
        assert float(res["selective_read"].sum()) >= 2


def case(w, name, copy, selective_read, data, seed):
    model = CopyNet(copy, selective_read)
    named = list(model.named_parameters())
    set_weights(named, seed)
    src = torch.tensor(SRC)
    copy_ids = torch.tensor(data["copy_ids"])
    tgt_in, tgt_out = torch.tensor(data["tgt_in"]), torch.tensor(data["tgt_out"])
    if not copy:  # the generate mode alone knows the target vocabulary only: ids >= V are <unk>
        tgt_in = torch.where(tgt_in >= V, torch.tensor(UNK), tgt_in)
        tgt_out = torch.where(tgt_out >= V, torch.tensor(UNK), tgt_out)
    res = model(src, SRC_LENGTHS, copy_ids, data["extended_vocab"], tgt_in, tgt_out)
    check(res, data, copy)
    res["loss"].backward()
    w.case(name, src=src, src_lengths=torch.tensor(SRC_LENGTHS), copy_ids=copy_ids,
           extended_vocab=torch.tensor(float(data["extended_vocab"])), tgt_in=tgt_in, tgt_out=tgt_out,
           **{k: t.detach() for k, t in res.items()},
           **{n: p.detach() for n, p in named}, **{"grad_" + n: p.grad for n, p in named})
    return model, res


def main():
    w = Writer("copynet")
    case(w, "copynet", True, True, EXTENDED, 800)
    case(w, "no_selective_read", True, False, EXTENDED, 820)
    case(w, "generate_only", False, False, EXTENDED, 840)
    case(w, "plain_ids", True, True, PLAIN, 860)
    w.save()


if __name__ == "__main__":
    main()
