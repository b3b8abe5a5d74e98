// Captioning grids with a trained GridCaptioner (chapter 4).
//
//   std::vector<Hypothesis> caps = greedy_caption(model, features);  // features [B, 9, D]
//   vocab.decode(caps[0].tokens);               // {"red", "square", "top", "left"}
//   attention_grid(caps[0]);                    // [T, 3, 3]: where the model looked for each word
//
// With hard attention, decoding (eval mode) looks at the single most probable
// cell: the weights of every word are one-hot.
#pragma once

#include "../data/batch.hpp"
#include "decode.hpp"
#include "../models/grid_captioner.hpp"

#include <vector>

namespace attn::models {

// One hypothesis per grid, decoded greedily under no_grad in eval mode (the mode
// is restored). attention["attention"][t] is the [N] weights that made c_t for
// tokens[t] (one-hot for hard attention); attention["alpha"][t] the distribution a_t.
// Only options.max_len and the special ids are used.
std::vector<Hypothesis> greedy_caption(GridCaptioner& model, const Tensor& features, const DecodeOptions& options = {});

// The weights of every generated word as grids: [T, rows, N / rows] (rows = 3: [T, 3, 3]).
Tensor attention_grid(const Hypothesis& hypothesis, std::size_t rows = 3, const std::string& name = "attention");

}  // namespace attn::models
