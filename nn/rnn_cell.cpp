#include "rnn_cell.hpp"

#include "../core/backend/fused.hpp"
#include "../core/ops.hpp"

#include <cmath>

namespace attn::nn {

// ---- one step of each recurrence ---------------------------------------------

Tensor both_biases(const Tensor& bias_ih, const Tensor& bias_hh) {
  return bias_ih.defined() ? bias_ih + bias_hh : Tensor();  // [G]
}

Tensor rnn_step(const Tensor& xw, const Tensor& h, const Tensor& weight_hh, Nonlinearity nonlinearity) {
  Tensor pre = linear(h, weight_hh, xw);  // xw + h W_hh^T: the product added onto xw [B, H]
  return nonlinearity == Nonlinearity::Tanh ? tanh(pre) : relu(pre);
}

LSTMState lstm_step(const Tensor& xw, const LSTMState& state, const Tensor& weight_hh) {
  // xw + h W_hh^T [B, 4H]: one product for all four gates i, f, g, o, added onto xw
  Tensor gates = linear(state.h, weight_hh, xw);
  // Two fused ops (core/backend/lstm_cell.cpp), equal to chunk(gates, 4, 1) and then
  //   c = sigmoid(f) * c + sigmoid(i) * tanh(g),   h = sigmoid(o) * tanh(c)
  Tensor c = lstm_cell_c(gates, state.c);  // [B, H]
  return {lstm_cell_h(gates, c), c};
}

Tensor gru_step(const Tensor& xw, const Tensor& h, const Tensor& weight_hh, const Tensor& bias_hh) {
  std::vector<Tensor> gx = chunk(xw, 3, 1);                                // 3 x [B, H]: r, z, n from x
  std::vector<Tensor> gh = chunk(linear(h, weight_hh, bias_hh), 3, 1);    // 3 x [B, H]: r, z, n from h
  Tensor reset = sigmoid(gx[0] + gh[0]);
  Tensor update = sigmoid(gx[1] + gh[1]);
  Tensor candidate = tanh(gx[2] + reset * gh[2]);  // the reset gate scales h W_hn^T + b_hn, as PyTorch
  return (1.0 - update) * candidate + update * h;
}

// ---- the cells -----------------------------------------------------------------

RNNCellBase::RNNCellBase(const char* type_name, std::size_t input_size, std::size_t hidden_size, bool bias,
                         std::size_t num_gates)
    : Module(type_name), input_size(input_size), hidden_size(hidden_size), bias(bias) {
  if (input_size == 0 || hidden_size == 0)
    throw ValueError(std::string(type_name) + ": input_size and hidden_size must be positive, got " +
                     std::to_string(input_size) + " and " + std::to_string(hidden_size));
  const double k = 1.0 / std::sqrt(static_cast<double>(hidden_size));  // PyTorch's init bound
  const std::size_t G = num_gates * hidden_size;
  weight_ih = uniform({G, input_size}, -k, k);
  weight_hh = uniform({G, hidden_size}, -k, k);
  register_parameter("weight_ih", weight_ih);
  register_parameter("weight_hh", weight_hh);
  if (bias) {
    bias_ih = uniform({G}, -k, k);
    bias_hh = uniform({G}, -k, k);
    register_parameter("bias_ih", bias_ih);
    register_parameter("bias_hh", bias_hh);
  }
}

std::string RNNCellBase::extra_repr() const {
  return std::to_string(input_size) + ", " + std::to_string(hidden_size) + (bias ? "" : ", bias=false");
}

Tensor RNNCellBase::checked_state(const Tensor& x, const Tensor& state, const char* state_name) const {
  const std::string name = type_name();
  if (!x.defined()) throw ValueError(name + ": the input is undefined");
  if (x.dim() != 2 || x.size(1) != input_size)
    throw ShapeError(name + ": expected input of shape [B, " + std::to_string(input_size) + "], got " +
                     shape_str(x.shape()));
  if (x.dtype() != weight_ih.dtype())
    throw ValueError(name + ": the input is " + dtype_name(x.dtype()) + " but the parameters are " +
                     dtype_name(weight_ih.dtype()) + " (convert one with .to())");
  const Shape expected{x.size(0), hidden_size};
  if (!state.defined()) return zeros(expected, x.dtype());
  if (state.shape() != expected)
    throw ShapeError(name + ": expected " + state_name + " of shape " + shape_str(expected) + ", got " +
                     shape_str(state.shape()));
  return state;
}

RNNCell::RNNCell(std::size_t input_size, std::size_t hidden_size, bool bias, Nonlinearity nonlinearity)
    : RNNCellBase("RNNCell", input_size, hidden_size, bias, 1), nonlinearity(nonlinearity) {}

std::string RNNCell::extra_repr() const {
  return RNNCellBase::extra_repr() + (nonlinearity == Nonlinearity::ReLU ? ", nonlinearity=relu" : "");
}

Tensor RNNCell::forward(const Tensor& x, const Tensor& h) const {
  Tensor h0 = checked_state(x, h, "h");
  return rnn_step(linear(x, weight_ih, both_biases(bias_ih, bias_hh)), h0, weight_hh, nonlinearity);
}

LSTMCell::LSTMCell(std::size_t input_size, std::size_t hidden_size, bool bias)
    : RNNCellBase("LSTMCell", input_size, hidden_size, bias, 4) {}

LSTMState LSTMCell::forward(const Tensor& x, const LSTMState& state) const {
  LSTMState s{checked_state(x, state.h, "h"), checked_state(x, state.c, "c")};
  return lstm_step(linear(x, weight_ih, both_biases(bias_ih, bias_hh)), s, weight_hh);
}

GRUCell::GRUCell(std::size_t input_size, std::size_t hidden_size, bool bias)
    : RNNCellBase("GRUCell", input_size, hidden_size, bias, 3) {}

Tensor GRUCell::forward(const Tensor& x, const Tensor& h) const {
  Tensor h0 = checked_state(x, h, "h");
  return gru_step(linear(x, weight_ih, bias_ih), h0, weight_hh, bias_hh);
}

}  // namespace attn::nn
