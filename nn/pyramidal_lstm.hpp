// A pyramidal bidirectional LSTM layer, the listener's building block in Listen, Attend and
// Spell (Chan et al. 2016, section 3.1): before the LSTM reads the sequence, every two
// consecutive steps are concatenated into one, so each layer halves the number of steps.
//
//   h^j_i = BLSTM(h^j_{i-1}, [h^{j-1}_{2i}; h^{j-1}_{2i+1}])
//
//   attn::nn::PyramidalLSTM layer(2 * 64, 64);          // reads [B, T, 128], writes [B, T/2, 128]
//   attn::nn::PyramidalOutput r = layer(x, lengths);    // x [B, T, 128], lengths {T_b}
//   r.output;   // [B, ceil(T / 2), 2 * 64]: forward and backward states side by side
//   r.lengths;  // ceil(T_b / 2): the valid steps of each sequence after the halving
//
// Three such layers on top of an ordinary BLSTM turn 100 frames a second into 12.5 states
// a second: the attention that follows scores 8 times fewer keys, and each key spans
// 80 ms of audio instead of 10 ms.
//
// Odd lengths keep their last step: it is paired with a zero step, as if the sequence had
// been padded by one silent frame (the paper does not say; truncating would drop audio).
// Steps beyond a sequence's length are set to zero before pairing, so padding never
// leaks into a valid step. Batch-first throughout, as the listener is.
#pragma once

#include "module.hpp"
#include "rnn.hpp"

#include <string>
#include <vector>

namespace attn::nn {

// [B, T, F] -> [B, ceil(T / 2), 2F]: step i of the result is [x_{2i}; x_{2i+1}], with a zero
// step appended first when T is odd. No parameters: the reshape of one layer of the pyramid.
Tensor pair_steps(const Tensor& x);

// ceil(length / 2) for each length.
std::vector<std::size_t> halve_lengths(const std::vector<std::size_t>& lengths);

struct PyramidalOutput {
  Tensor output;                     // [B, ceil(T / 2), 2 * hidden_size]
  std::vector<std::size_t> lengths;  // valid steps of each sequence: ceil(T_b / 2)
};

class PyramidalLSTM : public Module {
 public:
  // input_size: features of ONE step of the layer below (the LSTM reads 2 * input_size).
  PyramidalLSTM(std::size_t input_size, std::size_t hidden_size);

  // x [B, T, input_size], lengths (one per sequence, 1..T; empty: all T).
  PyramidalOutput forward(const Tensor& x, const std::vector<std::size_t>& lengths = {}) const;
  PyramidalOutput operator()(const Tensor& x, const std::vector<std::size_t>& lengths = {}) const {
    return forward(x, lengths);
  }
  std::string extra_repr() const override;

  std::size_t input_size, hidden_size;
  LSTM lstm;  // bidirectional, batch-first, input 2 * input_size: parameters "lstm.weight_ih_l0", ...
};

}  // namespace attn::nn
