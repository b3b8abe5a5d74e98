// The training loop (trainer.hpp). Checkpoints: trainer_checkpoint.cpp.
#include "trainer.hpp"

#include "../core/ops.hpp"
#include "../models/extended_source.hpp"
#include "../nn/loss.hpp"

#include <cmath>

namespace attn::models {

Trainer::Trainer(Seq2Seq& model, std::vector<data::Example> train, data::Vocab src_vocab, data::Vocab tgt_vocab,
                 TrainerOptions options)
    : model_(model),
      train_(std::move(train)),
      src_vocab_(std::move(src_vocab)),
      tgt_vocab_(std::move(tgt_vocab)),
      options_(std::move(options)),
      gen_(options_.seed) {
  if (train_.empty()) throw ValueError("Trainer: expected training examples, got none");
  if (options_.batch_size == 0) throw ValueError("Trainer: batch_size must be at least 1");
  if (!(options_.clip_norm >= 0) || !std::isfinite(options_.clip_norm))
    throw ValueError("Trainer: clip_norm must be finite and >= 0 (0 turns clipping off), got " +
                     std::to_string(options_.clip_norm));
  if (!(options_.lr > 0) || !std::isfinite(options_.lr))
    throw ValueError("Trainer: lr must be finite and > 0, got " + std::to_string(options_.lr));
  if (!(options_.label_smoothing >= 0 && options_.label_smoothing <= 1))
    throw ValueError("Trainer: label_smoothing must be in [0, 1], got " + std::to_string(options_.label_smoothing));
  auto* copying = dynamic_cast<CopyingModel*>(&model_);
  if (copying && copying->copies() && options_.label_smoothing > 0)  // it would spread mass over other rows' copy ids
    throw ValueError("Trainer: label smoothing is not defined over a copying model's extended vocabulary "
                     "(set label_smoothing to 0 for conv-copy and copynet)");
  optimizer_ = std::make_unique<nn::Adam>(model_.parameters(), options_.lr);
}

void Trainer::set_optimizer(std::unique_ptr<nn::Optimizer> optimizer) {
  if (!optimizer) throw ValueError("Trainer::set_optimizer: the optimizer is null");
  optimizer_ = std::move(optimizer);
  if (make_schedule_) set_schedule(make_schedule_);  // the schedule follows the new optimizer
}

void Trainer::set_schedule(const std::function<std::unique_ptr<nn::LRScheduler>(nn::Optimizer&)>& make_schedule) {
  make_schedule_ = make_schedule;
  schedule_ = make_schedule_ ? make_schedule_(*optimizer_) : nullptr;
}

const data::Batch& Trainer::next_batch() {
  if (epoch_position_ >= epoch_.size()) {  // a new epoch, drawn from the generator as it is now
    epoch_start_ = generator_state(gen_);
    data::BatchOptions batching;
    batching.batch_size = options_.batch_size;
    batching.sort_buckets = options_.sort_buckets;
    epoch_ = data::make_batches(train_, src_vocab_, tgt_vocab_, batching, gen_);
    epoch_position_ = 0;
  }
  return epoch_[epoch_position_++];
}

double Trainer::train_step(const data::Batch& batch) {
  model_.train();
  optimizer_->zero_grad();
  Tensor logits;
  Index targets = batch.tgt_out;
  auto* copying = dynamic_cast<CopyingModel*>(&model_);
  if (copying && copying->copies()) {
    // A copying model learns over the batch's extended vocabulary: a target word the vocabulary lacks
    // but the source holds is its copy's id, counted in full instead of as <unk>.
    const ExtendedBatch extended = extended_batch(batch, train_, tgt_vocab_);
    logits = copying->forward_extended(batch.src, batch.src_lengths, extended.tgt_in, extended.source);  // log p [B, T, V + n]
    targets = extended.tgt_out;
  } else {
    logits = model_.forward(batch.src, batch.src_lengths, batch.tgt_in);  // [B, T, V]
  }
  Tensor loss = nn::cross_entropy(logits, targets, data::Vocab::pad_id, options_.label_smoothing);
  if (extra_loss) {
    Tensor extra = extra_loss(batch);
    if (!extra.defined() || extra.dim() != 0)
      throw ValueError("Trainer: extra_loss must return a scalar, got " + (extra.defined() ? shape_str(extra.shape()) : std::string("an undefined tensor")));
    loss = loss + extra;
  }
  loss.backward();
  last_grad_norm_ = options_.clip_norm > 0 ? nn::clip_grad_norm_(optimizer_->params(), options_.clip_norm)
                                           : nn::clip_grad_norm_(optimizer_->params(), INFINITY);
  optimizer_->step();
  if (schedule_) schedule_->step();
  ++step_;

  const double value = loss.item();
  loss_sum_ += value;
  accuracy_sum_ += token_accuracy(logits, targets);
  ++loss_count_;
  return value;
}

Evaluation Trainer::evaluate_now() {
  if (eval_data_.empty()) throw ValueError("Trainer::evaluate_now: no eval data (call set_eval_data first)");
  last_evaluation_ = evaluate(model_, eval_data_, src_vocab_, tgt_vocab_, options_.eval);
  last_evaluation_.step = step_;
  if (on_evaluation) on_evaluation(last_evaluation_);
  return last_evaluation_;
}

void Trainer::report(std::chrono::steady_clock::time_point& since, std::size_t& since_step) {
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - since).count();
  Progress p;
  p.step = step_;
  p.total_steps = options_.steps;
  p.loss = loss_count_ ? loss_sum_ / double(loss_count_) : 0.0;
  p.accuracy = loss_count_ ? accuracy_sum_ / double(loss_count_) : 0.0;
  p.grad_norm = last_grad_norm_;
  p.lr = optimizer_->lr;
  p.steps_per_second = seconds > 0 ? double(step_ - since_step) / seconds : 0.0;
  p.seconds_left = p.steps_per_second > 0 ? double(options_.steps - step_) / p.steps_per_second : 0.0;
  if (on_progress) on_progress(p);
  loss_sum_ = accuracy_sum_ = 0.0;
  loss_count_ = 0;
  since = now;
  since_step = step_;
}

void Trainer::train() {
  auto since = std::chrono::steady_clock::now();
  std::size_t since_step = step_;
  while (step_ < options_.steps) {
    train_step(next_batch());
    const bool last = step_ == options_.steps;
    if (options_.log_every && (step_ % options_.log_every == 0 || last)) report(since, since_step);
    if (!eval_data_.empty() && ((options_.eval_every && step_ % options_.eval_every == 0) || last)) evaluate_now();
    if ((on_checkpoint || !options_.checkpoint_path.empty()) &&
        ((options_.checkpoint_every && step_ % options_.checkpoint_every == 0) || last)) {
      if (on_checkpoint) on_checkpoint();
      else save_checkpoint(options_.checkpoint_path);
    }
  }
}

}  // namespace attn::models
