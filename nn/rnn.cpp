#include "rnn.hpp"

#include "../core/backend/fused.hpp"
#include "../core/ops.hpp"

#include <algorithm>
#include <cmath>

namespace attn::nn {

namespace {

using Mode = RNNBase::Mode;

std::size_t num_gates(Mode mode) { return mode == Mode::LSTM ? 4 : mode == Mode::GRU ? 3 : 1; }

// Where the padding is. Steps before min_length have none; at a later step t,
// real[t] [B, H] is true in the rows of the sequences that are still going (t < length).
struct Padding {
  std::size_t min_length;
  std::vector<Mask> real;
};

Padding find_padding(const std::string& name, const Lengths& lengths, std::size_t T, std::size_t B,
                     std::size_t H) {
  Padding padding{T, {}};
  if (lengths.empty()) return padding;
  if (lengths.values.size() != B)
    throw ShapeError(name + ": expected one length per sequence (B = " + std::to_string(B) + "), got " +
                     std::to_string(lengths.values.size()) + " lengths");
  for (std::size_t b = 0; b < B; ++b) {
    const std::int64_t n = lengths.values[b];
    if (n < 1 || n > static_cast<std::int64_t>(T))
      throw ValueError(name + ": every length must be in 1..T (T = " + std::to_string(T) + "), got lengths[" +
                       std::to_string(b) + "] = " + std::to_string(n));
    padding.min_length = std::min(padding.min_length, static_cast<std::size_t>(n));
  }
  padding.real.resize(T);
  for (std::size_t t = padding.min_length; t < T; ++t) {
    Mask real = Mask::from_shape({B, H});
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t j = 0; j < H; ++j) real(b, j) = static_cast<std::int64_t>(t) < lengths.values[b];
    padding.real[t] = std::move(real);
  }
  return padding;
}

// One step of the RNN or the GRU (the LSTM runs whole layers: run_lstm_layer).
Tensor step(Mode mode, Nonlinearity nonlinearity, const Tensor& xw, const Tensor& h, const RNNWeights& w) {
  if (mode == Mode::GRU) return gru_step(xw, h, w.weight_hh, w.bias_hh);
  return rnn_step(xw, h, w.weight_hh, nonlinearity);
}

// The input's share of every step at once, in one product: [T, B, in] x W_ih^T -> [T, B, G].
// Its bias is b_ih + b_hh, except in the GRU (see rnn_cell.hpp).
Tensor input_share(Mode mode, const Tensor& x, const RNNWeights& w) {
  const Tensor bias = mode == Mode::GRU ? w.bias_ih : both_biases(w.bias_ih, w.bias_hh);
  return linear(x, w.weight_ih, bias);
}

// One RNN or GRU layer in one direction over the whole sequence x [T, B, in]: the
// output of every step [T, B, H] and the final h.
LSTMOutput run_direction(Mode mode, Nonlinearity nonlinearity, const Tensor& x, const RNNWeights& w, Tensor h,
                         bool reverse, const Padding& padding) {
  const std::size_t T = x.size(0);
  Tensor xw = input_share(mode, x, w);
  std::vector<Tensor> outputs(T);
  for (std::size_t k = 0; k < T; ++k) {
    const std::size_t t = reverse ? T - 1 - k : k;
    Tensor next = step(mode, nonlinearity, select(xw, 0, static_cast<long>(t)), h, w);  // step t's [B, G]
    if (t >= padding.min_length) {
      // Padded rows keep their state and output zeros: the backward direction thus
      // starts from the initial state at each sequence's own last step.
      const Mask& real = padding.real[t];
      next = attn::where(real, next, h);  // attn::, not xt::where (found through Mask)
      outputs[t] = masked_fill(next, !real, 0.0);
    } else {
      outputs[t] = next;
    }
    h = next;
  }
  return {stack(outputs, 0), h, Tensor()};  // [T, B, H]
}

// One LSTM layer, all its directions at once, as the fused op lstm_sequence
// (core/backend/lstm_sequence.cpp): the same steps as lstm_step (rnn_cell.hpp) with the
// same padding rule, run as one op whose backward computes W_hh's gradient in one
// product over all steps, and whose directions run on two threads at once.
// Returns the output [T, B, D * H] and each direction's final h and c [B, H].
struct LSTMLayerOutput {
  Tensor output;
  std::vector<Tensor> h, c;
};

LSTMLayerOutput run_lstm_layer(const Tensor& x, const std::vector<RNNWeights>& w, const std::vector<LSTMState>& init,
                               const Lengths& lengths) {
  const long T = static_cast<long>(x.size(0));
  const std::size_t H = w[0].weight_hh.size(1);
  std::vector<LSTMDirection> directions;
  for (std::size_t d = 0; d < w.size(); ++d)
    directions.push_back({input_share(Mode::LSTM, x, w[d]), init[d].h, init[d].c, w[d].weight_hh, d == 1});
  Tensor y = lstm_sequence(directions, lengths.values);  // [T + 2, B, D * H]
  LSTMLayerOutput out{narrow(y, 0, 0, static_cast<std::size_t>(T)), {}, {}};
  const Tensor final_h = select(y, 0, T), final_c = select(y, 0, T + 1);  // [B, D * H]
  for (std::size_t d = 0; d < w.size(); ++d) {
    out.h.push_back(narrow(final_h, 1, d * H, H));
    out.c.push_back(narrow(final_c, 1, d * H, H));
  }
  return out;
}

}  // namespace

