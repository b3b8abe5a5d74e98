#include "alignment_loss.hpp"

#include "../../core/errors.hpp"
#include "../../core/ops.hpp"

#include <algorithm>
#include <string>

namespace attn::nn {

Tensor supervised_attention_loss(const Tensor& attention, const Index& alignment) {
  const std::string shapes = shape_str(attention.shape()) + " and " +
                             shape_str(Shape(alignment.shape().begin(), alignment.shape().end()));
  if (alignment.size() == 0)
    throw ShapeError("supervised_attention_loss: the alignment is empty (" + shapes + "): the examples have no gold alignment");
  if (attention.dim() != 3 || alignment.dimension() != 2 || alignment.shape()[0] != attention.size(0) ||
      alignment.shape()[1] != attention.size(1))
    throw ShapeError("supervised_attention_loss: expected attention [B, T, S] and alignment [B, T], got " + shapes);
  const std::size_t B = attention.size(0), T = attention.size(1), S = attention.size(2);
  xt::xarray<double> gold = xt::zeros<double>({B, T, S});  // one-hot rows of the steps that have a gold position
  std::size_t n = 0;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < T; ++t) {
      const std::int64_t g = alignment(b, t);
      if (g < 0) continue;
      if (std::size_t(g) >= S)
        throw ValueError("supervised_attention_loss: gold position " + std::to_string(g) + " of row " + std::to_string(b) +
                         ", step " + std::to_string(t) + " is outside the " + std::to_string(S) + " source positions");
      gold(b, t, std::size_t(g)) = 1.0;
      ++n;
    }
  if (n == 0) return zeros({}, attention.dtype());
  Tensor G = tensor(gold, false, attention.dtype());  // [B, T, S]
  // log(a G + (1 - G)): log a_{t,g_t} on the gold entries, log 1 = 0 elsewhere, so the zeros of padding
  // never reach log; 1e-30 on the gold entries keeps a weight of exactly 0 finite.
  return -sum(log(attention * G + (1.0 - G) + 1e-30 * G)) / double(n);
}

Tensor agreement_loss(const Tensor& forward, const Tensor& backward, const std::vector<std::size_t>& src_lengths,
                      const std::vector<std::size_t>& tgt_lengths) {
  const auto shapes = [&] { return shape_str(forward.shape()) + " and " + shape_str(backward.shape()); };
  if (forward.dim() != 3 || backward.dim() != 3 || forward.size(0) != backward.size(0) ||
      src_lengths.size() != forward.size(0) || tgt_lengths.size() != forward.size(0))
    throw ShapeError("agreement_loss: expected forward [B, T, S], backward [B, T2, S2] and B lengths of each side, got " +
                     shapes() + " with " + std::to_string(src_lengths.size()) + " and " +
                     std::to_string(tgt_lengths.size()) + " lengths");
  const std::size_t B = forward.size(0);
  if (B == 0) return zeros({}, forward.dtype());
  const std::size_t X = *std::max_element(src_lengths.begin(), src_lengths.end());  // longest x
  const std::size_t Y = *std::max_element(tgt_lengths.begin(), tgt_lengths.end());  // longest y
  if (forward.size(1) < Y || forward.size(2) < X || backward.size(1) < X || backward.size(2) < Y)
    throw ShapeError("agreement_loss: the x -> y weights need at least [B, " + std::to_string(Y) + ", " + std::to_string(X) +
                     "] and the y -> x weights [B, " + std::to_string(X) + ", " + std::to_string(Y) +
                     "] for these lengths, got " + shapes());
  xt::xarray<double> valid = xt::zeros<double>({B, Y, X});  // t < |y_b| and j < |x_b|
  double tokens = 0;
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t t = 0; t < tgt_lengths[b]; ++t)
      for (std::size_t j = 0; j < src_lengths[b]; ++j) valid(b, t, j) = 1.0;
    tokens += double(tgt_lengths[b]);
  }
  if (tokens == 0) return zeros({}, forward.dtype());
  Tensor f = narrow(narrow(forward, 1, 0, Y), 2, 0, X);                       // a^{x->y}_{t,j}: [B, Y, X]
  Tensor g = transpose(narrow(narrow(backward, 1, 0, X), 2, 0, Y), 1, 2);     // a^{y->x}_{j,t}: [B, X, Y] -> [B, Y, X]
  return -sum(f * g * tensor(valid, false, forward.dtype())) / tokens;
}

}  // namespace attn::nn
