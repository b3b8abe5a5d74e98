// Recurrent cells: one time step of an Elman RNN, an LSTM or a GRU, as
// PyTorch's nn.RNNCell, nn.LSTMCell and nn.GRUCell (same parameter names,
// same gate order, same initialization).
//
//   attn::nn::LSTMCell cell(4, 8);               // input_size 4, hidden_size 8
//   attn::nn::LSTMState s;                       // undefined h, c: zeros
//   for (const Tensor& x_t : inputs) s = cell(x_t, s);   // x_t [B, 4] -> s.h, s.c [B, 8]
//
// With H = hidden_size, one step computes (x [B, in], h [B, H]):
//   RNN:  h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)             (or relu)
//   LSTM: [i, f, g, o] = x W_ih^T + b_ih + h W_hh^T + b_hh          gates [B, 4H]
//         c' = sigmoid(f) * c + sigmoid(i) * tanh(g),  h' = sigmoid(o) * tanh(c')
//   GRU:  [r_x, z_x, n_x] = x W_ih^T + b_ih,  [r_h, z_h, n_h] = h W_hh^T + b_hh
//         r = sigmoid(r_x + r_h),  z = sigmoid(z_x + z_h),  n = tanh(n_x + r * n_h)
//         h' = (1 - z) * n + z * h
// Every weight enters through ONE matrix product per step (attn::linear).
#pragma once

#include "module.hpp"

#include <string>

namespace attn::nn {

enum class Nonlinearity { Tanh, ReLU };  // of the Elman RNN

// The state of an LSTM: hidden state h and cell state c. In a cell both are
// [B, H]; in the sequence layer LSTM (rnn.hpp) both are [num_layers * D, B, H].
// Undefined tensors mean zeros.
struct LSTMState {
  Tensor h, c;
};

// One step of each recurrence, given the input's share xw [B, G] (G = H, 4H or 3H).
// The cells below compute xw one step at a time; the sequence layers compute it
// for every step at once, then call these. For the RNN and the LSTM, xw already
// holds both biases, xw = x W_ih^T + (b_ih + b_hh), and the step adds h W_hh^T
// onto it in one op (linear with a whole bias). The GRU's b_hh stays apart, since
// the reset gate scales h W_hn^T + b_hn: there xw = x W_ih^T + b_ih, and bias_hh
// may be undefined (bias=false).
Tensor rnn_step(const Tensor& xw, const Tensor& h, const Tensor& weight_hh, Nonlinearity nonlinearity);
LSTMState lstm_step(const Tensor& xw, const LSTMState& state, const Tensor& weight_hh);
Tensor gru_step(const Tensor& xw, const Tensor& h, const Tensor& weight_hh, const Tensor& bias_hh);
// b_ih + b_hh [G], or undefined without biases: the RNN's and the LSTM's xw bias.
Tensor both_biases(const Tensor& bias_ih, const Tensor& bias_hh);

// What the three cells share: weight_ih [G, in], weight_hh [G, H], bias_ih [G],
// bias_hh [G], all drawn uniform(-1/sqrt(H), 1/sqrt(H)) as PyTorch does.
class RNNCellBase : public Module {
 public:
  std::string extra_repr() const override;

  std::size_t input_size, hidden_size;
  bool bias;
  Tensor weight_ih, weight_hh, bias_ih, bias_hh;

 protected:
  RNNCellBase(const char* type_name, std::size_t input_size, std::size_t hidden_size, bool bias,
              std::size_t num_gates);
  // Checks x [B, input_size] and a state tensor [B, hidden_size] (zeros if undefined), which it returns.
  Tensor checked_state(const Tensor& x, const Tensor& state, const char* state_name) const;
};

class RNNCell : public RNNCellBase {
 public:
  RNNCell(std::size_t input_size, std::size_t hidden_size, bool bias = true,
          Nonlinearity nonlinearity = Nonlinearity::Tanh);
  // x [B, in], h [B, H] (zeros if undefined) -> h' [B, H]
  Tensor forward(const Tensor& x, const Tensor& h = Tensor()) const;
  Tensor operator()(const Tensor& x, const Tensor& h = Tensor()) const { return forward(x, h); }
  std::string extra_repr() const override;

  Nonlinearity nonlinearity;
};

class LSTMCell : public RNNCellBase {
 public:
  LSTMCell(std::size_t input_size, std::size_t hidden_size, bool bias = true);
  // x [B, in], state (h, c) [B, H] each (zeros if undefined) -> (h', c')
  LSTMState forward(const Tensor& x, const LSTMState& state = {}) const;
  LSTMState operator()(const Tensor& x, const LSTMState& state = {}) const { return forward(x, state); }
};

class GRUCell : public RNNCellBase {
 public:
  GRUCell(std::size_t input_size, std::size_t hidden_size, bool bias = true);
  // x [B, in], h [B, H] (zeros if undefined) -> h' [B, H]
  Tensor forward(const Tensor& x, const Tensor& h = Tensor()) const;
  Tensor operator()(const Tensor& x, const Tensor& h = Tensor()) const { return forward(x, h); }
};

}  // namespace attn::nn
