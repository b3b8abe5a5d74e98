// Learning to caption synthetic grids (chapter 4), shared by the soft and hard
// attention learning tests.
#pragma once

#include "../helpers.hpp"

#include "data/grid.hpp"
#include "models/grid_captioner.hpp"
#include "decode/grid_decode.hpp"
#include "train/grid_train.hpp"

#include <chrono>

namespace test {

struct Learned {
  attn::models::GridEvaluation eval;
  double seconds = 0.0;
};

// Trains on 2000 synthetic 3x3 grids (D = 32, 1 to 3 objects) and evaluates on
// 200 held-out grids whose sets of objects never occur in training.
inline Learned learn_grids(attn::models::GridAttention attention, std::size_t steps) {
  const auto begin = std::chrono::steady_clock::now();
  attn::manual_seed(1);
  attn::data::GridWorld world;  // feature_dim 32
  attn::Generator gen(3);
  const attn::data::GridSplit split = world.split(2000, 200, gen);
  const attn::data::Vocab vocab = attn::data::GridWorld::caption_vocab();
  attn::models::GridCaptionerConfig c;
  c.vocab = vocab.size();
  c.feature_dim = world.options().feature_dim;
  c.embed_dim = 16;
  c.decoder_dim = c.attention_dim = 64;
  c.attention = attention;
  attn::models::GridCaptioner model(c);
  model.to(attn::Dtype::Float32);
  attn::models::GridTrainOptions options;
  options.steps = steps;
  options.lr = 3e-3;
  options.log_every = 0;
  attn::models::train_grid_captioner(model, split.train, vocab, options);
  Learned result;
  result.eval = attn::models::evaluate_grid_captioner(model, split.test, vocab);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return result;
}

}  // namespace test
