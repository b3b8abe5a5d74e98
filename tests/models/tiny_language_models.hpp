// The smallest language models of each kind (models/language_model.hpp), for the tests of the models,
// their training and generate: 9 tokens (the 4 specials and 5 words), one layer, d_model 4.
#pragma once

#include "models/language_model.hpp"

namespace test {

constexpr std::size_t kLmVocab = 9;  // 4 specials + 5 words

inline attn::models::TransformerConfig tiny_transformer_lm(std::size_t max_len = 16) {
  attn::models::TransformerConfig c;
  c.tgt_vocab = kLmVocab;
  c.d_model = 4;
  c.nhead = 2;
  c.num_encoder_layers = 1;
  c.num_decoder_layers = 1;
  c.dim_feedforward = 8;
  c.dropout = 0.0;
  c.max_len = max_len;
  return c;
}

inline attn::models::PointerSentinelConfig tiny_pointer_lm(bool pointer, std::size_t window) {
  attn::models::PointerSentinelConfig c;
  c.vocab = kLmVocab, c.embed_dim = 3, c.hidden_dim = 4, c.window = window, c.pointer = pointer;
  return c;
}

}  // namespace test
