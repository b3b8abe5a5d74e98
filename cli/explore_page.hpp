// `attn heatmap --html FILE`: the attention explorer of one input (viz/explorer.hpp) as a whole
// HTML page, script and style inline, nothing fetched.
//
//   attn heatmap --checkpoint runs/tf "Cannot open file." --html tf.html [--beam 4]
//
// A translation model (any Seq2Seq) decodes the input (greedily, or by beam search), then runs
// forward() once more on the source with that output as its teacher-forced input, so the head and
// model views get every layer and head (viz::explore); the decoding view shows the output step by
// step (viz::explore_decoding): the token written, the attention row that chose it, beam search's
// kept prefixes, a copy gate (conv-copy), the expected alignment position (monotonic).
// Multi-source: every source's attention and each source's share; the steps weigh the first source.
// Listen, Attend and Spell: its attention over the listener states, and its decoding steps.
// With a run trained with --bpe and `merge`, the head and model views are on words (cli/bpe.hpp's
// merge) and the steps' rows over the source words; a step stays one subword piece, as decoded.
#pragma once

#include "run_dir.hpp"

#include <string>

namespace attn::cli {

// The page, a `<!DOCTYPE html>` document. ValueError naming --html and the model when the
// run is not a translation model or las, or has no attention.
std::string explorer_page(Run& run, const std::string& text, const models::DecodeOptions& options, bool merge);

}  // namespace attn::cli
