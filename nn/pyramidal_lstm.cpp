#include "pyramidal_lstm.hpp"

#include "../core/errors.hpp"
#include "../core/ops.hpp"

namespace attn::nn {

Tensor pair_steps(const Tensor& x) {
  if (x.dim() != 3) throw ShapeError("pair_steps: expected x [B, T, F], got shape " + shape_str(x.shape()));
  const std::size_t B = x.size(0), T = x.size(1), F = x.size(2);
  Tensor even = x;
  if (T % 2 == 1) even = concat({x, zeros({B, 1, F}, x.dtype())}, 1);  // [B, T + 1, F]: one silent step
  // Rows are contiguous, so steps 2i and 2i+1 side by side are one row of 2F values.
  return reshape(even, {static_cast<long>(B), static_cast<long>((T + 1) / 2), static_cast<long>(2 * F)});  // [B, T/2, 2F]
}

std::vector<std::size_t> halve_lengths(const std::vector<std::size_t>& lengths) {
  std::vector<std::size_t> half;
  half.reserve(lengths.size());
  for (std::size_t n : lengths) half.push_back((n + 1) / 2);
  return half;
}

PyramidalLSTM::PyramidalLSTM(std::size_t input_size_, std::size_t hidden_size_)
    : Module("PyramidalLSTM"),
      input_size(input_size_),
      hidden_size(hidden_size_),
      lstm(2 * input_size_, hidden_size_, batch_first(/*bidirectional=*/true)) {
  if (input_size == 0 || hidden_size == 0)
    throw ValueError("PyramidalLSTM: input_size and hidden_size must be positive, got " + std::to_string(input_size) +
                     " and " + std::to_string(hidden_size));
  register_module("lstm", lstm);
}

std::string PyramidalLSTM::extra_repr() const {
  return std::to_string(input_size) + ", " + std::to_string(hidden_size);
}

PyramidalOutput PyramidalLSTM::forward(const Tensor& x, const std::vector<std::size_t>& lengths) const {
  if (x.dim() != 3 || x.size(2) != input_size)
    throw ShapeError("PyramidalLSTM: expected x [B, T, " + std::to_string(input_size) + "], got shape " +
                     shape_str(x.shape()));
  const std::size_t B = x.size(0), T = x.size(1);
  if (T == 0) throw ShapeError("PyramidalLSTM: x has no steps (shape " + shape_str(x.shape()) + ")");
  std::vector<std::size_t> full = lengths.empty() ? std::vector<std::size_t>(B, T) : lengths;
  if (full.size() != B)
    throw ValueError("PyramidalLSTM: " + std::to_string(B) + " sequences but " + std::to_string(full.size()) +
                     " lengths");
  bool padded = false;
  for (std::size_t b = 0; b < B; ++b) {
    if (full[b] < 1 || full[b] > T)
      throw ValueError("PyramidalLSTM: every length must be in 1..T (T = " + std::to_string(T) + "), got lengths[" +
                       std::to_string(b) + "] = " + std::to_string(full[b]));
    padded = padded || full[b] < T;
  }
  Tensor input = x;
  if (padded) {  // zero the padding, so that an odd length pairs its last step with zeros, not with padding
    Mask pad = Mask::from_shape({B, T, 1});  // [B, T, 1], broadcast over features
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t t = 0; t < T; ++t) pad(b, t, 0) = t >= full[b];
    input = masked_fill(x, pad, 0.0);
  }
  PyramidalOutput r;
  r.lengths = halve_lengths(full);
  r.output = lstm(pair_steps(input), {}, r.lengths).output;  // [B, T/2, 2F] -> [B, T/2, 2H]
  return r;
}

}  // namespace attn::nn
