// A trainer's state file (path.trainer.npz) holds float arrays only, so integers are
// stored exactly: counts as float64 (exact below 2^53), the 64-bit words of a random
// generator's state as pairs of 32-bit halves. These are the two encodings and the
// checked reading of such a file, as trainer_checkpoint.cpp writes and reads them, for
// the epoch trainer (epoch_trainer.hpp).
#pragma once

#include "../core/tensor.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attn::models {

Tensor count_tensor(double value);                              // [1]
Tensor words_tensor(const std::vector<std::uint64_t>& words);   // [2 * words]

// The entries of a trainer file, each checked when it is read: an IOError naming the
// file and the entry, "(a damaged or foreign trainer checkpoint)".
struct StateEntries {
  std::string file;
  std::map<std::string, Tensor> state;

  bool has(const std::string& key) const { return state.count(key) > 0; }
  void require(const std::string& key) const;  // "not a trainer checkpoint (no 'key')"
  [[noreturn]] void fail(const std::string& key, const std::string& expected) const;
  double scalar(const std::string& key) const;           // one finite number
  long long whole(const std::string& key, long long min) const;  // whole, >= min, below 2^53
  std::vector<std::uint64_t> words(const std::string& key) const;  // a generator's state
};

}  // namespace attn::models
