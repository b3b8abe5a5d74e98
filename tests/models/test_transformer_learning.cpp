// Does the small Transformer learn? Copy and reverse of 5 to 10 symbols, trained
// with models::Trainer as in the paper (Adam with betas (0.9, 0.98) and eps 1e-9,
// the warm-up schedule, label smoothing 0.1) plus gradient clipping, then decoded
// greedily on 200 sources never seen in training. Float32, fixed seeds.
#include "../helpers.hpp"

#include "data/tasks.hpp"
#include "train/trainer.hpp"
#include "models/transformer_seq2seq.hpp"
#include "nn/optim.hpp"
#include "nn/schedule.hpp"

#include <chrono>
#include <memory>

namespace data = attn::data;
namespace models = attn::models;
namespace nn = attn::nn;

namespace {

struct Result {
  models::Evaluation evaluation;
  double seconds = 0.0;
};

// d_model 32, 4 heads, 2 + 2 layers, feed-forward 64: about 60k parameters.
Result train_and_test(data::SequenceTask task, std::size_t steps, double factor, long warmup) {
  const auto begin = std::chrono::steady_clock::now();
  attn::manual_seed(7);
  attn::Generator gen(11);
  data::SequenceTaskOptions options;
  options.vocab_size = 10;
  options.min_length = 5;
  options.max_length = 10;
  data::Split split = data::sequence_split(task, 4000, 200, options, gen);
  data::Vocab vocab = data::task_vocab(options.vocab_size);

  models::TransformerConfig c;
  c.src_vocab = c.tgt_vocab = vocab.size();
  c.d_model = 32;
  c.nhead = 4;
  c.num_encoder_layers = c.num_decoder_layers = 2;
  c.dim_feedforward = 64;
  c.dropout = 0.0;
  c.max_len = 32;
  models::TransformerSeq2Seq model(c);
  model.to(attn::Dtype::Float32);  // before the optimizer: to() replaces the parameters

  models::TrainerOptions opt;
  opt.steps = steps;
  opt.batch_size = 64;
  opt.label_smoothing = 0.1;
  opt.clip_norm = 1.0;
  opt.log_every = 0;
  opt.eval.max_len = options.max_length + 2;
  models::Trainer trainer(model, split.train, vocab, vocab, opt);
  // The paper's optimizer: lr comes from the schedule, factor * d_model^-0.5 * min(n^-0.5, n * warmup^-1.5).
  trainer.set_optimizer(std::make_unique<nn::Adam>(model.parameters(), 1.0, std::make_pair(0.9, 0.98), 1e-9));
  trainer.set_schedule([&](nn::Optimizer& o) { return std::make_unique<nn::NoamLR>(o, c.d_model, warmup, factor); });
  trainer.set_eval_data(split.test);
  trainer.train();

  Result result;
  result.evaluation = trainer.evaluate_now();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return result;
}

void report(const char* task, const Result& r) {
  MESSAGE(std::string(task) << ": exact match " << r.evaluation.overall.exact_match() << ", token accuracy "
               << r.evaluation.overall.token_accuracy() << ", test loss " << r.evaluation.loss
               << ", attention peak on the gold source position " << r.evaluation.alignment.hit_rate() << ", "
               << r.seconds << " s");
}

}  // namespace

TEST_CASE("The small Transformer learns to copy (>= 95% exact match on unseen sources)") {
  Result r = train_and_test(data::SequenceTask::copy, 1000, 0.15, 200);
  report("copy", r);
  CHECK(r.evaluation.overall.sentences == 200);
  CHECK(r.evaluation.overall.exact_match() >= 0.95);
}

TEST_CASE("The small Transformer learns to reverse (>= 95% exact match on unseen sources)") {
  Result r = train_and_test(data::SequenceTask::reverse, 1000, 0.15, 200);
  report("reverse", r);
  CHECK(r.evaluation.overall.sentences == 200);
  CHECK(r.evaluation.overall.exact_match() >= 0.95);
}
