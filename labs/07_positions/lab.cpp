// Lab 7: the Transformer's sinusoidal positional encoding.
// What to write: labs/07_positions/README.md. Check it: tools/lab.sh 7 (your copy is labs/work/07_positions.cpp).
#include "labs/grader/lab07_positions.hpp"

using attn::Tensor;

// ---- your code ----
// [T, d_model]: PE(pos, 2i) = sin(pos / 10000^(2i / d_model)), PE(pos, 2i + 1) = cos(pos / 10000^(2i / d_model)).
// d_model may be odd (the grader tries odd sizes): its last dim, 2i = d_model - 1, is a sine with no cosine.
// Tools: xt::xarray<double> a = xt::zeros<double>({T, d_model}); a(pos, j) = ...; return Tensor(a);
// std::sin, std::cos, std::pow.
Tensor encoding(std::size_t T, std::size_t d_model) {
  lab::not_implemented("encoding");
}

// x [B, T, d_model] -> x + encoding(T, d_model).
Tensor add_positions(const Tensor& x) {
  lab::not_implemented("add_positions");
}
// ---- end of your code ----

#ifndef LAB_NO_MAIN
int main() {
  lab::positions::Positions mine{encoding, add_positions};
  return lab::positions::grade(mine).exit_code();
}
#endif
