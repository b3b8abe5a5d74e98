// Masks and the masked softmax (the convention is in masks.hpp).
#include "masks.hpp"

#include "../../core/backend/fused.hpp"
#include "../../core/ops.hpp"

#include <xtensor/xbuilder.hpp>

#include <string>

namespace attn::nn {

namespace {

Shape mask_shape(const Mask& m) { return Shape(m.shape().begin(), m.shape().end()); }

// True if `mask` broadcasts (numpy rules) to `shape` without growing it.
bool broadcasts_to(const Shape& mask, const Shape& shape) {
  if (mask.size() > shape.size()) return false;
  for (std::size_t i = 1; i <= mask.size(); ++i) {
    const std::size_t m = mask[mask.size() - i], s = shape[shape.size() - i];
    if (m != s && m != 1) return false;
  }
  return true;
}

}  // namespace

Mask padding_mask(const Index& lengths, std::size_t max_len) {
  if (lengths.dimension() != 1)
    throw ShapeError("padding_mask: expected lengths of shape [B], got " + shape_str(Shape(lengths.shape().begin(), lengths.shape().end())));
  const std::size_t B = lengths.size();
  Mask mask = xt::zeros<bool>(Shape{B, max_len});  // [B, max_len]
  for (std::size_t b = 0; b < B; ++b) {
    const std::int64_t len = lengths(b);
    if (len < 0 || static_cast<std::size_t>(len) > max_len)
      throw ValueError("padding_mask: lengths must be in [0, " + std::to_string(max_len) + "], got " +
                       std::to_string(len) + " at index " + std::to_string(b));
    for (std::size_t j = static_cast<std::size_t>(len); j < max_len; ++j) mask(b, j) = true;
  }
  return mask;
}

Mask causal_mask(std::size_t T) {
  Mask mask = xt::zeros<bool>(Shape{T, T});  // [T, T]
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t j = i + 1; j < T; ++j) mask(i, j) = true;  // key j lies in query i's future
  return mask;
}

std::optional<Mask> combine_masks(const Shape& scores_shape, const std::optional<Mask>& key_padding_mask,
                                  const std::optional<Mask>& attn_mask, const char* op) {
  const std::string name(op);
  const std::size_t n = scores_shape.size();
  if (n != 3 && n != 4)
    throw ShapeError(name + ": expected scores [B, Tq, Tk] or [B, H, Tq, Tk], got " + shape_str(scores_shape));
  if (!key_padding_mask && !attn_mask) return std::nullopt;
  const std::size_t B = scores_shape[0], H = n == 4 ? scores_shape[1] : 1, Tq = scores_shape[n - 2],
                    Tk = scores_shape[n - 1];
  if (key_padding_mask && mask_shape(*key_padding_mask) != Shape{B, Tk})
    throw ShapeError(name + ": expected key_padding_mask [B, Tk] = " + shape_str({B, Tk}) + ", got " +
                     shape_str(mask_shape(*key_padding_mask)));

  // Where attn_mask's value for score [b, h, i, j] sits: it may be shared by every
  // sequence ([Tq, Tk]), by every head ([B, Tq, Tk]), or given per head.
  enum class Per { All, Sequence, Head } per = Per::All;
  if (attn_mask) {
    const Shape got = mask_shape(*attn_mask);
    if (got == Shape{Tq, Tk}) per = Per::All;
    else if (got == Shape{B, Tq, Tk}) per = Per::Sequence;
    else if (n == 4 && got == scores_shape) per = Per::Head;
    else {
      std::string expected = shape_str({Tq, Tk}) + " or " + shape_str({B, Tq, Tk});
      if (n == 4) expected += " or " + shape_str(scores_shape);
      throw ShapeError(name + ": expected attn_mask " + expected + " for scores " + shape_str(scores_shape) +
                       ", got " + shape_str(got));
    }
  }

  // combined[b, h, i, j] = key_padding_mask[b, j] || attn_mask[(b, (h,)) i, j]. Plain
  // loops: xtensor 0.24 evaluates broadcast bool expressions wrongly (issues #2025, #2040).
  Mask combined = Mask::from_shape(scores_shape);
  bool* out = combined.data();
  const bool* padding = key_padding_mask ? key_padding_mask->data() : nullptr;
  const bool* blocked = attn_mask ? attn_mask->data() : nullptr;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < Tq; ++i) {
        const std::size_t at = per == Per::All ? i : per == Per::Sequence ? b * Tq + i : (b * H + h) * Tq + i;
        for (std::size_t j = 0; j < Tk; ++j)
          *out++ = (padding && padding[b * Tk + j]) || (blocked && blocked[at * Tk + j]);
      }
  return combined;
}

Tensor masked_softmax(const Tensor& scores, const std::optional<Mask>& mask, long dim) {
  if (!scores.defined()) throw ValueError("masked_softmax: scores are undefined");
  normalize_dim(dim, scores.dim(), "masked_softmax");  // a bad dim is named as masked_softmax's
  if (!mask) return softmax(scores, dim);
  if (!broadcasts_to(mask_shape(*mask), scores.shape()))
    throw ShapeError("masked_softmax: mask " + shape_str(mask_shape(*mask)) + " does not broadcast against scores " +
                     shape_str(scores.shape()));
  // Composed from core ops this is
  //   weights = softmax(masked_fill(scores, mask, kBlockedScore), dim)
  // (a blocked score becomes a huge negative number, which exp() makes exactly 0),
  // then masked_fill(weights, mask, 0): a fully blocked row came out uniform, since
  // all its scores were equal, and must be 0. attn::masked_softmax (core/ops/softmax.cpp)
  // does all of it in one op, with one pass and one saved array less;
  // tests/core/test_softmax.cpp checks it against this composed version.
  return attn::masked_softmax(scores, *mask, dim);
}

}  // namespace attn::nn
