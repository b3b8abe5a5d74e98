// Synthetic sequence tasks whose right answer, and alignment, are known:
//
//   copy     3 1 4 1 5  ->  3 1 4 1 5   alignment 0 1 2 3 4
//   reverse  3 1 4 1 5  ->  5 1 4 1 3   alignment 4 3 2 1 0
//   sort     3 1 4 1 5  ->  1 1 3 4 5   alignment 1 3 0 2 4
//
// alignment[t] is the source position that target token t copies (for sort,
// equal symbols keep their source order). The symbols are the numbers
// "0", "1", ..., vocab_size - 1. Source lengths are drawn uniformly from
// [min_length, max_length], so accuracy can be measured against length.
//
// The date-normalization task (dates.hpp) and the captioned feature grids of
// chapter 4 (grid.hpp) are included here so one header gives every task.
#pragma once

#include "../core/random.hpp"
#include "dates.hpp"
#include "example.hpp"
#include "grid.hpp"
#include "vocab.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace attn::data {

enum class SequenceTask { copy, reverse, sort };

// "copy", "reverse", "sort", and back (ValueError listing the choices if unknown).
const char* task_name(SequenceTask task);
SequenceTask sequence_task_from_name(const std::string& name);

struct SequenceTaskOptions {
  std::size_t vocab_size = 10;  // distinct symbols "0" .. "vocab_size - 1"
  std::size_t min_length = 1;   // of the source
  std::size_t max_length = 10;
};

// The symbols of a task, and a Vocab holding exactly them (after the specials),
// so that symbol "k" has id 4 + k and train and test share one vocabulary.
Tokens task_symbols(std::size_t vocab_size);
Vocab task_vocab(std::size_t vocab_size);

// The gold target and alignment for a given source.
Example copy_example(const Tokens& src);
Example reverse_example(const Tokens& src);
Example sort_example(const Tokens& src);  // ValueError if a token is not a number
Example make_example(SequenceTask task, const Tokens& src);

// n examples with random sources, reproducible from the generator's seed.
std::vector<Example> sequence_task(SequenceTask task, std::size_t n, const SequenceTaskOptions& options,
                                   Generator& gen);
std::vector<Example> copy_task(std::size_t n, const SequenceTaskOptions& options, Generator& gen);
std::vector<Example> reverse_task(std::size_t n, const SequenceTaskOptions& options, Generator& gen);
std::vector<Example> sort_task(std::size_t n, const SequenceTaskOptions& options, Generator& gen);

// Train and test sets that share no source: n_test distinct sources are drawn
// first, then n_train sources that are not among them (train may repeat
// itself). ValueError if there are not enough distinct sources.
Split sequence_split(SequenceTask task, std::size_t n_train, std::size_t n_test,
                     const SequenceTaskOptions& options, Generator& gen);

}  // namespace attn::data
