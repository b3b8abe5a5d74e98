// Lab 22: chapter 12's convolutional attention and its copy head (Allamanis, Peng & Sutton 2016).
// What to write: labs/22_conv_copy/README.md. Check it: tools/lab.sh 22 (your copy is labs/work/22_conv_copy.cpp).
#include "labs/grader/lab22_conv_copy.hpp"

using attn::Index;
using attn::Tensor;
using lab::conv_copy::Attention;
using lab::conv_copy::Cell;
using lab::conv_copy::Kernels;
using lab::conv_copy::Step;

// ---- your code ----
// E [B, S, D], lengths (row b's real positions: 0 .. lengths[b]-1), h [B, T, H], k the five convolutions
// -> {a [B, T, S], n [B, T, D], kappa [B, T, S], lambda [B, T, 1]}:
//   L1     = relu(conv1d(E, K_1))              conv1d wants [B, channels, S]: attn::transpose(E, 1, 2)
//   F      = conv1d(L1, K_2)                   [B, H, S]; every conv1d "same": attn::conv1d(x, w, b, "same")
//            (the padding zeroed before each convolution reads it: attn::masked_fill(x, pad, 0.0), pad an
//             attn::Mask [B, 1, S], true at j >= lengths[b])
//   L2     = F * h_t                           [B, 1, S, H] * [B, T, 1, H] -> [B, T, S, H] (attn::unsqueeze)
//   Lfeat  = L2 / sqrt(sum_H(L2 * L2) + 1e-12) each position's row on its own
//   scores = conv1d over the positions of each (b, t): [B*T, H, S] -> [B*T, 1, S] -> [B, T, S]
//   a      = softmax over the real positions (-1e30 at padding) of the K_att scores; n = a E (attn::matmul)
//   kappa  = the same with K_copy;  lambda = max over the real positions of sigmoid(the K_lambda scores)
Attention attention(const Tensor& E, const std::vector<std::size_t>& lengths, const Tensor& h, const Kernels& k) {
  lab::not_implemented("attention");
}

// p_gen [B, T, V], kappa [B, T, S], lambda [B, T, 1], copy_ids [B, S] (ids < V: vocabulary words; V ..
// extended_vocab-1: the batch's source-only words; <pad> = 0 at padding) -> p [B, T, extended_vocab]:
//   p(y) = lambda p_gen(y) + (1 - lambda) sum over the positions j with copy_ids(b, j) = y of kappa_j
// p_gen widened with attn::zeros({B, T, extended_vocab - V}) (attn::concat); the sum is
// attn::matmul(kappa, attn::one_hot(copy_ids, extended_vocab)).
Tensor mixture(const Tensor& p_gen, const Tensor& kappa, const Tensor& lambda, const Index& copy_ids,
               std::size_t extended_vocab) {
  lab::not_implemented("mixture");
}

// One decoder step: y_prev [B, D_y] (the previous target word's embedding), h_prev [B, H]
// -> {h_t = cell(y_prev, h_prev), the attention gated by h_t (your attention(), with h_t as [B, 1, H])}.
Step step(const Tensor& E, const std::vector<std::size_t>& lengths, const Tensor& y_prev, const Tensor& h_prev,
          const Cell& cell, const Kernels& k) {
  lab::not_implemented("step");
}
// ---- end of your code ----

#ifndef LAB_NO_MAIN
int main() {
  lab::conv_copy::ConvCopy mine{attention, mixture, step};
  return lab::conv_copy::grade(mine).exit_code();
}
#endif
