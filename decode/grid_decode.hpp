// Captioning grids with a trained GridCaptioner (chapter 4), and pictures with a
// trained ShowAttendTell (the CNN's grid under the same decoder).
//
//   std::vector<Hypothesis> caps = greedy_caption(model, features);  // features [B, 9, D]
//   vocab.decode(caps[0].tokens);               // {"red", "square", "top", "left"}
//   attention_grid(caps[0]);                    // [T, 3, 3]: where the model looked for each word
//
//   DecodeOptions options;
//   options.beam_size = 4;
//   options.length_penalty = LengthPenalty::GNMT;            // as decode/decode.hpp's beam_search
//   caps = beam_caption(model, features, options);           // the best caption of each grid
//   caps = beam_caption(sat, images, options);               // ShowAttendTell: images [B, 3, H, W]
//   attention_grid(caps[0], sat.grid_size(H, W)[0]);        // [T, rows, cols]
//
// With hard attention, decoding (eval mode) looks at the single most probable
// cell: the weights of every word are one-hot. With the gate on, attention["gate"][t]
// is beta_t ([1]) of each word.
#pragma once

#include "../data/batch.hpp"
#include "decode.hpp"
#include "../models/grid_captioner.hpp"
#include "../models/show_attend_tell.hpp"

#include <vector>

namespace attn::models {

// One hypothesis per grid, decoded greedily under no_grad in eval mode (the mode
// is restored). attention["attention"][t] is the [N] weights that made c_t for
// tokens[t] (one-hot for hard attention); attention["alpha"][t] the distribution a_t.
// Only options.max_len and the special ids are used.
std::vector<Hypothesis> greedy_caption(GridCaptioner& model, const Tensor& features, const DecodeOptions& options = {});

// Beam search (decode.hpp's beam_search over the captioner's steps): options.beam_size
// prefixes per grid, ranked by length_normalized_score (options.length_penalty, alpha),
// optionally GNMT's coverage penalty over the cells; with options.keep_greedy (the default)
// never below the greedy caption. Every hypothesis carries its words' attention as
// greedy_caption's do, and Hypothesis::beam what the search kept at each step.
std::vector<Hypothesis> beam_caption(GridCaptioner& model, const Tensor& features, const DecodeOptions& options = {});
// Up to options.n_best captions per grid, best first.
std::vector<std::vector<Hypothesis>> beam_caption_n_best(GridCaptioner& model, const Tensor& features,
                                                         const DecodeOptions& options = {});

// The same from images [B, C, H, W]: encoded in eval mode (batch norm's running statistics),
// under no_grad; the model's mode is restored.
std::vector<Hypothesis> greedy_caption(ShowAttendTell& model, const Tensor& images, const DecodeOptions& options = {});
std::vector<Hypothesis> beam_caption(ShowAttendTell& model, const Tensor& images, const DecodeOptions& options = {});

// The weights of every generated word as grids: [T, rows, N / rows] (rows = 3: [T, 3, 3]).
Tensor attention_grid(const Hypothesis& hypothesis, std::size_t rows = 3, const std::string& name = "attention");

}  // namespace attn::models
