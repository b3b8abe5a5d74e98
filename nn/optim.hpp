// Optimizers, as torch.optim: each step() moves every parameter that has a
// gradient, in place and without recording a graph.
//
//   attn::nn::Adam opt(model.parameters(), /*lr=*/1e-3);
//   for (...) {
//     opt.zero_grad();
//     Tensor loss = attn::nn::cross_entropy(model(x), y);
//     loss.backward();
//     attn::nn::clip_grad_norm_(model.parameters(), 1.0);  // optional
//     opt.step();
//   }
//
// The optimizer keeps handles to the parameter tensors: build it after
// model.to(dtype), which replaces them. Update formulas follow PyTorch 1.13
// term by term (tests/nn/test_optim.cpp compares them to 1e-12).
#pragma once

#include "../core/array_spec.hpp"
#include "../core/tensor.hpp"

#include <string>
#include <utility>
#include <vector>

namespace attn::nn {

class Optimizer {
 public:
  Optimizer(std::vector<Tensor> params, double lr);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  void zero_grad();         // forgets every parameter's gradient
  virtual void step() = 0;  // one update of every parameter that has a gradient

  const std::vector<Tensor>& params() const { return params_; }
  double lr;                // learning rate; schedules (schedule.hpp) change it

  // The running state (Adam's averages and step counts, SGD's momentum buffers)
  // as named tensors, e.g. "exp_avg.0", for checkpoints (nn/optim_state.cpp);
  // load_state() puts such a list back, checking names and shapes (ValueError).
  // It copies the values, except those of a list handed over with std::move
  // whose tensors nothing else holds (a state just read from a file): those
  // are kept as they are, so loading costs no second copy.
  using State = std::vector<std::pair<std::string, Tensor>>;
  virtual State state() const { return {}; }
  void load_state(const State& state) { restore_state(State(state)); }
  void load_state(State&& state) { restore_state(std::move(state)); }

  // The shape and dtype load_state() needs under `name` ("exp_avg.3": those
  // of parameter 3), so that a checkpoint's array can be checked before it is
  // read. ValueError for a name this optimizer does not keep.
  virtual ArraySpec state_spec(const std::string& name) const;

 protected:
  virtual void restore_state(State state);
  std::vector<Tensor> params_;
};

// Stochastic gradient descent, with optional momentum, L2 weight decay and
// Nesterov momentum. With g = grad + weight_decay * p:
//   b = g (first step), b = momentum * b + (1 - dampening) * g (then)
//   p -= lr * (nesterov ? g + momentum * b : b)       (momentum > 0)
//   p -= lr * g                                       (momentum = 0)
class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, double lr, double momentum = 0.0, double dampening = 0.0,
      double weight_decay = 0.0, bool nesterov = false);
  void step() override;
  State state() const override;             // "momentum_buffer.<i>" for every buffer started
  ArraySpec state_spec(const std::string& name) const override;

  double momentum, dampening, weight_decay;
  bool nesterov;

 protected:
  void restore_state(State state) override;

 private:
  std::vector<Tensor> momentum_buffer_;  // undefined until a parameter's first step
};

// Adam (Kingma & Ba, 2015). With g = grad + weight_decay * p (L2, as PyTorch's Adam):
//   m = beta1 * m + (1 - beta1) * g,  v = beta2 * v + (1 - beta2) * g^2
//   p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, double lr = 1e-3, std::pair<double, double> betas = {0.9, 0.999},
       double eps = 1e-8, double weight_decay = 0.0);
  void step() override;
  State state() const override;  // "exp_avg.<i>", "exp_avg_sq.<i>", "step.<i>" for every parameter stepped
  ArraySpec state_spec(const std::string& name) const override;

  std::pair<double, double> betas;
  double eps, weight_decay;

 protected:
  void restore_state(State state) override;
  Adam(std::vector<Tensor> params, double lr, std::pair<double, double> betas, double eps, double weight_decay,
       bool decoupled);
  bool decoupled_;               // AdamW: decay p itself, not through the gradient
  std::vector<Tensor> exp_avg_;     // m, per parameter
  std::vector<Tensor> exp_avg_sq_;  // v, per parameter
  std::vector<long> steps_;         // t, per parameter
};

// AdamW (Loshchilov & Hutter, 2019): Adam with decoupled weight decay,
//   p *= 1 - lr * weight_decay, then the Adam update with g = grad.
class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, double lr = 1e-3, std::pair<double, double> betas = {0.9, 0.999},
        double eps = 1e-8, double weight_decay = 1e-2);
};

// Scales all gradients together so that their joint L2 norm (as if they were
// one long vector) is at most max_norm:
//   total = sqrt(sum of squares of every gradient value)
//   g *= max_norm / (total + 1e-6)   if that factor is < 1
// Returns total, the norm before clipping (0 if no parameter has a gradient).
double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm);

}  // namespace attn::nn
