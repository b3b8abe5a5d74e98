"""PyTorch reference values for chapter 18's document classifiers: nn::ContextAttention
(nn/attention/context.hpp), models::HierarchicalAttentionNetwork (models/han.hpp) and the two
baselines of models/document_baselines.hpp, written here from PyTorch's own layers:

  context attention  u_t = tanh(W h_t + b), a_t = softmax_t(u_t . u) (masked), s = sum_t a_t h_t
  han                embedding -> nn.GRU (bidirectional, packed) over each real sentence ->
                     context attention -> nn.GRU over the sentence vectors (packed) ->
                     context attention -> nn.Linear
  flat               the document's words as one packed sequence -> nn.GRU -> context attention -> nn.Linear
  bow                the mean of the words' embeddings -> nn.Linear

Parameters are named as the C++ modules name them (embedding.weight, word_encoder.weight_ih_l0,
word_attention.proj.weight, word_attention.context, ...).

Cases:
  context            B = 2, T = 4, D = 3, A = 5, the second sequence 2 steps long: pooled, weights,
                     and the gradients of sum(pooled * r)
  han, flat, bow     2 documents as words [B, S, W] = [2, 3, 4]: the first of 3 sentences of 4, 1
                     and 3 words, the second of 1 sentence of 3 words; V = 11, C = 3, E = 3, H = 2,
                     A = 4: logits, the attention weights, every gradient of sum(logits * r)
"""
import torch

from common import Writer, fixed, run_packed, set_named_weights as set_weights


def run_gru(gru, x, lengths):
    return run_packed(gru, x, lengths)[0]


def padding(lengths, T):
    return torch.arange(T)[None, :] >= torch.tensor(lengths)[:, None]  # [B, T], True at padding


class ContextAttention(torch.nn.Module):
    def __init__(self, D, A):
        super().__init__()
        self.proj = torch.nn.Linear(D, A)
        self.context = torch.nn.Parameter(torch.zeros(A))

    def forward(self, h, pad):
        e = torch.tanh(self.proj(h)) @ self.context              # [B, T]
        a = torch.softmax(e.masked_fill(pad, float("-inf")), 1)   # [B, T]
        return torch.einsum("bt,btd->bd", a, h), a


class HAN(torch.nn.Module):
    def __init__(self, V, C, E, H, A):
        super().__init__()
        self.embedding = torch.nn.Embedding(V, E, padding_idx=0)
        self.word_encoder = torch.nn.GRU(E, H, batch_first=True, bidirectional=True)
        self.word_attention = ContextAttention(2 * H, A)
        self.sentence_encoder = torch.nn.GRU(2 * H, H, batch_first=True, bidirectional=True)
        self.sentence_attention = ContextAttention(2 * H, A)
        self.classifier = torch.nn.Linear(2 * H, C)

    def forward(self, words, sentence_counts, word_counts):
        B, S, W = words.shape
        real = [(b, s) for b in range(B) for s in range(sentence_counts[b])]
        sentences = torch.stack([words[b, s] for b, s in real])             # [N, W]
        lengths = [word_counts[b * S + s] for b, s in real]
        h = run_gru(self.word_encoder, self.embedding(sentences), lengths)  # [N, W, 2H]
        vec, a_w = self.word_attention(h, padding(lengths, W))            # [N, 2H], [N, W]
        docs = torch.zeros(B, S, vec.shape[1])
        a_words = torch.zeros(B, S, W)
        for n, (b, s) in enumerate(real):
            docs[b, s] = vec[n]
            a_words[b, s] = a_w[n].detach()
        hs = run_gru(self.sentence_encoder, docs, sentence_counts)         # [B, S, 2H]
        v, a_s = self.sentence_attention(hs, padding(sentence_counts, S))
        return self.classifier(v), {"attention_words": a_words, "attention_sentences": a_s}


def flatten(words, sentence_counts, word_counts):
    B, S, W = words.shape
    docs = [torch.cat([words[b, s, :word_counts[b * S + s]] for s in range(sentence_counts[b])]) for b in range(B)]
    lengths = [len(d) for d in docs]
    flat = torch.zeros(B, max(lengths), dtype=torch.long)
    for b, d in enumerate(docs):
        flat[b, :len(d)] = d
    return flat, lengths


class Flat(torch.nn.Module):
    def __init__(self, V, C, E, H, A):
        super().__init__()
        self.embedding = torch.nn.Embedding(V, E, padding_idx=0)
        self.encoder = torch.nn.GRU(E, H, batch_first=True, bidirectional=True)
        self.attention = ContextAttention(2 * H, A)
        self.classifier = torch.nn.Linear(2 * H, C)

    def forward(self, words, sentence_counts, word_counts):
        flat, lengths = flatten(words, sentence_counts, word_counts)
        h = run_gru(self.encoder, self.embedding(flat), lengths)
        v, a = self.attention(h, padding(lengths, flat.shape[1]))
        return self.classifier(v), {"attention_words": a.detach()}


class BagOfWords(torch.nn.Module):
    def __init__(self, V, C, E):
        super().__init__()
        self.embedding = torch.nn.Embedding(V, E, padding_idx=0)
        self.classifier = torch.nn.Linear(E, C)

    def forward(self, words, sentence_counts, word_counts):
        flat, lengths = flatten(words, sentence_counts, word_counts)
        e = self.embedding(flat) * (~padding(lengths, flat.shape[1]))[:, :, None]
        return self.classifier(e.sum(1) / torch.tensor(lengths, dtype=torch.float64)[:, None]), {}


def context_case(w):
    B, T, D, A = 2, 4, 3, 5
    att = ContextAttention(D, A)
    named = list(att.named_parameters())
    set_weights(named, 300)
    h = fixed((B, T, D), 310)
    lengths = [4, 2]
    pooled, weights = att(h, padding(lengths, T))
    r = fixed(pooled.shape, 311, requires_grad=False)
    (pooled * r).sum().backward()
    w.case("context", h=h.detach(), lengths=torch.tensor(lengths), pooled=pooled, weights=weights, r=r,
           grad_h=h.grad, **{n: p.detach() for n, p in named}, **{"grad_" + n: p.grad for n, p in named})


# The batch of the model cases: ids 1..10 for words (0 = <pad>).
WORDS = torch.tensor([[[4, 7, 2, 9], [5, 0, 0, 0], [8, 10, 6, 0]],
                      [[7, 1, 4, 0], [0, 0, 0, 0], [0, 0, 0, 0]]])
SENTENCE_COUNTS = [3, 1]
WORD_COUNTS = [4, 1, 3, 3, 0, 0]


def model_case(w, name, model, seed):
    named = list(model.named_parameters())
    set_weights(named, seed)
    logits, attention = model(WORDS, SENTENCE_COUNTS, WORD_COUNTS)
    r = fixed(logits.shape, seed + 90, requires_grad=False)
    (logits * r).sum().backward()
    w.case(name, words=WORDS, sentence_counts=torch.tensor(SENTENCE_COUNTS),
           word_counts=torch.tensor(WORD_COUNTS), logits=logits, r=r, **attention,
           **{n: p.detach() for n, p in named}, **{"grad_" + n: p.grad for n, p in named})


def main():
    w = Writer("han")
    context_case(w)
    V, C, E, H, A = 11, 3, 3, 2, 4
    model_case(w, "han", HAN(V, C, E, H, A), 400)
    model_case(w, "flat", Flat(V, C, E, H, A), 500)
    model_case(w, "bow", BagOfWords(V, C, E), 600)
    w.save()


if __name__ == "__main__":
    main()
