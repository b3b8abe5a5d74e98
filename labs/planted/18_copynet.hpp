// Wrong solutions of lab 18; labs/tests/test_lab18.cpp proves the grader fails each,
// with a message pointing at the mistake.
#pragma once

#include "labs/grader/grader.hpp"
#include "labs/solutions/18_copynet.hpp"

namespace lab {
namespace planted {
namespace copynet {

using attn::Index;
using attn::Tensor;

struct Joint {
  bool two_softmaxes = false, padding_copied = false, padding_zero = false, last_wins = false, copy_oov_only = false,
       copy_replaces_generate = false, by_position = false, extended_as_unk = false, unstable = false,
       detached = false, psi_c_detached = false;
  double fill = -1e30;  // the padding's fill
};

// A learner's joint distribution with one mistake; built from attn's ops unless `detached`.
inline Tensor joint(const Joint& o, const Tensor& psi_g, const Tensor& psi_c, const Index& copy_ids,
                    const std::vector<std::size_t>& lengths, std::size_t E) {
  const std::size_t B = psi_g.size(0), V = psi_g.size(-1), S = psi_c.size(-1);
  auto sm = [&](const Tensor& x) {  // unstable: exp without the maximum subtracted
    if (!o.unstable) return attn::softmax(x, -1);
    Tensor e = attn::exp(x);
    return e / attn::sum(e, {-1}, true);
  };
  attn::Mask padding = xt::zeros<bool>({B, S});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t j = lengths[b]; j < S; ++j) padding(b, j) = !o.padding_copied;
  Tensor c = attn::masked_fill(o.psi_c_detached ? psi_c.detach() : psi_c, padding, o.padding_zero ? 0.0 : o.fill);
  Tensor p_g, p_c;
  if (o.two_softmaxes) {
    p_g = sm(psi_g);
    p_c = sm(c);
  } else {
    Tensor w = sm(attn::concat({psi_g, c}, -1));
    p_g = attn::narrow(w, -1, 0, V);
    p_c = attn::narrow(w, -1, V, S);
  }
  // Where each position's copy weight goes: [B, S, E].
  xt::xarray<double> where = xt::zeros<double>({B, S, E});
  xt::xarray<double> keep_generate = xt::ones<double>({B, V});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t j = 0; j < S; ++j) {
      std::size_t id = std::size_t(copy_ids(b, j));
      if (o.extended_as_unk && id >= V) id = 3;
      if (o.copy_replaces_generate && j < lengths[b] && id < V) keep_generate(b, id) = 0.0;
      if (o.by_position) {
        if (j < E) where(b, j, j) = 1.0;
        continue;
      }
      if (o.copy_oov_only && id < V) continue;
      bool later = false;  // last_wins: only the last position holding the word counts
      for (std::size_t k = j + 1; k < S; ++k) later = later || std::size_t(copy_ids(b, k)) == id;
      if (o.last_wins && later) continue;
      where(b, j, id) = 1.0;
    }
  p_g = p_g * Tensor(keep_generate);
  if (E > V) p_g = attn::concat({p_g, attn::zeros({B, E - V})}, -1);
  Tensor out = p_g + attn::squeeze(attn::matmul(attn::unsqueeze(p_c, 1), Tensor(where)), 1);
  return o.detached ? Tensor(out.data<double>()) : out;
}

inline std::vector<Planted<lab::copynet::CopyNet>> all() {
  using lab::copynet::CopyNet;
  auto with = [](Joint o) {
    CopyNet s = lab::solutions::copynet::solution();
    s.joint = [o](const Tensor& g, const Tensor& c, const Index& ids, const std::vector<std::size_t>& lengths,
                  std::size_t E) { return joint(o, g, c, ids, lengths, E); };
    return s;
  };
  std::vector<Planted<CopyNet>> out;
  Joint j;
  j.two_softmaxes = true;
  out.push_back({"two softmaxes, one per mode", with(j), "two softmaxes, one per mode", true});
  j = {};
  j.padding_copied = true;
  out.push_back({"the padding's copy scores left in the softmax", with(j), "the padding's copy scores left in", true});
  j = {};
  j.padding_zero = true;
  out.push_back({"the padding's copy scores set to 0", with(j), "the padding's copy scores set to 0", true});
  j = {};
  j.last_wins = true;
  out.push_back({"a word held twice: one position's weight (overwritten)", with(j), "overwritten", true});
  j = {};
  j.copy_oov_only = true;
  out.push_back({"only source-only words copied", with(j), "gets both its generate weight and its copy weights", true});
  j = {};
  j.copy_replaces_generate = true;
  out.push_back({"a vocabulary word in the source: copy weight only", with(j), "gets its copy weights alone", true});
  j = {};
  j.by_position = true;
  out.push_back({"position j's weight added to id j", with(j), "added to id j (the position)", true});
  j = {};
  j.extended_as_unk = true;
  out.push_back({"source-only words copied as <unk>", with(j), "source-only words copied as <unk>", true});
  j = {};
  j.unstable = true;
  out.push_back({"softmax as exp(x) / sum exp(x), no maximum subtracted", with(j), "subtracts the maximum", true});
  j = {};
  j.fill = -100.0;
  out.push_back({"the padding blocked with a finite -100", with(j), "any finite fill above the real scores", true});
  j.fill = -1e9;
  out.push_back({"the padding blocked with -1e9", with(j), "any finite fill above the real scores", true});
  j = {};
  j.psi_c_detached = true;
  out.push_back({"psi_c detached (no gradient to the copy scores)", with(j),
                 "psi_c.grad() is undefined: the output does not depend on psi_c", true});
  j = {};
  j.detached = true;
  out.push_back({"joint copied through an array (no gradient)", with(j), "joint(...) does not require grad", true});
  return out;
}

}  // namespace copynet
}  // namespace planted
}  // namespace lab
