#include "grid_train.hpp"

#include "../nn/optim.hpp"
#include "../data/batch.hpp"
#include "../eval/accuracy.hpp"

#include <chrono>
#include <cmath>

namespace attn::models {

Progress train_grid_captioner(GridCaptioner& model, const std::vector<data::GridExample>& examples,
                              const data::Vocab& vocab, const GridTrainOptions& options,
                              const std::function<void(const Progress&)>& on_progress) {
  if (examples.empty()) throw ValueError("train_grid_captioner: expected training examples, got none");
  if (options.batch_size == 0) throw ValueError("train_grid_captioner: batch_size must be at least 1");
  if (options.clip_norm < 0) throw ValueError("train_grid_captioner: clip_norm must be >= 0 (0 turns clipping off)");

  nn::Adam optimizer(model.parameters(), options.lr);
  Generator order(options.seed);
  data::BatchOptions batching;
  batching.batch_size = options.batch_size;
  std::vector<data::GridBatch> epoch;
  std::size_t next = 0;
  ReinforceBaseline baseline;

  Progress report;
  double loss_sum = 0.0, accuracy_sum = 0.0;
  std::size_t count = 0, since_step = 0;
  auto since = std::chrono::steady_clock::now();
  model.train();
  for (std::size_t step = 1; step <= options.steps; ++step) {
    if (next == epoch.size()) {  // a new epoch in a new order
      epoch = data::make_grid_batches(examples, vocab, batching, order, model.dtype());
      next = 0;
    }
    const data::GridBatch& batch = epoch[next++];

    optimizer.zero_grad();
    CaptionerOutput out = model.forward_all(batch.features, batch.tgt_in);  // logits [B, T, V]
    CaptionLoss loss = caption_loss(out, batch.tgt_out, options.loss, baseline);
    loss.loss.backward();
    const double norm = nn::clip_grad_norm_(optimizer.params(), options.clip_norm > 0 ? options.clip_norm : INFINITY);
    optimizer.step();

    loss_sum += loss.nll;
    accuracy_sum += token_accuracy(out.logits, batch.tgt_out);
    ++count;
    const bool last = step == options.steps;
    if (last || (options.log_every && step % options.log_every == 0)) {
      const auto now = std::chrono::steady_clock::now();
      const double seconds = std::chrono::duration<double>(now - since).count();
      report.step = step;
      report.total_steps = options.steps;
      report.loss = loss_sum / double(count);
      report.accuracy = accuracy_sum / double(count);
      report.grad_norm = norm;
      report.lr = optimizer.lr;
      report.steps_per_second = seconds > 0 ? double(step - since_step) / seconds : 0.0;
      report.seconds_left = report.steps_per_second > 0 ? double(options.steps - step) / report.steps_per_second : 0.0;
      if (on_progress) on_progress(report);
      loss_sum = accuracy_sum = 0.0;
      count = 0;
      since = now;
      since_step = step;
    }
  }
  return report;
}

}  // namespace attn::models
