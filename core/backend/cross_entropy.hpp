// The fused cross-entropy (cross_entropy.cpp), for nn::cross_entropy's fused path.
// Declared here rather than in core/kernels.hpp only so that adding it did not
// change a header that every file of the library and the tests includes.
#pragma once

#include "../tensor.hpp"

#include <cstdint>

namespace attn::fused {
// -sum_c q_c log softmax(logits)_c for every row of logits [..., C]: [...]; q puts
// 1 - s on the row's target (targets: one per row, in range or ignore_index) and
// s / C on every class, and is 0 where the target is ignore_index (nn::cross_entropy).
Tensor cross_entropy(const Tensor& logits, const std::int64_t* targets, long ignore_index, double label_smoothing);
}  // namespace attn::fused
