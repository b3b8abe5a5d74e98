#include "show_attend_tell.hpp"

#include <string>

namespace attn::models {

namespace {

// The captioner reads the encoder's D features per cell. (The encoder, built first, has checked its channels.)
GridCaptionerConfig captioner_config(const ShowAttendTellConfig& c) {
  GridCaptionerConfig captioner = c.captioner;
  const std::size_t D = c.encoder.channels.back();
  if (captioner.feature_dim == 0) captioner.feature_dim = D;
  if (captioner.feature_dim != D)
    throw ValueError("ShowAttendTell: captioner.feature_dim is " + std::to_string(captioner.feature_dim) +
                     " but the encoder's last block has " + std::to_string(D) +
                     " channels; set it to that, or to 0 to take it");
  return captioner;
}

}  // namespace

ShowAttendTell::ShowAttendTell(const ShowAttendTellConfig& cfg)
    : Module("ShowAttendTell"), encoder(cfg.encoder), captioner(captioner_config(cfg)) {
  register_module("encoder", encoder);
  register_module("captioner", captioner);
}

Tensor ShowAttendTell::encode(const Tensor& images) { return encoder(images); }  // [B, rows * cols, D]

Tensor ShowAttendTell::forward(const Tensor& images, const Index& tgt_in) { return forward_all(images, tgt_in).logits; }

CaptionerOutput ShowAttendTell::forward_all(const Tensor& images, const Index& tgt_in) {
  return captioner.forward_all(encode(images), tgt_in);
}

CaptionerOutput ShowAttendTell::forward_all(const Tensor& images, const Index& tgt_in, const Index& cells) {
  return captioner.forward_all(encode(images), tgt_in, cells);
}

DecoderState ShowAttendTell::start(const Tensor& images) { return captioner.start(encode(images)); }

Tensor ShowAttendTell::step(DecoderState& state, const Index& y_prev) { return captioner.step(state, y_prev); }

}  // namespace attn::models
