// flash_attention (fused.hpp) with a sliding window as well (Beltagy et al. 2020): key j is also
// blocked for query i when |i - j| >= window (window 0: none). No mask is made for it, and the
// blocks it blocks whole are skipped, so time grows with T * window instead of T * T.
// nn::flash_attention (nn/attention/flash_attention.hpp) calls it.
#pragma once

#include "fused.hpp"

#include <cstddef>

namespace attn {

Tensor flash_attention(const Tensor& q, const Tensor& k, const Tensor& v, const FlashMasks& masks,
                       std::size_t window, std::size_t block_q, std::size_t block_k);

}  // namespace attn
