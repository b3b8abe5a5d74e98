// Lab 22's grader: chapter 12's convolutional attention and its copy head (Allamanis, Peng & Sutton 2016;
// labs/22_conv_copy/README.md).
//
//   lab::conv_copy::grade(lab::conv_copy::ConvCopy{attention, mixture, step});
//   // "lab 22: k of M checks pass"
#pragma once

#include "lab.hpp"

namespace lab {
namespace conv_copy {

using attn::Index;

// The layer's five convolutions (PyTorch's conv1d layout: weight [C_out, C_in, w], bias [C_out]).
struct Kernels {
  Tensor k1_w, k1_b;      // K_1: [k1, D, w1], [k1]        E -> L_1 (then relu)
  Tensor k2_w, k2_b;      // K_2: [H, k1, w2], [H]         L_1 -> the features that h_t gates
  Tensor att_w, att_b;    // K_att: [1, H, w3], [1]        the attention's score of each position
  Tensor copy_w, copy_b;  // K_copy: [1, H, w3], [1]       the copy weights' score
  Tensor gate_w, gate_b;  // K_lambda: [1, H, w3], [1]     the copy gate's score
};

struct Attention {
  Tensor weights;       // a_t      [B, T, S]  softmax over each row's real positions
  Tensor context;       // n_t      [B, T, D]  sum_j a_tj E_j
  Tensor copy_weights;  // kappa_t  [B, T, S]  softmax over each row's real positions
  Tensor copy_gate;     // lambda_t [B, T, 1]  max over the real positions of sigmoid(score): generate
};

struct Step {
  Tensor h;             // h_t [B, H], the decoder state after reading y_{t-1}
  Attention attention;  // the attention of this step (T = 1), gated by that h_t
};

// The decoder's cell, h_t = cell(y_{t-1}, h_{t-1}) (chapter 12's GRUCell): y [B, D_y], h [B, H] -> [B, H].
using Cell = std::function<Tensor(const Tensor& y, const Tensor& h)>;

struct ConvCopy {
  // E [B, S, D] (the source embeddings), lengths (row b's real positions are 0 .. lengths[b]-1), h [B, T, H]
  // (T decoder states) -> a, n, kappa, lambda, as nn::ConvolutionalAttention (copy = true) computes them.
  std::function<Attention(const Tensor& E, const std::vector<std::size_t>& lengths, const Tensor& h,
                          const Kernels& k)>
      attention;
  // p_gen [B, T, V] (probabilities), kappa [B, T, S], lambda [B, T, 1], copy_ids [B, S] (each position's id in
  // the extended vocabulary 0 .. extended_vocab-1; ids >= V are the batch's source-only words) -> p [B, T, ext],
  // p(y) = lambda p_gen(y) + (1 - lambda) sum_{j: copy_ids_j = y} kappa_j, as nn::copy_mixture.
  std::function<Tensor(const Tensor& p_gen, const Tensor& kappa, const Tensor& lambda, const Index& copy_ids,
                       std::size_t extended_vocab)>
      mixture;
  // One decoder step: y_prev [B, D_y] (the previous target word's embedding), h_prev [B, H] -> the new state
  // and the attention it gates.
  std::function<Step(const Tensor& E, const std::vector<std::size_t>& lengths, const Tensor& y_prev,
                      const Tensor& h_prev, const Cell& cell, const Kernels& k)>
      step;
};

// Runs every check on the learner's functions, printing each to `os`.
Result grade(const ConvCopy& c, std::ostream& os = std::cout);

}  // namespace conv_copy
}  // namespace lab
