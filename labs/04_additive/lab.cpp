// Lab 4: Bahdanau's additive attention over padded encoder states.
// What to write: labs/04_additive/README.md. Check it: tools/lab.sh 4 (your copy is labs/work/04_additive.cpp).
#include "labs/grader/lab04_additive.hpp"

using attn::Mask;
using attn::Tensor;

// ---- your code ----
// s [B, Hd], h [B, T, He], W [A, Hd], U [A, He], v [A], mask [B, T] (true = padded)
// -> {weights [B, T], context [B, He]}.
// Tools: attn::linear(x, w) (x w^T), attn::unsqueeze, attn::tanh, attn::matmul,
// attn::masked_fill(t, mask, value), attn::softmax(t, -1), attn::squeeze.
std::pair<Tensor, Tensor> additive_attention(const Tensor& s, const Tensor& h, const Tensor& W, const Tensor& U,
                                             const Tensor& v, const Mask& mask) {
  lab::not_implemented("additive_attention");
}
// ---- end of your code ----

#ifndef LAB_NO_MAIN
int main() {
  lab::additive::Additive mine{additive_attention};
  return lab::additive::grade(mine).exit_code();
}
#endif
