// Chapter 4: attention over a grid, after Show, Attend and Tell (Xu et al. 2015).
//
// The encoder is gone: a grid of N cells (3x3 = 9), each a feature vector of D
// values as if a trained CNN had looked at that part of the image, IS the set of
// encoder states h_j (after an optional Linear projection). A recurrent decoder
// writes the caption one word at a time, looking at the grid through attention:
//
//   start     s_0 = tanh(W_h mean_j h_j),  m_0 = tanh(W_c mean_j h_j)   (LSTM hidden and cell state)
//   at step t, BEFORE the decoder step, from the previous state s_{t-1}:
//   scores    e_tj = v^T tanh(W_1 s_{t-1} + W_2 h_j)       (W_2 h_j computed once per grid)
//   weights   a_tj = softmax_j(e_tj)
//   context   soft: c_t = sum_j a_tj h_j                   (a weighted sum, deterministic)
//             hard: c_t = h_k for ONE cell k               (training: k ~ a_t, a sample;
//                                                           inference: k = argmax_j a_tj)
//   gate      (config.gate) beta_t = sigmoid(f_beta(s_{t-1})), c_t <- beta_t c_t   (a scalar per image and step)
//   decoder   s_t = LSTMCell([y_{t-1}; c_t], (s_{t-1}, m_{t-1}))
//   output    p(y_t) = softmax(L_o tanh(y_{t-1} + L_s s_t + L_c c_t))    (the paper's "deep output",
//                                                                       with a tanh and biases it has not)
//
//   GridCaptionerConfig cfg;
//   cfg.vocab = vocab.size();
//   cfg.feature_dim = 32;
//   cfg.gate = true;                                   // Xu et al.'s beta_t (off by default)
//   GridCaptioner model(cfg);
//   Tensor logits = model.forward(features, tgt_in);   // [B, 9, D], [B, T] -> [B, T, V]
//   model.last_attention();                            // [B, T, 9]: reshape a row to [3, 3]
//
//   cfg.attention = GridAttention::Hard;
//   GridCaptioner hard(cfg);                           // in training mode, forward_all samples a cell a step
//   CaptionerOutput out = hard.forward_all(features, tgt_in);   // out.cells [B, T]: the cells it read
//   hard.forward_all(features, tgt_in, out.cells);             // the same pass again, replayed
//
// Hard attention has no gradient through the choice of k: the attention MLP is
// trained by the score-function (REINFORCE) estimator of train/grid_loss.hpp,
// which needs the log-probability of every choice made: forward_all() returns it.
// GridAttention::HardAtInference skips all that (soft in training, argmax at
// inference): cheap, but the decoder then reads contexts it never saw in training.
// forward_all(features, tgt_in, cells) replays given choices instead of sampling
// them (out.cells of an earlier pass reproduces that pass exactly): a path's
// log-probability and gradients, for a reference to compare against.
//
// The gate (Xu et al. sec. 4.2.1) lets the decoder turn the image down when a word
// needs little of it; the paper found that it made the attention weights put more
// emphasis on the objects. It is off by default: chapter 4 runs without it.
// Where this differs from the paper: dropout left out; the deep output has a tanh and biases (the
// paper's eq. 7 is linear inside the softmax); the initial state is one Linear + tanh of the mean cell.
#pragma once

#include "../nn/attention/score.hpp"
#include "../nn/embedding.hpp"
#include "../nn/linear.hpp"
#include "../nn/rnn_cell.hpp"
#include "seq2seq.hpp"

#include <memory>
#include <string>

