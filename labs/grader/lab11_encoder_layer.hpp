// Lab 11's grader: a Transformer encoder layer, post-norm as PyTorch's default
// (labs/11_encoder_layer/README.md).
//
//   lab::encoder::grade(lab::encoder::EncoderLayer{encoder_layer});  // "lab 11: k of M checks pass"
#pragma once

#include "lab.hpp"

namespace lab {
namespace encoder {

// The layer's parameters, with nn.TransformerEncoderLayer's names and shapes (D model, F feed-forward).
struct Params {
  Tensor in_proj_weight;   // [3D, D]: the query, key and value projections stacked
  Tensor in_proj_bias;     // [3D]
  Tensor out_proj_weight;  // [D, D]
  Tensor out_proj_bias;    // [D]
  Tensor linear1_weight;   // [F, D]
  Tensor linear1_bias;     // [F]
  Tensor linear2_weight;   // [D, F]
  Tensor linear2_bias;     // [D]
  Tensor norm1_weight, norm1_bias, norm2_weight, norm2_bias;  // [D] each
  std::size_t num_heads = 1;
};

struct EncoderLayer {
  // x [B, T, D], key_padding_mask [B, T] (true = padded key) -> [B, T, D]:
  // x = norm1(x + self_attention(x)); x = norm2(x + linear2(relu(linear1(x)))), layer norms with eps 1e-5.
  std::function<Tensor(const Tensor& x, const attn::Mask& key_padding_mask, const Params& p)> layer;
};

// Runs every check on the learner's function, printing each to `os`.
Result grade(const EncoderLayer& e, std::ostream& os = std::cout);

}  // namespace encoder
}  // namespace lab
