// Learning-rate schedules, as torch.optim.lr_scheduler: each sets the
// optimizer's lr from the number of step() calls so far (last_epoch).
//
//   attn::nn::Adam opt(model.parameters(), 1.0);
//   attn::nn::NoamLR schedule(opt, /*d_model=*/512, /*warmup_steps=*/4000);
//   for (...) { ...; opt.step(); schedule.step(); }
//
// Building a schedule sets lr for the first update (last_epoch = 0); each
// step() advances last_epoch by one and sets the next lr.
#pragma once

#include "optim.hpp"

namespace attn::nn {

class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& optimizer);
  virtual ~LRScheduler() = default;

  void step();                      // last_epoch += 1, then optimizer.lr = get_lr()
  virtual double get_lr() const = 0;  // the lr for the current last_epoch
  long last_epoch() const { return last_epoch_; }
  double base_lr() const { return base_lr_; }  // the optimizer's lr when the schedule was built

 protected:
  void start();  // sets the lr for epoch 0: called by each subclass's constructor

  Optimizer& optimizer_;
  double base_lr_;
  long last_epoch_ = 0;
};

// lr = base_lr * gamma^(last_epoch / step_size): divided by 1/gamma every step_size steps.
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, long step_size, double gamma = 0.1);
  double get_lr() const override;
  long step_size;
  double gamma;
};

// lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * last_epoch / T_max)) / 2:
// half a cosine from base_lr down to eta_min over T_max steps (then back up).
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, long T_max, double eta_min = 0.0);
  double get_lr() const override;
  long T_max;
  double eta_min;
};

// The Transformer's schedule (Vaswani et al., 2017, section 5.3): a linear
// warm-up, then decay as the inverse square root of the step number n:
//   lr = factor * d_model^-0.5 * min(n^-0.5, n * warmup_steps^-1.5)
// with n = last_epoch + 1, so the n-th update uses lr(n); the peak is at
// n = warmup_steps. The optimizer's own lr is ignored (build it with lr = 1).
class NoamLR : public LRScheduler {
 public:
  NoamLR(Optimizer& optimizer, std::size_t d_model, long warmup_steps, double factor = 1.0);
  double get_lr() const override;
  std::size_t d_model;
  long warmup_steps;
  double factor;
};

}  // namespace attn::nn