namespace attn::models {

enum class GridAttention {
  Soft,  // c_t = sum_j a_tj h_j
  Hard,  // c_t = h_k: k sampled from a_t in training mode, k = argmax_j a_tj in eval mode
  HardAtInference,  // soft in training mode, c_t = h_k with k = argmax_j a_tj in eval mode
};

struct GridCaptionerConfig {
  std::size_t vocab = 0;           // caption vocabulary size (<pad> = 0 included)
  std::size_t feature_dim = 0;     // D of the grid's feature vectors
  std::size_t encoder_dim = 0;     // > 0: h_j = Linear(D -> encoder_dim)(cell j); 0: h_j = cell j itself
  std::size_t embed_dim = 32;      // word embeddings; also the size of the deep output's hidden layer
  std::size_t decoder_dim = 64;
  std::size_t attention_dim = 64;  // the attention MLP's hidden layer (W_1, W_2: [A, .])
  GridAttention attention = GridAttention::Soft;
  // Hard attention in training: the probability that an image (a row of the batch)
  // reads the expected context sum_j a_tj h_j (soft) instead of sampled cells, for
  // its whole caption in that forward pass; drawn per image, so one batch mixes
  // both. The paper does this "with probability 0.5 for a given image" to reduce
  // the variance of learning. A soft row makes no choice: its choice_log_prob is 0.
  double soft_probability = 0.0;
  // Xu et al.'s gate (sec. 4.2.1): c_t <- beta_t c_t with beta_t = sigmoid(f_beta(s_{t-1})),
  // f_beta a Linear(decoder_dim -> 1), for soft and hard attention alike.
  bool gate = false;
};

// Everything a forward pass computed, for the losses of train/grid_loss.hpp.
struct CaptionerOutput {
  Tensor logits;       // [B, T, V]
  Tensor weights;      // a_tj [B, T, N]: the attention distribution (differentiable)
  Tensor used;         // [B, T, N]: the weights that made c_t (a_tj, or one-hot for hard), detached
  Tensor choice_log_prob;  // log a_{t,k} of each sampled cell k [B, T] (0 at images read soft); undefined unless hard and training, or replayed
  xt::xarray<bool> sampled;  // [B]: the images whose cells were sampled (not read soft); set with choice_log_prob
  Tensor entropy;      // H(a_t) = -sum_j a_tj log a_tj [B, T] (differentiable)
  Tensor gate;         // beta_t [B, T] (differentiable); undefined unless config.gate
  Index cells;         // the cell k of every step [B, T], -1 at images read soft; set (2-d) with choice_log_prob
};

class GridCaptioner : public nn::Module {
 public:
  // Weights drawn from default_generator(), as every layer; so are the cells of hard attention.
  explicit GridCaptioner(const GridCaptionerConfig& config);

  // features [B, N, D] (N cells of D features), tgt_in [B, T] = <bos> + caption (teacher forcing).
  Tensor forward(const Tensor& features, const Index& tgt_in);  // logits [B, T, V]
  CaptionerOutput forward_all(const Tensor& features, const Index& tgt_in);
  // Hard attention reading the given cells [B, T] instead of drawing them, in either mode:
  // cells(b, t) = k makes c_t = h_k; a row of -1 is an image read soft for its whole
  // caption (the mixture's). choice_log_prob, sampled and cells are set as when sampling,
  // and nothing is drawn from the generator. Needs GridAttention::Hard.
  CaptionerOutput forward_all(const Tensor& features, const Index& tgt_in, const Index& cells);

  // Decoding one word at a time. start() fills state.tensors: "memory" h_j [B, N, H],
  // "keys" W_2 h_j [B, N, A], decoder state "h", "c" [B, decoder_dim]. step() takes
  // the previous words y_prev [B] and returns logits [B, V]; it sets
  // state.attention["attention"] [B, N] (the weights that made c_t) and
  // state.attention["alpha"] [B, N] (the distribution a_t, the same when soft), and
  // with config.gate state.attention["gate"] [B, 1] (beta_t).
  DecoderState start(const Tensor& features);
  Tensor step(DecoderState& state, const Index& y_prev);

  // The weights that made c_t in the last forward(), per step: [B, T, N], detached.
  const Tensor& last_attention() const { return last_attention_; }
  std::string extra_repr() const override;

  GridCaptionerConfig config;
  std::unique_ptr<nn::Linear> project;  // D -> encoder_dim; null when encoder_dim = 0
  nn::Linear init_h, init_c;       // mean_j h_j -> s_0, m_0
  nn::Embedding embed;             // padding_idx = <pad>
  nn::AdditiveScore attention;     // e_tj = v^T tanh(W_1 s_{t-1} + W_2 h_j)
  nn::LSTMCell decoder;            // [y_{t-1}; c_t] -> s_t
  nn::Linear out_state, out_context, out;  // the deep output: L_s, L_c, L_o
  std::unique_ptr<nn::Linear> f_beta;   // s_{t-1} -> the gate's logit [B, 1]; null unless config.gate

 private:
  struct Step {  // what one decoder step makes besides the new state
    Tensor output;       // the deep output's logits [B, V]
    Tensor weights;      // a_t [B, N]
    Tensor used;         // [B, N]
    Tensor choice_log_prob;  // [B] or undefined
    Tensor entropy;      // [B]
    Tensor gate;         // beta_t [B, 1] or undefined
    Index cells;         // k [B] when hard (-1 at replayed soft rows), else 0-d (unset)
  };
  // y_prev: embedded [B, E]; replayed: the cells of this step [B] (forward_all's `cells`), or null.
  Step decode(DecoderState& state, const Tensor& y_prev, const Index* replayed = nullptr);
  CaptionerOutput teacher_forced(const Tensor& features, const Index& tgt_in, const Index* cells);
  Tensor encode(const Tensor& features) const;             // checks, then h_j [B, N, H]
  Tensor last_attention_;
  // Hard attention in training with soft_probability > 0: which images of this forward pass read the
  // expected context (drawn per image, once per pass), and soft_mask_ [B, 1] with 1 at those rows.
  enum class SoftRows { None, Some, All };
  SoftRows soft_rows_ = SoftRows::None;
  Tensor soft_mask_;
};

}  // namespace attn::models