RNNBase::RNNBase(const char* type_name, Mode mode, std::size_t input_size, std::size_t hidden_size,
                 const RNNOptions& options)
    : Module(type_name), input_size(input_size), hidden_size(hidden_size), options(options), mode_(mode) {
  const std::string name = type_name;
  if (input_size == 0 || hidden_size == 0)
    throw ValueError(name + ": input_size and hidden_size must be positive, got " + std::to_string(input_size) +
                     " and " + std::to_string(hidden_size));
  if (options.num_layers == 0) throw ValueError(name + ": num_layers must be at least 1");
  if (!(options.dropout >= 0.0 && options.dropout <= 1.0))
    throw ValueError(name + ": dropout must be in [0, 1], got " + std::to_string(options.dropout));

  const std::size_t D = num_directions(), G = num_gates(mode) * hidden_size;
  const double k = 1.0 / std::sqrt(static_cast<double>(hidden_size));  // PyTorch's init bound
  weights.resize(options.num_layers * D);  // sized once: the registered pointers stay valid
  for (std::size_t layer = 0; layer < options.num_layers; ++layer) {
    const std::size_t in = layer == 0 ? input_size : D * hidden_size;
    for (std::size_t d = 0; d < D; ++d) {
      RNNWeights& w = weights[layer * D + d];
      const std::string suffix = "_l" + std::to_string(layer) + (d == 1 ? "_reverse" : "");
      w.weight_ih = uniform({G, in}, -k, k);
      w.weight_hh = uniform({G, hidden_size}, -k, k);
      register_parameter("weight_ih" + suffix, w.weight_ih);
      register_parameter("weight_hh" + suffix, w.weight_hh);
      if (options.bias) {
        w.bias_ih = uniform({G}, -k, k);
        w.bias_hh = uniform({G}, -k, k);
        register_parameter("bias_ih" + suffix, w.bias_ih);
        register_parameter("bias_hh" + suffix, w.bias_hh);
      }
    }
  }
}

std::string RNNBase::extra_repr() const {
  std::string s = std::to_string(input_size) + ", " + std::to_string(hidden_size);
  if (options.num_layers != 1) s += ", num_layers=" + std::to_string(options.num_layers);
  if (mode_ == Mode::RNN && options.nonlinearity == Nonlinearity::ReLU) s += ", nonlinearity=relu";
  if (!options.bias) s += ", bias=false";
  if (options.batch_first) s += ", batch_first=true";
  if (options.dropout != 0.0) s += ", dropout=" + std::to_string(options.dropout);
  if (options.bidirectional) s += ", bidirectional=true";
  return s;
}

