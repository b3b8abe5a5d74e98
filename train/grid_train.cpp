#include "grid_train.hpp"

#include "../data/batch.hpp"
#include "../eval/accuracy.hpp"

#include <chrono>
#include <cmath>

namespace attn::models {

EpochFamily grid_family(GridCaptioner& model, const std::vector<data::GridExample>& examples,
                        const data::Vocab& vocab, std::size_t batch_size, const CaptionLossOptions& loss) {
  if (examples.empty()) throw ValueError("grid_family: expected training examples, got none");
  if (batch_size == 0) throw ValueError("grid_family: batch_size must be at least 1");
  struct State {
    std::vector<data::GridBatch> epoch;
    ReinforceBaseline baseline;
  };
  auto state = std::make_shared<State>();
  EpochFamily f;
  f.draw_epoch = [&model, &examples, &vocab, batch_size, state](Generator& order) {
    data::BatchOptions batching;
    batching.batch_size = batch_size;
    state->epoch = data::make_grid_batches(examples, vocab, batching, order, model.dtype());
    return state->epoch.size();
  };
  f.step = [&model, loss, state](std::size_t i) {
    const data::GridBatch& batch = state->epoch.at(i);
    CaptionerOutput out = model.forward_all(batch.features, batch.tgt_in);  // logits [B, T, V]
    CaptionLoss l = caption_loss(out, batch.tgt_out, loss, state->baseline);
    return EpochStep{l.loss, l.nll, token_accuracy(out.logits, batch.tgt_out), 1.0};
  };
  f.save_state = [state] {
    return std::vector<std::pair<std::string, Tensor>>{{"baseline", baseline_state(state->baseline)}};
  };
  f.load_state = [state](const std::map<std::string, Tensor>& s) {
    state->baseline = read_baseline_state(s.at("baseline"), "grid_family");
  };
  return f;
}

Progress train_grid_captioner(GridCaptioner& model, const std::vector<data::GridExample>& examples,
                              const data::Vocab& vocab, const GridTrainOptions& options,
                              const std::function<void(const Progress&)>& on_progress) {
  if (examples.empty()) throw ValueError("train_grid_captioner: expected training examples, got none");
  if (options.batch_size == 0) throw ValueError("train_grid_captioner: batch_size must be at least 1");
  if (options.clip_norm < 0) throw ValueError("train_grid_captioner: clip_norm must be >= 0 (0 turns clipping off)");
  if (options.steps == 0) return Progress{};

  EpochTrainerOptions o;
  o.steps = options.steps;
  o.lr = options.lr;
  o.clip_norm = options.clip_norm;
  o.seed = options.seed;
  EpochTrainer trainer(model, grid_family(model, examples, vocab, options.batch_size, options.loss), o);

  // Progress: the means over the last log_every steps (or every step).
  Progress report;
  double loss_sum = 0.0, accuracy_sum = 0.0;
  std::size_t count = 0, since_step = 0;
  auto since = std::chrono::steady_clock::now();
  trainer.on_step = [&](const EpochProgress& p) {
    loss_sum += p.loss;
    accuracy_sum += p.accuracy;
    ++count;
    const bool last = p.step == options.steps;
    if (!last && !(options.log_every && p.step % options.log_every == 0)) return;
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - since).count();
    report.step = p.step;
    report.total_steps = options.steps;
    report.loss = loss_sum / double(count);
    report.accuracy = accuracy_sum / double(count);
    report.grad_norm = p.grad_norm;
    report.lr = p.lr;
    report.steps_per_second = seconds > 0 ? double(p.step - since_step) / seconds : 0.0;
    report.seconds_left = report.steps_per_second > 0 ? double(options.steps - p.step) / report.steps_per_second : 0.0;
    if (on_progress) on_progress(report);
    loss_sum = accuracy_sum = 0.0;
    count = 0;
    since = now;
    since_step = p.step;
  };
  trainer.train();
  return report;
}

}  // namespace attn::models
