// Lab 6's worked solution (the library's fused ops: core/backend/heads.cpp, one copy each).
#pragma once

#include "labs/grader/lab06_heads.hpp"

namespace lab {
namespace solutions {
namespace heads {

using attn::Tensor;

inline long as_long(std::size_t n) { return static_cast<long>(n); }

inline Tensor split_heads(const Tensor& x, std::size_t num_heads) {
  Tensor y = attn::reshape(x, {as_long(x.size(0)), as_long(x.size(1)), as_long(num_heads), -1});  // [B, T, H, d]
  return attn::transpose(y, 1, 2);                                                              // [B, H, T, d]
}

inline Tensor merge_heads(const Tensor& x) {
  Tensor y = attn::transpose(x, 1, 2);                                           // [B, T, H, d]
  return attn::reshape(y, {as_long(x.size(0)), as_long(x.size(2)), -1});         // [B, T, H * d]
}

inline lab::heads::Heads solution() { return {split_heads, merge_heads}; }

}  // namespace heads
}  // namespace solutions
}  // namespace lab
