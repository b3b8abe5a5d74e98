// Text from a language model (models/language_model.hpp), one token at a time: each step reads the
// prompt and what was written so far (its last `context` tokens), takes the model's distribution of the
// next token, and writes the most likely one (temperature 0) or one drawn from it, sharpened or flattened
// by the temperature and cut to the top_k most likely (0: all), as PyTorch's word_language_model example
// and GPT-2's samplers do.
//
//   GenerateOptions o;
//   o.max_tokens = 50;
//   o.temperature = 0.8;
//   Generator gen(1);
//   Generated g = generate(*lm, vocab.encode(prompt), o, gen);   // g.ids, g.log_probs
//
// The text read always begins with <eos>, as if a line ended before it: a prompt begins a line, and in
// training a line's first word follows the <eos> of the line before. <pad> and <bos> are never written;
// <eos> is (a new line).
#pragma once

#include "../core/random.hpp"
#include "../models/language_model.hpp"

#include <cstdint>
#include <vector>

namespace attn::models {

struct GenerateOptions {
  std::size_t max_tokens = 100;  // tokens to write
  double temperature = 1.0;      // 0: greedy (the most likely token)
  std::size_t top_k = 0;         // draw from the k most likely tokens only (0: all)
  std::size_t context = 0;       // read at most this many tokens (0: all; capped by the model's max_length)
};

struct Generated {
  std::vector<std::int64_t> ids;  // the tokens written
  std::vector<double> log_probs;  // log p of each under the model (before temperature and top_k)
};

// ValueError for a negative or non-finite temperature, or a prompt id outside the model's vocabulary.
Generated generate(LanguageModel& model, const std::vector<std::int64_t>& prompt, const GenerateOptions& options,
                   Generator& gen);

}  // namespace attn::models
