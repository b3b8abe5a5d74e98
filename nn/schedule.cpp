#include "schedule.hpp"

#include <algorithm>
#include <cmath>

namespace attn::nn {

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer), base_lr_(optimizer.lr) {}

void LRScheduler::start() { optimizer_.lr = get_lr(); }

void LRScheduler::step() {
  ++last_epoch_;
  optimizer_.lr = get_lr();
}

StepLR::StepLR(Optimizer& optimizer, long step_size, double gamma)
    : LRScheduler(optimizer), step_size(step_size), gamma(gamma) {
  if (step_size <= 0) throw ValueError("StepLR: step_size must be positive, got " + std::to_string(step_size));
  start();
}

double StepLR::get_lr() const { return base_lr_ * std::pow(gamma, static_cast<double>(last_epoch_ / step_size)); }

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, long T_max, double eta_min)
    : LRScheduler(optimizer), T_max(T_max), eta_min(eta_min) {
  if (T_max <= 0) throw ValueError("CosineAnnealingLR: T_max must be positive, got " + std::to_string(T_max));
  start();
}

double CosineAnnealingLR::get_lr() const {
  const double pi = 3.14159265358979323846;
  return eta_min + (base_lr_ - eta_min) * (1 + std::cos(pi * static_cast<double>(last_epoch_) / T_max)) / 2;
}

NoamLR::NoamLR(Optimizer& optimizer, std::size_t d_model, long warmup_steps, double factor)
    : LRScheduler(optimizer), d_model(d_model), warmup_steps(warmup_steps), factor(factor) {
  if (d_model == 0) throw ValueError("NoamLR: d_model must be positive");
  if (warmup_steps <= 0) throw ValueError("NoamLR: warmup_steps must be positive, got " + std::to_string(warmup_steps));
  start();
}

double NoamLR::get_lr() const {
  const double n = static_cast<double>(last_epoch_ + 1);
  const double warmup = static_cast<double>(warmup_steps);
  return factor / std::sqrt(static_cast<double>(d_model)) * std::min(1.0 / std::sqrt(n), n * std::pow(warmup, -1.5));
}

}  // namespace attn::nn
