// One training example of a sequence-to-sequence task: a source sentence, a
// target sentence, and (for synthetic tasks) the gold alignment.
//
//   src       = {"3", "1", "2"}          (reverse task)
//   tgt       = {"2", "1", "3"}
//   alignment = {2, 1, 0}               tgt[t] comes from src[alignment[t]]
//
// alignment[t] is -1 where target token t has no source position (a dash in
// an ISO date, say), and the vector is empty when the task has no gold
// alignment at all (a real corpus).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attn::data {

// A sentence as a list of tokens (words or characters).
using Tokens = std::vector<std::string>;

struct Example {
  Tokens src;
  Tokens tgt;
  std::vector<std::int64_t> alignment;  // one per tgt token, or empty
};

// A train/test split whose two sides never share an example.
struct Split {
  std::vector<Example> train;
  std::vector<Example> test;
};

// The source (or target) sides of a list of examples, e.g. to build a Vocab.
inline std::vector<Tokens> sources(const std::vector<Example>& examples) {
  std::vector<Tokens> out;
  for (const auto& e : examples) out.push_back(e.src);
  return out;
}
inline std::vector<Tokens> targets(const std::vector<Example>& examples) {
  std::vector<Tokens> out;
  for (const auto& e : examples) out.push_back(e.tgt);
  return out;
}

}  // namespace attn::data
