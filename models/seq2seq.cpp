#include "seq2seq.hpp"

#include "../core/ops.hpp"

namespace attn::models {

void DecoderState::select_rows(const Index& rows) {
  for (auto& [name, t] : tensors) t = index_select(t, 0, rows);
  for (auto& [name, t] : attention) t = index_select(t, 0, rows);
  std::vector<std::size_t> lengths;
  for (std::int64_t r : rows) {
    if (r < 0 || static_cast<std::size_t>(r) >= src_lengths.size())
      throw ValueError("DecoderState::select_rows: row " + std::to_string(r) + " is out of range for " +
                       std::to_string(src_lengths.size()) + " rows");
    lengths.push_back(src_lengths[static_cast<std::size_t>(r)]);
  }
  src_lengths = std::move(lengths);
}

}  // namespace attn::models
