// A document's attention as its own text: one line per sentence, a bar for the sentence's
// weight on the left, each word on a background as strong as its weight (the picture of Yang et
// al. 2016's figures 5 and 6).
//
//   std::string svg = attn::viz::attention_text_svg(sentences, sentence_weights, word_weights);
//   // sentences: the words of each sentence; sentence_weights [S]; word_weights [S, W], W >= the longest
//   xcpp::display(attn::viz::Svg{svg});
//
// As in the paper, a word's shade is sqrt(p_s) p_w, its weight within its sentence scaled by the
// square root of the sentence's weight, over the largest such value of the document: the words
// that stand out are the important words of important sentences. The exact weights p_w show on
// hover (SVG <title>).
// Sentences wider than max_width pixels wrap onto more lines.
#pragma once

#include "../core/config.hpp"

#include <string>
#include <vector>

namespace attn::viz {

struct AttentionTextOptions {
  std::string title;
  int max_width = 760;      // pixels; longer sentences wrap
  bool show_weights = true; // print each sentence's weight after its bar
};

// ShapeError naming the function unless sentence_weights is [S] and word_weights [S, W] with
// S = sentences.size() and W at least the longest sentence.
std::string attention_text_svg(const std::vector<std::vector<std::string>>& sentences,
                               const xt::xarray<double>& sentence_weights, const xt::xarray<double>& word_weights,
                               const AttentionTextOptions& options = {});

}  // namespace attn::viz
