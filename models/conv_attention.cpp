#include "conv_attention.hpp"

#include "../core/ops.hpp"
#include "checks.hpp"

#include <algorithm>

namespace attn::models {

namespace {

const ConvAttentionConfig& checked(const ConvAttentionConfig& c) {
  if (c.src_vocab == 0 || c.tgt_vocab == 0 || c.embed_dim == 0 || c.hidden_dim == 0 || c.conv_channels == 0 ||
      c.kernel1 == 0 || c.kernel2 == 0 || c.kernel3 == 0)
    throw ValueError("ConvAttentionSeq2Seq: vocabulary sizes, dims and kernel sizes must all be >= 1");
  return c;
}

}  // namespace

ConvAttentionSeq2Seq::ConvAttentionSeq2Seq(const ConvAttentionConfig& cfg)
    : Seq2Seq("ConvAttentionSeq2Seq"),
      config(checked(cfg)),
      src_embed(cfg.src_vocab, cfg.embed_dim, data::Vocab::pad_id),
      tgt_embed(cfg.tgt_vocab, cfg.embed_dim, data::Vocab::pad_id),
      init(cfg.embed_dim, cfg.hidden_dim),
      decoder(cfg.embed_dim, cfg.hidden_dim),
      attention(cfg.embed_dim, cfg.hidden_dim, cfg.conv_channels, cfg.kernel1, cfg.kernel2, cfg.kernel3, cfg.copy),
      out(cfg.embed_dim + cfg.hidden_dim, cfg.tgt_vocab) {
  register_module("src_embed", src_embed);
  register_module("tgt_embed", tgt_embed);
  register_module("init", init);
  register_module("decoder", decoder);
  register_module("attention", attention);
  register_module("out", out);
  copy_map_ = copying::default_map(cfg.src_vocab, cfg.tgt_vocab);
}

void ConvAttentionSeq2Seq::set_copy_map(const data::Vocab& src_vocab, const data::Vocab& tgt_vocab) {
  copy_map_ = copying::map_from(src_vocab, tgt_vocab, config.src_vocab, config.tgt_vocab,
                                "ConvAttentionSeq2Seq::set_copy_map");
}

std::string ConvAttentionSeq2Seq::extra_repr() const {
  return "src_vocab=" + std::to_string(config.src_vocab) + ", tgt_vocab=" + std::to_string(config.tgt_vocab) +
         ", embed_dim=" + std::to_string(config.embed_dim) + ", hidden_dim=" + std::to_string(config.hidden_dim) +
         ", copy=" + (config.copy ? "true" : "false");
}

DecoderState ConvAttentionSeq2Seq::start_with(const Index& src, const std::vector<std::size_t>& src_lengths,
                                              const Index& copy_ids, std::size_t extended_vocab) {
  check_source("ConvAttentionSeq2Seq", src, src_lengths);
  const std::size_t B = src.shape()[0];
  DecoderState state;
  state.src_lengths = src_lengths;
  const Tensor e = src_embed(src);  // [B, S, D], 0 on padding
  state.tensors["embedded"] = e;
  // [B, S, H], computed once per source; 0 on padding, so no sentence reads its batch's lengths
  state.tensors["features"] = attention.features(e, nn::padding_mask(lengths_index(src_lengths), e.size(1)));
  xt::xarray<double> len = xt::zeros<double>({B, std::size_t(1)});
  for (std::size_t b = 0; b < B; ++b) len(b, 0) = double(src_lengths[b]);
  const Tensor mean_e = div(sum(e, {1}), Tensor(len).to(e.dtype()));  // [B, D]
  state.tensors["h"] = tanh(init(mean_e));                           // h_0 [B, H]
  state.tensors["copy_ids"] = Tensor(xt::xarray<double>(xt::cast<double>(copy_ids)));
  state.tensors["extended_vocab"] = full({B}, double(extended_vocab));
  return state;
}

DecoderState ConvAttentionSeq2Seq::start(const Index& src, const std::vector<std::size_t>& src_lengths) {
  check_source("ConvAttentionSeq2Seq", src, src_lengths);
  return start_with(src, src_lengths, copying::map_source(src, copy_map_, "ConvAttentionSeq2Seq"), config.tgt_vocab);
}

DecoderState ConvAttentionSeq2Seq::start_extended(const Index& src, const std::vector<std::size_t>& src_lengths,
                                                  const ExtendedSource& extended) {
  if (!config.copy) throw ValueError("ConvAttentionSeq2Seq: the extended vocabulary needs the copy head (copy = true)");
  copying::check_extended(src, extended, "ConvAttentionSeq2Seq");
  return start_with(src, src_lengths, extended.copy_ids, extended.extended_vocab);
}

Tensor ConvAttentionSeq2Seq::decode(DecoderState& state, const Index& y_prev) {
  const Tensor y = tgt_embed(copying::clamp_to_vocab(y_prev, config.tgt_vocab));  // G y_{t-1}: [B, T, D]
  const std::size_t T = y_prev.shape()[1];
  std::vector<Tensor> hs;
  Tensor h = state.tensors.at("h");
  for (std::size_t t = 0; t < T; ++t) hs.push_back(h = decoder(select(y, 1, long(t)), h));  // h_t [B, H]
  state.tensors["h"] = h;
  const Tensor H = stack(hs, 1);  // [B, T, H]

  const Tensor& e = state.tensors.at("embedded");
  const Mask mask = nn::padding_mask(lengths_index(state.src_lengths), e.size(1));  // [B, S]
  nn::ConvolutionalAttentionOutput a = attention(e, state.tensors.at("features"), H, mask);
  state.attention["attention"] = select(a.weights, 1, long(T) - 1).detach();       // [B, S]
  last_attention_ = {{"attention", a.weights.detach()}};
  const Tensor logits = out(concat({a.context, H}, 2));  // [B, T, D + H] -> [B, T, V]
  if (!config.copy) return logits;

  state.attention["copy"] = select(a.copy_weights, 1, long(T) - 1).detach();
  state.attention["copy_gate"] = select(a.copy_gate, 1, long(T) - 1).detach();  // lambda_t [B, 1]
  last_attention_["copy"] = a.copy_weights.detach();
  last_attention_["copy_gate"] = a.copy_gate.detach();  // lambda_t [B, T, 1]
  const Index copy_ids = xt::cast<std::int64_t>(state.tensors.at("copy_ids").to_array());
  const std::size_t extended = std::size_t(state.tensors.at("extended_vocab").to_array()(0));
  const Tensor p = nn::copy_mixture(softmax(logits, -1), a.copy_weights, a.copy_gate, copy_ids, extended);
  return log(add(p, 1e-12));  // log p(y); the 1e-12 keeps ids absent from a row finite
}

Tensor ConvAttentionSeq2Seq::forward(const Index& src, const std::vector<std::size_t>& src_lengths,
                                     const Index& tgt_in) {
  check_source_target("ConvAttentionSeq2Seq", src, src_lengths, tgt_in);
  DecoderState state = start(src, src_lengths);
  return decode(state, tgt_in);
}

Tensor ConvAttentionSeq2Seq::forward_extended(const Index& src, const std::vector<std::size_t>& src_lengths,
                                              const Index& tgt_in, const ExtendedSource& extended) {
  DecoderState state = start_extended(src, src_lengths, extended);
  if (tgt_in.dimension() != 2 || tgt_in.shape()[0] != src.shape()[0] || tgt_in.shape()[1] == 0)
    throw ShapeError("ConvAttentionSeq2Seq: expected tgt_in [" + std::to_string(src.shape()[0]) + ", T >= 1], got " +
                     shape_str(Shape(tgt_in.shape().begin(), tgt_in.shape().end())));
  return decode(state, tgt_in);
}

Tensor ConvAttentionSeq2Seq::step(DecoderState& state, const Index& prefix) {
  const Index last = last_tokens("ConvAttentionSeq2Seq::step", prefix, state.tensors.at("h").size(0));  // [B, 1]
  const auto kept = last_attention_;  // last_attention() stays the last forward()'s
  Tensor out_t = select(decode(state, last), 1, 0);
  last_attention_ = kept;
  return out_t;  // [B, V] (or [B, V + n] after start_extended)
}

Tensor ConvAttentionSeq2Seq::last_copy_gate() const {
  const auto it = last_attention_.find("copy_gate");
  return it == last_attention_.end() ? Tensor() : it->second;
}

std::map<std::string, Tensor> ConvAttentionSeq2Seq::last_attention() const {
  std::map<std::string, Tensor> a;
  for (const auto& [name, t] : last_attention_)
    if (name != "copy_gate") a[name] = t;
  return a;
}

}  // namespace attn::models
