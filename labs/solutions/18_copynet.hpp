// Lab 18's worked solution (models/copynet.cpp computes the same, in log space, at every decoding step).
#pragma once

#include "labs/grader/lab18_copynet.hpp"

namespace lab {
namespace solutions {
namespace copynet {

using attn::Index;
using attn::Tensor;

inline Tensor joint(const Tensor& psi_g, const Tensor& psi_c, const Index& copy_ids,
                    const std::vector<std::size_t>& lengths, std::size_t E) {
  const std::size_t B = psi_g.size(0), V = psi_g.size(-1), S = psi_c.size(-1);
  // Padding is never copied: its copy scores blocked before the softmax, so it takes no weight.
  attn::Mask padding = xt::zeros<bool>({B, S});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t j = lengths[b]; j < S; ++j) padding(b, j) = true;
  // ONE softmax over the generate and the copy slots: they share the normaliser Z.
  Tensor w = attn::softmax(attn::concat({psi_g, attn::masked_fill(psi_c, padding, -1e30)}, -1), -1);  // [B, V + S]
  Tensor p_g = attn::narrow(w, -1, 0, V), p_c = attn::narrow(w, -1, V, S);
  // The generate mode covers the vocabulary only: 0 for the source-only ids V .. E-1.
  if (E > V) p_g = attn::concat({p_g, attn::zeros({B, E - V})}, -1);  // [B, E]
  // Each position's copy weight added to its word (a word held twice gets both; one in the vocabulary
  // gets its generate weight too): [B, 1, S] x [B, S, E].
  Tensor copied = attn::squeeze(attn::matmul(attn::unsqueeze(p_c, 1), attn::one_hot(copy_ids, E)), 1);
  return p_g + copied;
}

inline lab::copynet::CopyNet solution() { return {joint}; }

}  // namespace copynet
}  // namespace solutions
}  // namespace lab
