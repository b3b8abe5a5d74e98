#include "document_classifier.hpp"

#include "../core/errors.hpp"

#include <string>

namespace attn::models {

void check_documents(const char* op, const Index& words, const std::vector<std::size_t>& sentence_counts,
                     const std::vector<std::size_t>& word_counts) {
  const std::string name(op);
  if (words.dimension() != 3)
    throw ShapeError(name + ": expected words [B, S, W], got shape " +
                     shape_str(Shape(words.shape().begin(), words.shape().end())));
  const std::size_t B = words.shape()[0], S = words.shape()[1], W = words.shape()[2];
  if (B == 0 || S == 0 || W == 0)
    throw ShapeError(name + ": words " + shape_str(Shape(words.shape().begin(), words.shape().end())) +
                     " has an empty dimension");
  if (sentence_counts.size() != B)
    throw ShapeError(name + ": " + std::to_string(sentence_counts.size()) + " sentence counts for " +
                     std::to_string(B) + " documents");
  if (word_counts.size() != B * S)
    throw ShapeError(name + ": " + std::to_string(word_counts.size()) + " word counts for B * S = " +
                     std::to_string(B * S) + " sentences");
  for (std::size_t b = 0; b < B; ++b) {
    if (sentence_counts[b] < 1 || sentence_counts[b] > S)
      throw ValueError(name + ": document " + std::to_string(b) + " has " + std::to_string(sentence_counts[b]) +
                       " sentences, expected 1.." + std::to_string(S));
    for (std::size_t s = 0; s < S; ++s) {
      const std::size_t n = word_counts[b * S + s];
      const bool exists = s < sentence_counts[b];
      if (exists && (n < 1 || n > W))
        throw ValueError(name + ": sentence " + std::to_string(s) + " of document " + std::to_string(b) + " has " +
                         std::to_string(n) + " words, expected 1.." + std::to_string(W));
      if (!exists && n != 0)
        throw ValueError(name + ": padded sentence " + std::to_string(s) + " of document " + std::to_string(b) +
                         " has " + std::to_string(n) + " words, expected 0");
    }
  }
}

}  // namespace attn::models
