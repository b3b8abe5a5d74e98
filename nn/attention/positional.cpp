#include "positional.hpp"

#include "../../core/ops.hpp"

#include <cmath>
#include <string>

namespace attn::nn {

namespace {

// x must be [B, T, d_model] with offset + T <= max_len.
void check_input(const char* op, const Tensor& x, std::size_t offset, std::size_t d_model, std::size_t max_len) {
  if (!x.defined()) throw ValueError(std::string(op) + ": the input is undefined");
  if (x.dim() != 3 || x.size(-1) != d_model)
    throw ShapeError(std::string(op) + ": expected x [B, T, " + std::to_string(d_model) + "], got " +
                     shape_str(x.shape()));
  if (offset + x.size(1) > max_len)
    throw ShapeError(std::string(op) + ": " +
                     (offset ? "offset " + std::to_string(offset) + " + sequence length " + std::to_string(x.size(1)) +
                                   " = " + std::to_string(offset + x.size(1))
                             : "sequence length " + std::to_string(x.size(1))) +
                     " exceeds max_len " + std::to_string(max_len));
}

}  // namespace

SinusoidalPositionalEncoding::SinusoidalPositionalEncoding(std::size_t d_model, std::size_t max_len)
    : Module("SinusoidalPositionalEncoding"), d_model(d_model), max_len(max_len) {
  if (d_model == 0 || max_len == 0) throw ValueError("SinusoidalPositionalEncoding: d_model and max_len must be positive");
  xt::xarray<double> table = xt::zeros<double>({max_len, d_model});  // [max_len, d_model]
  for (std::size_t pos = 0; pos < max_len; ++pos)
    for (std::size_t i = 0; 2 * i < d_model; ++i) {
      // the pair (2i, 2i+1) turns at frequency 1 / 10000^(2i / d_model)
      const double angle = static_cast<double>(pos) / std::pow(10000.0, static_cast<double>(2 * i) / d_model);
      table(pos, 2 * i) = std::sin(angle);
      if (2 * i + 1 < d_model) table(pos, 2 * i + 1) = std::cos(angle);
    }
  pe = Tensor(std::move(table));
  register_buffer("pe", pe);
}

Tensor SinusoidalPositionalEncoding::encoding(std::size_t T, std::size_t offset) const {
  if (offset + T > max_len)
    throw ShapeError("SinusoidalPositionalEncoding: positions up to " + std::to_string(offset + T) +
                     " exceed max_len " + std::to_string(max_len));
  return narrow(pe, 0, offset, T);  // [T, d_model]
}

Tensor SinusoidalPositionalEncoding::forward(const Tensor& x, std::size_t offset) const {
  check_input("SinusoidalPositionalEncoding", x, offset, d_model, max_len);
  return x + encoding(x.size(1), offset);  // [B, T, D] + [T, D] broadcasts over the batch
}

std::string SinusoidalPositionalEncoding::extra_repr() const {
  return "d_model=" + std::to_string(d_model) + ", max_len=" + std::to_string(max_len);
}

LearnedPositionalEncoding::LearnedPositionalEncoding(std::size_t max_len, std::size_t d_model, Generator& gen)
    : Module("LearnedPositionalEncoding"), max_len(max_len), d_model(d_model),
      embedding(max_len, d_model, std::nullopt, gen) {
  register_module("embedding", embedding);
}

Tensor LearnedPositionalEncoding::encoding(std::size_t T, std::size_t offset) const {
  if (offset + T > max_len)
    throw ShapeError("LearnedPositionalEncoding: positions up to " + std::to_string(offset + T) +
                     " exceed max_len " + std::to_string(max_len));
  const auto first = static_cast<std::int64_t>(offset);
  Index positions = xt::arange<std::int64_t>(first, first + static_cast<std::int64_t>(T));  // [T]: offset, ...
  return embedding(positions);                                                             // [T, d_model]
}

Tensor LearnedPositionalEncoding::forward(const Tensor& x, std::size_t offset) const {
  check_input("LearnedPositionalEncoding", x, offset, d_model, max_len);
  return x + encoding(x.size(1), offset);  // [B, T, D] + [T, D] broadcasts over the batch
}

std::string LearnedPositionalEncoding::extra_repr() const {
  return "max_len=" + std::to_string(max_len) + ", d_model=" + std::to_string(d_model);
}

}  // namespace attn::nn
