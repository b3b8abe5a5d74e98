#include "errors.hpp"

namespace attn {

const char* dtype_name(Dtype dtype) { return dtype == Dtype::Float32 ? "float32" : "float64"; }

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::size_t normalize_dim(long dim, std::size_t ndim, const char* op) {
  const long n = static_cast<long>(ndim);
  if (dim < -n || dim >= n || n == 0)
    throw ShapeError(std::string(op) + ": dim " + std::to_string(dim) + " is out of range for a " +
                     std::to_string(ndim) + "-d tensor (expected -" + std::to_string(n) + " <= dim < " +
                     std::to_string(n) + ")");
  return static_cast<std::size_t>(dim < 0 ? dim + n : dim);
}

}  // namespace attn
