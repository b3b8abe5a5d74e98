// Attention masks: the ONE convention used by every attention layer of attn.
//
//   A mask is a boolean array (attn::Mask) where `true` means "this key may NOT
//   be attended" and `false` means "allowed" (PyTorch's boolean-mask convention).
//
// The masks an attention layer takes:
//   key_padding_mask [B, Tk]   true at padded keys: the same for every query.
//                              Build it from valid lengths with padding_mask().
//   attn_mask        [Tq, Tk]  true where query i may not see key j, the same for
//                    or [B, Tq, Tk]  every sequence (e.g. causal_mask(T)) or per sequence.
// Both are combined (a key is blocked if either mask blocks it) into one mask
// that broadcasts against the scores [B, Tq, Tk] (or [B, H, Tq, Tk] with heads).
//
// masked_softmax() turns scores into weights that are 0 on blocked keys and sum
// to 1 over the allowed ones. A row whose keys are ALL blocked (an empty
// sequence, or a local window that falls in the padding) gets weights of 0 and
// a context of 0, never NaN. PyTorch gives NaN there; attn does not.
#pragma once

#include "../../core/tensor.hpp"

#include <optional>

namespace attn::nn {

// Key padding from valid lengths: lengths [B] (each in 0..max_len) -> [B, max_len],
// true at positions j >= lengths[b]. E.g. lengths {2, 3}, max_len 3 ->
// {{false, false, true}, {false, false, false}}.
Mask padding_mask(const Index& lengths, std::size_t max_len);

// Look-ahead mask for self-attention over T steps: [T, T], true above the
// diagonal (key j > query i), so step i sees only steps 0..i.
Mask causal_mask(std::size_t T);

// The one mask an attention layer applies to scores of shape `scores_shape`
// ([B, Tq, Tk] or [B, H, Tq, Tk]): key_padding_mask [B, Tk] or-ed with attn_mask
// ([Tq, Tk], [B, Tq, Tk], or with heads also [B, H, Tq, Tk]). Returns a mask of
// exactly `scores_shape`, or nullopt when both are absent. `op` names the caller
// in error messages.
std::optional<Mask> combine_masks(const Shape& scores_shape, const std::optional<Mask>& key_padding_mask,
                                  const std::optional<Mask>& attn_mask, const char* op);

// Softmax over `dim` that ignores blocked entries: weights are 0 where `mask` is
// true, sum to 1 over the rest, and are all 0 on a fully blocked row. `mask`
// broadcasts (numpy rules) against `scores`; no mask is a plain softmax.
// Composed from core ops it is
//   masked_fill(scores, mask, -1e30) -> softmax -> masked_fill(weights, mask, 0);
// it runs as one fused op, attn::masked_softmax, tested against that composition.
Tensor masked_softmax(const Tensor& scores, const std::optional<Mask>& mask, long dim = -1);

// The finite stand-in for -infinity that blocked scores get before the softmax.
// exp(-1e30 - max) is exactly 0, in float32 too, and a fully blocked row stays finite.
inline constexpr double kBlockedScore = -1e30;

}  // namespace attn::nn
