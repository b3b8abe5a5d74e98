// Show, Attend and Tell (Xu et al. 2015) on pixels: the CNN of models/cnn_encoder.hpp
// computes the grid of annotation vectors a_j from the image, and chapter 4's decoder
// (models/grid_captioner.hpp: soft or hard attention, the gate beta, the deep output)
// writes the caption over it. Trained end to end from scratch: the caption's loss
// (train/grid_loss.hpp) reaches the convolutions through the attention (the paper's
// encoder is a pretrained VGG it does not train: models/cnn_encoder.hpp says how they differ).
//
//   images [B, 3, H, W] --CnnEncoder--> a [B, L, D] (L = rows * cols cells, row-major)
//                       --GridCaptioner--> logits [B, T, V], a_tj [B, T, L]
//
//   ShowAttendTellConfig cfg;
//   cfg.encoder.channels = {16, 32, 64};        // 64 x 64 images -> an 8 x 8 grid of D = 64
//   cfg.captioner.vocab = vocab.size();         // captioner.feature_dim is taken from the encoder
//   cfg.captioner.gate = true;
//   ShowAttendTell model(cfg);
//   CaptionerOutput out = model.forward_all(images, tgt_in);     // as GridCaptioner's: caption_loss takes it
//   model.eval();
//   Tensor a = model.encode(images);                             // [B, 64, 64]
//   std::vector<Hypothesis> caps = greedy_caption(model.captioner, a);  // decode/grid_decode.hpp
//   attention_grid(caps[0], model.grid_size(64, 64)[0]);        // [T, 8, 8]
//
// (decode/grid_decode.hpp also takes the model and the images directly.)
//
// state_dict keys: "encoder." + the encoder's (numbered as a PyTorch nn.Sequential:
// encoder.0.weight, encoder.1.running_mean, ...), "captioner." + the grid captioner's
// (captioner.init_h.weight, captioner.attention.W1, captioner.f_beta.weight, ...).
// tools/reference/show_attend_tell.py is the same model in PyTorch under these names.
#pragma once

#include "cnn_encoder.hpp"
#include "grid_captioner.hpp"

namespace attn::models {

struct ShowAttendTellConfig {
  CnnEncoderConfig encoder;
  // The decoder; feature_dim 0 takes the encoder's D (its last channels), any other
  // value must equal it.
  GridCaptionerConfig captioner;
};

class ShowAttendTell : public nn::Module {
 public:
  // The encoder's weights are drawn first, then the captioner's (default_generator()).
  explicit ShowAttendTell(const ShowAttendTellConfig& config);

  // images [B, C, H, W] -> annotation vectors [B, rows * cols, D] (row-major cells).
  Tensor encode(const Tensor& images);

  // Teacher forcing: images [B, C, H, W], tgt_in [B, T] = <bos> + caption.
  Tensor forward(const Tensor& images, const Index& tgt_in);  // logits [B, T, V]
  CaptionerOutput forward_all(const Tensor& images, const Index& tgt_in);
  // Hard attention reading given cells [B, T] (GridCaptioner::forward_all's replay).
  CaptionerOutput forward_all(const Tensor& images, const Index& tgt_in, const Index& cells);

  // Decoding one word at a time: start() encodes the images (in the current mode:
  // eval() first, for batch norm's running statistics), step() is the captioner's.
  DecoderState start(const Tensor& images);
  Tensor step(DecoderState& state, const Index& y_prev);  // y_prev [B] -> logits [B, V]

  // {rows, cols} of the grid an image of height x width becomes (attention_grid's rows).
  Size2 grid_size(std::size_t height, std::size_t width) const { return encoder.grid_size(height, width); }
  // The weights that made c_t in the last forward, per step: [B, T, rows * cols], detached.
  const Tensor& last_attention() const { return captioner.last_attention(); }

  CnnEncoder encoder;
  GridCaptioner captioner;
};

}  // namespace attn::models
