// Recurrent layers over whole sequences, as PyTorch's nn.RNN, nn.LSTM and nn.GRU:
// several layers, optionally bidirectional, with padded batches of sequences
// of different lengths.
//
//   attn::nn::RNNOptions opt;
//   opt.num_layers = 2;
//   opt.bidirectional = true;
//   attn::nn::LSTM lstm(16, 32, opt);                // input_size 16, hidden_size 32
//   auto [output, h, c] = lstm(x, {}, lengths);       // x [T, B, 16], zero initial state
//   // output [T, B, 2 * 32]; h, c [2 * 2, B, 32]
//
// Shapes, with D = 2 if bidirectional else 1 and L = num_layers:
//   input  [T, B, input_size]    ([B, T, input_size] if batch_first)
//   output [T, B, D * H]         ([B, T, D * H] if batch_first): every step of the last layer,
//                                the forward and backward directions side by side
//   h, c   [L * D, B, H]         the final states (never batch-first, as PyTorch), in the order
//                                layer 0 forward, layer 0 backward, layer 1 forward, ...
// Initial states h0 (and c0) have the shape of h (and c); undefined means zeros.
//
// `lengths` (one per sequence, each in 1..T) marks the steps after a sequence's end
// as padding. As with PyTorch's pack_padded_sequence, padding then changes nothing:
// the output is zero there, the final states are those of each sequence's last
// valid step, and the backward direction starts at that step.
//
// Parameters, as PyTorch names them: weight_ih_l{k} [G, in_k], weight_hh_l{k} [G, H],
// bias_ih_l{k} [G], bias_hh_l{k} [G], with the suffix _reverse for the backward
// direction; G = H (RNN), 4H (LSTM: gates i, f, g, o) or 3H (GRU: r, z, n), and
// in_k = input_size for layer 0, D * H above it.
#pragma once

#include "module.hpp"
#include "rnn_cell.hpp"

#include <initializer_list>
#include <string>
#include <vector>

namespace attn::nn {

struct RNNOptions {
  std::size_t num_layers = 1;
  bool bias = true;
  bool batch_first = false;  // false as PyTorch: time-major [T, B, features]
  double dropout = 0.0;      // on the outputs of every layer but the last, in training
  bool bidirectional = false;
  Nonlinearity nonlinearity = Nonlinearity::Tanh;  // RNN only
};

// The options every model of the course uses: batch-first [B, T, features], one direction
// or both.  nn::LSTM encoder(E, H, nn::batch_first());  nn::batch_first(/*bidirectional=*/true)
inline RNNOptions batch_first(bool bidirectional = false) {
  RNNOptions options;
  options.batch_first = true;
  options.bidirectional = bidirectional;
  return options;
}

// The valid length of each sequence of a padded batch: from a std::vector<std::size_t>,
// an attn::Index, or a brace list {5, 3, 4}. Empty: every sequence is full length.
struct Lengths {
  Lengths() = default;
  Lengths(std::initializer_list<std::size_t> values) : values(values.begin(), values.end()) {}
  Lengths(const std::vector<std::size_t>& values) : values(values.begin(), values.end()) {}
  Lengths(const Index& values) : values(values.begin(), values.end()) {
    if (values.dimension() != 1)
      throw ShapeError("lengths: expected a 1-D Index, got shape " + shape_str(Shape(values.shape().begin(), values.shape().end())));
  }
  bool empty() const { return values.empty(); }
  std::vector<std::int64_t> values;  // signed, so that bad values can be reported, not wrapped
};

// What RNN and GRU return; LSTM adds the final cell state c.
struct RNNOutput {
  Tensor output, h;
};
struct LSTMOutput {
  Tensor output, h, c;
};

// The parameters of one layer in one direction.
struct RNNWeights {
  Tensor weight_ih, weight_hh, bias_ih, bias_hh;  // biases undefined if bias = false
};

// The shared driver of RNN, LSTM and GRU.
class RNNBase : public Module {
 public:
  enum class Mode { RNN, LSTM, GRU };

  std::string extra_repr() const override;
  std::size_t num_directions() const { return options.bidirectional ? 2 : 1; }

  std::size_t input_size, hidden_size;
  RNNOptions options;
  // weights[layer * num_directions() + direction], direction 1 being the backward one.
  std::vector<RNNWeights> weights;

 protected:
  RNNBase(const char* type_name, Mode mode, std::size_t input_size, std::size_t hidden_size,
          const RNNOptions& options);
  // Runs every layer and direction. c0 and the returned c are for the LSTM only.
  LSTMOutput run(const Tensor& input, const Tensor& h0, const Tensor& c0,
                 const Lengths& lengths) const;

 private:
  Mode mode_;
};

class RNN : public RNNBase {
 public:
  RNN(std::size_t input_size, std::size_t hidden_size, const RNNOptions& options = {});
  RNNOutput forward(const Tensor& input, const Tensor& h0 = Tensor(),
                    const Lengths& lengths = {}) const;
  RNNOutput operator()(const Tensor& input, const Tensor& h0 = Tensor(),
                       const Lengths& lengths = {}) const {
    return forward(input, h0, lengths);
  }
};

class LSTM : public RNNBase {
 public:
  LSTM(std::size_t input_size, std::size_t hidden_size, const RNNOptions& options = {});
  LSTMOutput forward(const Tensor& input, const LSTMState& state = {},
                     const Lengths& lengths = {}) const;
  LSTMOutput operator()(const Tensor& input, const LSTMState& state = {},
                        const Lengths& lengths = {}) const {
    return forward(input, state, lengths);
  }
};

class GRU : public RNNBase {
 public:
  GRU(std::size_t input_size, std::size_t hidden_size, const RNNOptions& options = {});
  RNNOutput forward(const Tensor& input, const Tensor& h0 = Tensor(),
                    const Lengths& lengths = {}) const;
  RNNOutput operator()(const Tensor& input, const Tensor& h0 = Tensor(),
                       const Lengths& lengths = {}) const {
    return forward(input, h0, lengths);
  }
};

}  // namespace attn::nn
