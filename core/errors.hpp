// The exceptions attn throws. Every message starts with the op's name and
// says what was expected and what was given, e.g.
//   "matmul: expected a.shape[-1] == b.shape[-2], got a [2, 3] and b [4, 5]"
#pragma once

#include "config.hpp"

#include <stdexcept>
#include <string>

namespace attn {

// Base of every attn error, so `catch (const attn::Error&)` catches them all.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Wrong shapes, or a dim out of range.
struct ShapeError : Error {
  using Error::Error;
};

// Misuse of the autograd graph: backward twice through a freed graph,
// backward on a non-scalar without a gradient, ...
struct GraphError : Error {
  using Error::Error;
};

// A bad argument value: a negative probability, mixed dtypes, an index out of range.
struct ValueError : Error {
  using Error::Error;
};

// A file that is missing, truncated, corrupted or of the wrong kind.
struct IOError : Error {
  using Error::Error;
};

// "[2, 3]": how every message prints a shape.
std::string shape_str(const Shape& shape);

// Turns a possibly negative dim into 0..ndim-1, or throws a ShapeError naming `op`.
std::size_t normalize_dim(long dim, std::size_t ndim, const char* op);

}  // namespace attn
