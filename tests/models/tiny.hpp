// What the chapter models' tests share: a tiny padded batch, an end-to-end
// gradient check over every parameter, and the check that decoding one step at
// a time gives the logits of forward().
#pragma once

#include "../helpers.hpp"

#include "models/seq2seq.hpp"

#include <string>
#include <vector>

namespace test {

// Two sentences over a vocabulary of 5 (ids 0..4, 0 = <pad>, 1 = <bos>, 2 = <eos>):
// sources of lengths 4 and 2 (padded), targets of 3 steps without padding, so
// that every logit depends on real tokens only.
struct TinyBatch {
  attn::Index src = {{3, 4, 4, 3}, {4, 3, 0, 0}};  // [2, 4]
  std::vector<std::size_t> src_lengths = {4, 2};
  attn::Index tgt_in = {{1, 3, 4}, {1, 4, 2}};      // [2, 3]
};

// gradcheck of sum(forward(...) * r) with respect to the parameters named in
// `names` (all of them when empty). Returns how many parameters were checked.
inline std::size_t gradcheck_parameters(attn::models::Seq2Seq& model, const TinyBatch& batch,
                                        const std::vector<std::string>& names = {}) {
  std::vector<attn::Tensor> params;
  std::vector<std::string> checked;
  for (auto& [name, p] : model.named_parameters()) {
    bool wanted = names.empty();
    for (const auto& n : names) wanted = wanted || name.rfind(n, 0) == 0;
    if (wanted) {
      params.push_back(p);
      checked.push_back(name);
    }
  }
  auto f = [&](const std::vector<attn::Tensor>&) { return model.forward(batch.src, batch.src_lengths, batch.tgt_in); };
  const attn::GradcheckReport report = attn::gradcheck(f, params);
  std::string names_checked;
  for (const auto& n : checked) names_checked += n + " ";
  INFO("parameters: " << names_checked);
  INFO(report.str());
  CHECK(report.ok);
  return params.size();
}

// Logits of step() fed the teacher-forced prefix tgt_in[:, :t+1] against forward()'s [:, t].
inline double max_step_forward_difference(attn::models::Seq2Seq& model, const TinyBatch& batch) {
  const xt::xarray<double> full = model.forward(batch.src, batch.src_lengths, batch.tgt_in).to_array();  // [B, T, V]
  attn::models::DecoderState state = model.start(batch.src, batch.src_lengths);
  const std::size_t B = batch.tgt_in.shape()[0], T = batch.tgt_in.shape()[1];
  double worst = 0.0;
  for (std::size_t t = 0; t < T; ++t) {
    attn::Index prefix = attn::Index::from_shape({B, t + 1});
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t j = 0; j <= t; ++j) prefix(b, j) = batch.tgt_in(b, j);
    const xt::xarray<double> logits = model.step(state, prefix).to_array();  // [B, V]
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t v = 0; v < logits.shape()[1]; ++v)
        worst = std::max(worst, std::abs(logits(b, v) - full(b, t, v)));
  }
  return worst;
}

}  // namespace test
