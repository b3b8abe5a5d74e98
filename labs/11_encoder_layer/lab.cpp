// Lab 11: a Transformer encoder layer (post-norm, as PyTorch's default).
// What to write: labs/11_encoder_layer/README.md. Check it: tools/lab.sh 11 (your copy is labs/work/11_encoder_layer.cpp).
#include "labs/grader/lab11_encoder_layer.hpp"

using attn::Mask;
using attn::Tensor;
using lab::encoder::Params;

// ---- your code ----
// x [B, T, D], key_padding_mask [B, T] (true = padded) -> [B, T, D]. p.num_heads heads.
// Tools: attn::linear, attn::chunk(t, 3, 2), attn::split_heads / merge_heads (lab 6), attn::matmul,
// attn::transpose, attn::masked_fill, attn::softmax (lab 5), attn::relu, attn::layer_norm(t, {D}, w, b, 1e-5) (lab 2).
// The mask is an xt::xarray<bool>, not a Tensor: Mask blocked = key_padding_mask; blocked.reshape({B, 1, 1, T});
Tensor encoder_layer(const Tensor& x, const Mask& key_padding_mask, const Params& p) {
  lab::not_implemented("encoder_layer");
}
// ---- end of your code ----

#ifndef LAB_NO_MAIN
int main() {
  lab::encoder::EncoderLayer mine{encoder_layer};
  return lab::encoder::grade(mine).exit_code();
}
#endif
