// Several encoders, one decoder: how Zoph & Knight (2016, "Multi-Source Neural Translation",
// section 3) turn the final states of K source encoders (h^k, c^k) into the one state the
// decoder starts from. Two ways, both from the paper (which writes the gates without biases;
// here each child-sum gate has one, as an LSTM's):
//
//   Basic      h = tanh(W_c [h^1; ...; h^K])          c = c^1 + ... + c^K
//   Child-sum  i = sigmoid(W_i [h^1; ...; h^K] + b_i)  the input gate, as an LSTM's, over all sources
//              o = sigmoid(W_o [h^1; ...; h^K] + b_o)  the output gate
//              u = tanh(W_u [h^1; ...; h^K] + b_u)     the update
//              f^k = sigmoid(W_f^k h^k + b_f^k)        one forget gate per source, from that source only
//              c = i * u + sum_k f^k * c^k             h = o * tanh(c)
//
// Child-sum is named after the Child-Sum Tree-LSTM node of Tai, Socher & Manning (2015), with
// the sources as its children, but it is not that node: Tai's gates read the SUM of the
// children's h through shared weights, here they read [h^1; ...; h^K], so each source has
// weights of its own. It is an LSTM step whose "previous states" are the K encoders' final
// states, each with a forget gate of its own, so that the model learns how much of each
// source's cell to keep.
//
//   attn::nn::ChildSumStateCombiner combine(64, 2);
//   attn::nn::LSTMState s0 = combine({en_final, de_final});  // each h, c [B, 64] -> s0.h, s0.c [B, 64]
//
// Both are made of autograd ops (linear, sigmoid, tanh, sums): their backward is theirs.
#pragma once

#include "linear.hpp"
#include "module.hpp"
#include "module_list.hpp"
#include "rnn_cell.hpp"

#include <string>
#include <vector>

namespace attn::nn {

class StateCombiner : public Module {
 public:
  StateCombiner(const std::string& name, std::size_t hidden_size, std::size_t sources);

  // K states, each h, c [B, H] -> one state h, c [B, H].
  virtual LSTMState forward(const std::vector<LSTMState>& states) const = 0;
  LSTMState operator()(const std::vector<LSTMState>& states) const { return forward(states); }
  std::string extra_repr() const override;

  std::size_t hidden_size, sources;

 protected:
  // Throws unless there are `sources` states, each h and c [B, H] with one B.
  void check(const std::vector<LSTMState>& states) const;
  // [h^1; ...; h^K]: [B, K H].
  static Tensor stacked_h(const std::vector<LSTMState>& states);
};

class BasicStateCombiner : public StateCombiner {
 public:
  BasicStateCombiner(std::size_t hidden_size, std::size_t sources);
  LSTMState forward(const std::vector<LSTMState>& states) const override;

  Linear combine;  // W_c: [K H] -> [H], no bias (the paper writes none)
};

class ChildSumStateCombiner : public StateCombiner {
 public:
  ChildSumStateCombiner(std::size_t hidden_size, std::size_t sources);
  LSTMState forward(const std::vector<LSTMState>& states) const override;

  Linear gates;               // [W_i; W_o; W_u]: [K H] -> [3H], with biases
  ModuleList<Linear> forget;  // W_f^k: [H] -> [H], with biases, one per source
};

}  // namespace attn::nn
