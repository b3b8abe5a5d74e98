#include "checks.hpp"

#include <string>

namespace attn::models {

namespace {

Shape shape_of(const Index& ids) { return Shape(ids.shape().begin(), ids.shape().end()); }

}  // namespace

void check_source(const char* op, const Index& src, const std::vector<std::size_t>& src_lengths) {
  const Shape shape = shape_of(src);
  if (shape.size() != 2 || shape[0] == 0 || shape[1] == 0)
    throw ShapeError(std::string(op) + ": expected src [B, S] with B, S > 0, got " + shape_str(shape));
  if (src_lengths.size() != shape[0])
    throw ShapeError(std::string(op) + ": expected " + std::to_string(shape[0]) + " source lengths for src " +
                     shape_str(shape) + ", got " + std::to_string(src_lengths.size()));
  for (std::size_t len : src_lengths)
    if (len < 1 || len > shape[1])
      throw ValueError(std::string(op) + ": source length " + std::to_string(len) + " is not in 1.." +
                       std::to_string(shape[1]));
}

void check_source_target(const char* op, const Index& src, const std::vector<std::size_t>& src_lengths,
                         const Index& tgt_in) {
  check_source(op, src, src_lengths);
  const Shape shape = shape_of(tgt_in);
  if (shape.size() != 2 || shape[0] != src.shape()[0] || shape[1] == 0)
    throw ShapeError(std::string(op) + ": expected tgt_in [" + std::to_string(src.shape()[0]) +
                     ", T] with T > 0 for src " + shape_str(shape_of(src)) + ", got " + shape_str(shape));
}

Index last_tokens(const char* op, const Index& prefix, std::size_t batch) {
  const Shape shape = shape_of(prefix);
  if (shape.size() != 2 || shape[0] != batch || shape[1] == 0)
    throw ShapeError(std::string(op) + ": expected a prefix [" + std::to_string(batch) + ", t] with t >= 1, got " +
                     shape_str(shape));
  Index last = Index::from_shape({batch, 1});  // [B, 1]
  for (std::size_t b = 0; b < batch; ++b) last(b, 0) = prefix(b, shape[1] - 1);
  return last;
}

Index lengths_index(const std::vector<std::size_t>& lengths) {
  Index out = Index::from_shape({lengths.size()});  // [B]
  for (std::size_t b = 0; b < lengths.size(); ++b) out(b) = static_cast<std::int64_t>(lengths[b]);
  return out;
}

}  // namespace attn::models
