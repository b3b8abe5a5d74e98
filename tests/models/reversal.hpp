// The learning check of chapters 2 and 3: a model with attention trained on
// reversal (symbols 0..9, sources of 5 to 15 tokens) with the one Trainer, then
// scored on 200 held-out sources by greedy decoding, and its teacher-forced
// attention peaks against the gold alignment (target t copies source S - 1 - t),
// and beam search against greedy decoding on the trained model.
#pragma once

#include "../helpers.hpp"

#include "data/tasks.hpp"
#include "decode/decode.hpp"
#include "train/trainer.hpp"

#include <iostream>

namespace test {

inline attn::data::Split reversal_split() {
  attn::Generator gen(1);
  attn::data::SequenceTaskOptions task;
  task.vocab_size = 10;
  task.min_length = 5;
  task.max_length = 15;
  return attn::data::sequence_split(attn::data::SequenceTask::reverse, 5000, 200, task, gen);
}

// 1000 Adam steps of 32 sentences, lr 3e-3 with a cosine decay, in float32.
inline attn::models::Evaluation learn_reversal(attn::models::Seq2Seq& model, const char* name) {
  const attn::data::Split split = reversal_split();
  const attn::data::Vocab vocab = attn::data::task_vocab(10);
  model.to(attn::Dtype::Float32);
  attn::models::TrainerOptions options;
  options.steps = 1000;
  options.batch_size = 32;
  options.lr = 3e-3;
  options.seed = 1;
  options.log_every = 0;
  attn::models::Trainer trainer(model, split.train, vocab, vocab, options);
  trainer.set_schedule([&](attn::nn::Optimizer& o) {
    return std::make_unique<attn::nn::CosineAnnealingLR>(o, static_cast<long>(options.steps));
  });
  trainer.set_eval_data(split.test);
  trainer.train();
  const attn::models::Evaluation& e = trainer.last_evaluation();
  std::cout << name << " on reversal (5-15 tokens), 1000 steps: exact match " << e.overall.exact_match()
            << ", token accuracy " << e.overall.token_accuracy() << ", attention peak on gold "
            << e.alignment.hit_rate() << ", off by one " << e.alignment.off_by_one_rate() << "\n";

  // On the trained model too, beam search never scores below greedy decoding.
  const std::vector<attn::data::Example> some(split.test.begin(), split.test.begin() + 64);
  const attn::data::Batch batch = attn::data::make_batch(some, vocab, vocab);
  attn::models::DecodeOptions decode;
  decode.beam_size = 4;
  const auto greedy = attn::models::greedy_decode(model, batch.src, batch.src_lengths, decode);
  const auto beam = attn::models::beam_search(model, batch.src, batch.src_lengths, decode);
  for (std::size_t b = 0; b < some.size(); ++b) CHECK(beam[b].log_prob >= greedy[b].log_prob);
  CHECK(attn::models::exact_match(attn::models::hypothesis_tokens(beam), attn::models::sentences_of(batch.tgt_out)) >=
        0.95);
  return e;
}

}  // namespace test
