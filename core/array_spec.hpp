// What an array must be, for a reader that checks a file before loading it
// (io/npz.hpp) or an optimizer's saved state (nn/optim.hpp): its shape and
// the dtype to load it as.
#pragma once

#include "config.hpp"

namespace attn {

struct ArraySpec {
  Shape shape;
  Dtype dtype = Dtype::Float64;
};

}  // namespace attn
