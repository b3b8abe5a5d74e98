#include "state_combiner.hpp"

#include "../core/ops.hpp"

namespace attn::nn {

namespace {

std::size_t positive(std::size_t value, const std::string& op, const char* what) {
  if (value == 0) throw ValueError(op + ": " + what + " must be positive");
  return value;
}

std::string shape_of(const Tensor& t) { return t.defined() ? shape_str(t.shape()) : "undefined"; }

}  // namespace

StateCombiner::StateCombiner(const std::string& name, std::size_t hidden, std::size_t k)
    : Module(name), hidden_size(positive(hidden, name, "hidden_size")), sources(positive(k, name, "sources")) {}

std::string StateCombiner::extra_repr() const {
  return "hidden_size=" + std::to_string(hidden_size) + ", sources=" + std::to_string(sources);
}

void StateCombiner::check(const std::vector<LSTMState>& states) const {
  if (states.size() != sources)
    throw ValueError(type_name() + ": expected " + std::to_string(sources) + " states, one per source, got " +
                     std::to_string(states.size()));
  for (std::size_t k = 0; k < states.size(); ++k) {
    const LSTMState& s = states[k];
    const bool ok = s.h.defined() && s.c.defined() && s.h.dim() == 2 && s.h.shape() == s.c.shape() &&
                    s.h.size(1) == hidden_size && s.h.size(0) == states[0].h.size(0);
    if (!ok)
      throw ShapeError(type_name() + ": expected state " + std::to_string(k) + " h and c [B, " + std::to_string(hidden_size) +
                       "] with the B of state 0, got h " + shape_of(s.h) + " and c " + shape_of(s.c));
  }
}

Tensor StateCombiner::stacked_h(const std::vector<LSTMState>& states) {
  std::vector<Tensor> hs;
  for (const LSTMState& s : states) hs.push_back(s.h);
  return concat(hs, 1);  // [B, K H]
}

BasicStateCombiner::BasicStateCombiner(std::size_t hidden, std::size_t k)
    : StateCombiner("BasicStateCombiner", hidden, k), combine(k * hidden, hidden, /*bias=*/false) {
  register_module("combine", combine);
}

LSTMState BasicStateCombiner::forward(const std::vector<LSTMState>& states) const {
  check(states);
  Tensor c = states[0].c;
  for (std::size_t k = 1; k < states.size(); ++k) c = c + states[k].c;  // c = sum_k c^k: [B, H]
  return {tanh(combine(stacked_h(states))), c};                         // h = tanh(W_c [h^1; ...]): [B, H]
}

ChildSumStateCombiner::ChildSumStateCombiner(std::size_t hidden, std::size_t k)
    : StateCombiner("ChildSumStateCombiner", hidden, k), gates(k * hidden, 3 * hidden) {
  register_module("gates", gates);
  for (std::size_t i = 0; i < k; ++i) forget.emplace_back(hidden, hidden);
  register_module("forget", forget);
}

LSTMState ChildSumStateCombiner::forward(const std::vector<LSTMState>& states) const {
  check(states);
  const Tensor g = gates(stacked_h(states));               // [B, 3H]: input, output, update
  const Tensor i = sigmoid(narrow(g, 1, 0, hidden_size));  // [B, H]
  const Tensor o = sigmoid(narrow(g, 1, hidden_size, hidden_size));
  const Tensor u = tanh(narrow(g, 1, 2 * hidden_size, hidden_size));
  Tensor c = i * u;
  for (std::size_t k = 0; k < states.size(); ++k) c = c + sigmoid(forget[k](states[k].h)) * states[k].c;  // + f^k c^k
  return {o * tanh(c), c};
}

}  // namespace attn::nn
