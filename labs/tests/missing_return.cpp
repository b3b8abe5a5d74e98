// A learner's file with two forgotten returns (labs/tests/missing_return.sh compiles it and
// expects both to be errors, raised by labs/grader/lab.hpp's pragma, not warnings).
#include "labs/grader/lab05_sdpa.hpp"

using attn::Mask;
using attn::Tensor;

// no return at all: the stub's not_implemented line replaced, the return forgotten
Mask causal_mask(std::size_t T) {
  Mask m = Mask::from_shape({T, T});
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t j = 0; j < T; ++j) m(i, j) = j > i;
}

// a path that ends without one
Tensor pick(const Tensor& a, bool first) {
  if (first) return a;
}