LSTMOutput RNNBase::run(const Tensor& input, const Tensor& h0, const Tensor& c0, const Lengths& lengths) const {
  const std::string name = type_name();
  const std::string layout = options.batch_first ? "[B, T, " : "[T, B, ";
  if (!input.defined()) throw ValueError(name + ": the input is undefined");
  if (input.dim() != 3 || input.size(2) != input_size)
    throw ShapeError(name + ": expected input of shape " + layout + std::to_string(input_size) + "]" +
                     (options.batch_first ? " (batch_first)" : "") + ", got " + shape_str(input.shape()));
  if (input.dtype() != weights[0].weight_ih.dtype())
    throw ValueError(name + ": the input is " + dtype_name(input.dtype()) + " but the parameters are " +
                     dtype_name(weights[0].weight_ih.dtype()) + " (convert one with .to())");
  Tensor x = options.batch_first ? transpose(input, 0, 1) : input;  // [T, B, in]
  const std::size_t T = x.size(0), B = x.size(1), H = hidden_size, D = num_directions();
  if (T == 0 || B == 0)
    throw ShapeError(name + ": expected at least one step and one sequence, got input " + shape_str(input.shape()));

  const Shape state_shape{options.num_layers * D, B, H};
  auto check_state = [&](const Tensor& s, const char* what) {
    if (s.defined() && s.shape() != state_shape)
      throw ShapeError(name + ": expected " + what + " of shape " + shape_str(state_shape) +
                       " (num_layers * num_directions, B, hidden_size), got " + shape_str(s.shape()));
  };
  check_state(h0, "h0");
  check_state(c0, "c0");
  auto initial = [&](const Tensor& s, std::size_t k) {
    return s.defined() ? select(s, 0, static_cast<long>(k)) : zeros({B, H}, input.dtype());  // [B, H]
  };
  const Padding padding = find_padding(name, lengths, T, B, H);

  std::vector<Tensor> h_n, c_n;
  for (std::size_t layer = 0; layer < options.num_layers; ++layer) {
    if (mode_ == Mode::LSTM) {
      std::vector<LSTMState> init;
      for (std::size_t d = 0; d < D; ++d) init.push_back({initial(h0, layer * D + d), initial(c0, layer * D + d)});
      const std::vector<RNNWeights> w(weights.begin() + layer * D, weights.begin() + (layer + 1) * D);
      LSTMLayerOutput r = run_lstm_layer(x, w, init, lengths);
      h_n.insert(h_n.end(), r.h.begin(), r.h.end());
      c_n.insert(c_n.end(), r.c.begin(), r.c.end());
      x = r.output;  // [T, B, D * H]
    } else {
      std::vector<Tensor> outputs;  // one [T, B, H] per direction
      for (std::size_t d = 0; d < D; ++d) {
        const std::size_t k = layer * D + d;
        LSTMOutput r = run_direction(mode_, options.nonlinearity, x, weights[k], initial(h0, k), d == 1, padding);
        outputs.push_back(r.output);
        h_n.push_back(r.h);
      }
      x = D == 1 ? outputs[0] : concat(outputs, 2);  // [T, B, D * H]
    }
    if (layer + 1 < options.num_layers && options.dropout > 0.0 && is_training())
      x = dropout(x, options.dropout, true);
  }
  return {options.batch_first ? transpose(x, 0, 1) : x,  // [T, B, D * H] or [B, T, D * H]
          stack(h_n, 0),                                  // [L * D, B, H]
          mode_ == Mode::LSTM ? stack(c_n, 0) : Tensor()};
}

RNN::RNN(std::size_t input_size, std::size_t hidden_size, const RNNOptions& options)
    : RNNBase("RNN", Mode::RNN, input_size, hidden_size, options) {}

RNNOutput RNN::forward(const Tensor& input, const Tensor& h0, const Lengths& lengths) const {
  LSTMOutput r = run(input, h0, Tensor(), lengths);
  return {r.output, r.h};
}

LSTM::LSTM(std::size_t input_size, std::size_t hidden_size, const RNNOptions& options)
    : RNNBase("LSTM", Mode::LSTM, input_size, hidden_size, options) {}

LSTMOutput LSTM::forward(const Tensor& input, const LSTMState& state, const Lengths& lengths) const {
  return run(input, state.h, state.c, lengths);
}

GRU::GRU(std::size_t input_size, std::size_t hidden_size, const RNNOptions& options)
    : RNNBase("GRU", Mode::GRU, input_size, hidden_size, options) {}

RNNOutput GRU::forward(const Tensor& input, const Tensor& h0, const Lengths& lengths) const {
  LSTMOutput r = run(input, h0, Tensor(), lengths);
  return {r.output, r.h};
}

}  // namespace attn::nn
