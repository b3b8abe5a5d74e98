// Input checks and small helpers that the decoders and every chapter model share.
#pragma once

#include "../core/tensor.hpp"

#include <vector>

namespace attn::models {

// Throws unless src is [B, S] (B, S > 0) with B lengths, each in 1..S.
// `op` names the caller in the message.
void check_source(const char* op, const Index& src, const std::vector<std::size_t>& src_lengths);

// check_source, and tgt_in [B, T] with the same B and T > 0.
void check_source_target(const char* op, const Index& src, const std::vector<std::size_t>& src_lengths,
                         const Index& tgt_in);

// The last column of a decoding prefix [B, t] (t >= 1), as [B, 1]:
// the token y_{t-1} that a recurrent decoder reads next.
Index last_tokens(const char* op, const Index& prefix, std::size_t batch);

// The lengths as an Index [B], the form padding_mask() and LocalAttention take.
Index lengths_index(const std::vector<std::size_t>& lengths);

}  // namespace attn::models
