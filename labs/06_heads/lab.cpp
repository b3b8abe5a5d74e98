// Lab 6: multi-head attention's split into heads and merge back.
// What to write: labs/06_heads/README.md. Check it: tools/lab.sh 6 (your copy is labs/work/06_heads.cpp).
#include "labs/grader/lab06_heads.hpp"

using attn::Tensor;

// ---- your code ----
// x [B, T, H * d] -> [B, H, T, d]; head h takes features h * d .. h * d + d - 1.
// Tools: attn::reshape(t, {dims}) (one may be -1), attn::transpose(t, 1, 2), x.size(0).
Tensor split_heads(const Tensor& x, std::size_t num_heads) {
  lab::not_implemented("split_heads");
}

// x [B, H, T, d] -> [B, T, H * d].
Tensor merge_heads(const Tensor& x) {
  lab::not_implemented("merge_heads");
}
// ---- end of your code ----

#ifndef LAB_NO_MAIN
int main() {
  lab::heads::Heads mine{split_heads, merge_heads};
  return lab::heads::grade(mine).exit_code();
}
#endif
