// Wrong solutions of lab 14; labs/tests/test_lab14.cpp proves the grader fails each,
// with a message pointing at the mistake.
#pragma once

#include "labs/grader/grader.hpp"
#include "labs/solutions/14_rotary_alibi.hpp"

#include <cmath>

namespace lab {
namespace planted {
namespace rotary_alibi {

using attn::Tensor;

struct Rotary {
  bool interleaved = false, sign_flipped = false, k_from_one = false, start_ignored = false, base_ignored = false,
       reflection = false, detached = false, time_axis_2 = false;
};

// A learner's rotary with one mistake; its output built from attn's ops unless `detached`.
inline Tensor rotary(const Rotary& o, const Tensor& x, std::size_t start, double base) {
  const std::size_t T = o.time_axis_2 ? x.size(2) : x.size(-2), d = x.size(-1), half = d / 2;
  xt::xarray<double> c = xt::zeros<double>({T, half}), s = xt::zeros<double>({T, half});
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t k = 0; k < half; ++k) {
      double p = static_cast<double>(o.start_ignored ? t : start + t);
      double e = 2.0 * static_cast<double>(o.k_from_one ? k + 1 : k) / static_cast<double>(d);
      double a = p * std::pow(o.base_ignored ? 10000.0 : base, -e) * (o.sign_flipped ? -1.0 : 1.0);
      c(t, k) = std::cos(a);
      s(t, k) = std::sin(a);
    }
  if (o.interleaved) {  // pairs (2k, 2k + 1): the even features and the odd ones
    xt::xarray<double> xa = x.data<double>(), out = xa;
    for (std::size_t row = 0; row * d < xa.size(); ++row)
      for (std::size_t k = 0; k < half; ++k) {
        std::size_t t = row % T;
        double x1 = xa.flat(row * d + 2 * k), x2 = xa.flat(row * d + 2 * k + 1);
        out.flat(row * d + 2 * k) = x1 * c(t, k) - x2 * s(t, k);
        out.flat(row * d + 2 * k + 1) = x2 * c(t, k) + x1 * s(t, k);
      }
    return Tensor(out);
  }
  Tensor ct(c), st(s);
  Tensor x1 = attn::narrow(x, -1, 0, half), x2 = attn::narrow(x, -1, half, half);
  // a reflection: the first feature's sine with the wrong sign, the second's right
  Tensor out = attn::concat({x1 * ct + (o.reflection ? 1.0 : -1.0) * (x2 * st), x2 * ct + x1 * st}, -1);
  return o.detached ? Tensor(out.data<double>()) : out;
}

struct Alibi {
  bool next_power_truncated = false, h_from_zero = false, geometric_over_h = false, sign_flipped = false,
       no_abs = false, no_mask = false, diagonal_blocked = false, next_visible = false, reversed = false, detached = false;
};

inline std::vector<double> slopes(const Alibi& o, std::size_t H) {
  if (o.reversed) {  // the right slopes, last head first
    Alibi right;
    std::vector<double> m = slopes(right, H);
    return std::vector<double>(m.rbegin(), m.rend());
  }
  auto power_of_two = [&](std::size_t n) {
    std::vector<double> m(n);
    for (std::size_t h = 0; h < n; ++h)
      m[h] = std::pow(2.0, -8.0 * static_cast<double>(o.h_from_zero ? h : h + 1) / static_cast<double>(n));
    return m;
  };
  if (o.geometric_over_h) return power_of_two(H);
  std::size_t below = 1;
  while (below * 2 <= H) below *= 2;
  if (o.next_power_truncated && below < H) {  // the next power of two's first H slopes
    std::vector<double> m = power_of_two(2 * below);
    m.resize(H);
    return m;
  }
  std::vector<double> m = power_of_two(below), above = power_of_two(2 * below);
  for (std::size_t k = 0; m.size() < H; k += 2) m.push_back(above[k]);
  return m;
}

inline Tensor alibi_scores(const Alibi& o, const Tensor& scores, bool causal) {
  const std::size_t H = scores.size(1), T = scores.size(-1);
  const std::vector<double> m = slopes(o, H);
  xt::xarray<double> bias = xt::zeros<double>({H, T, T});
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i = 0; i < T; ++i)
      for (std::size_t j = 0; j < T; ++j) {
        double dist = static_cast<double>(i) - static_cast<double>(j);
        bias(h, i, j) = (o.sign_flipped ? 1.0 : -1.0) * m[h] * (o.no_abs ? dist : std::abs(dist));
      }
  Tensor out = scores + Tensor(bias);
  if (causal && !o.no_mask) {
    attn::Mask mask = attn::nn::causal_mask(T);
    if (o.diagonal_blocked)
      for (std::size_t i = 0; i < T; ++i) mask(i, i) = true;
    if (o.next_visible)  // off by one: only j > i + 1 blocked
      for (std::size_t i = 0; i + 1 < T; ++i) mask(i, i + 1) = false;
    out = attn::masked_fill(out, mask, -1e30);
  }
  return o.detached ? Tensor(out.data<double>()) : out;
}

inline std::vector<Planted<lab::rotary_alibi::RotaryAlibi>> all() {
  using lab::rotary_alibi::RotaryAlibi;
  auto with_rotary = [](Rotary o) {
    RotaryAlibi s = lab::solutions::rotary_alibi::solution();
    s.rotary = [o](const Tensor& x, std::size_t start, double base) { return rotary(o, x, start, base); };
    return s;
  };
  auto with_alibi = [](Alibi o) {
    RotaryAlibi s = lab::solutions::rotary_alibi::solution();
    s.alibi_slopes = [o](std::size_t H) { return slopes(o, H); };
    s.alibi_scores = [o](const Tensor& scores, bool causal) { return alibi_scores(o, scores, causal); };
    return s;
  };
  std::vector<Planted<RotaryAlibi>> out;
  Rotary r;
  r.interleaved = true;
  out.push_back({"rotary pairs features (2k, 2k + 1) instead of (k, k + d/2)", with_rotary(r),
                 "features 2k and 2k + 1 paired", true});
  r = {};
  r.sign_flipped = true;
  out.push_back({"rotary's angle with the wrong sign", with_rotary(r), "the rotation's angle has the wrong sign", true});
  r = {};
  r.k_from_one = true;
  out.push_back({"frequencies base^(-2(k + 1) / d): k off by one", with_rotary(r), "k counted from 1", true});
  r = {};
  r.start_ignored = true;
  out.push_back({"rotary ignores start", with_rotary(r), "start ignored", true});
  r = {};
  r.base_ignored = true;
  out.push_back({"rotary ignores base (10000)", with_rotary(r), "base ignored", true});
  r = {};
  r.reflection = true;
  out.push_back({"a reflection, not a rotation: one sine's sign flipped", with_rotary(r), "not a function of m - n alone"});
  r = {};
  r.detached = true;
  out.push_back({"rotary copied through an array (no gradient)", with_rotary(r), "rotary(x) does not require grad"});
  r = {};
  r.time_axis_2 = true;
  out.push_back({"T read from axis 2 (x taken as [B, H, T, d])", with_rotary(r), "T is x.size(-2)", true});

  Alibi a;
  a.next_power_truncated = true;
  out.push_back({"slopes of a non-power-of-two count as the next power of two's, not interleaved", with_alibi(a),
                 "the first H slopes of the next power of two, without interleaving", true});
  a = {};
  a.geometric_over_h = true;
  out.push_back({"slopes 2^(-8h / H) for every H", with_alibi(a), "for a head count that is not a power of two", true});
  a = {};
  a.h_from_zero = true;
  out.push_back({"slopes with h counted from 0", with_alibi(a), "h counted from 0", true});
  a = {};
  a.sign_flipped = true;
  out.push_back({"the ALiBi bias added instead of subtracted", with_alibi(a), "the bias added instead of subtracted", true});
  a = {};
  a.no_abs = true;
  out.push_back({"the bias -m (i - j) without |.|", with_alibi(a), "without the absolute value", true});
  a = {};
  a.no_mask = true;
  out.push_back({"causal: the keys after the query not blocked", with_alibi(a), "the keys after their query not blocked",
                 true});
  a = {};
  a.diagonal_blocked = true;
  out.push_back({"causal: the diagonal blocked too", with_alibi(a), "a query sees itself, block only j > i", true});
  a = {};
  a.reversed = true;
  out.push_back({"the slopes in reverse order (the gentlest first)", with_alibi(a), "m_1 is the steepest, 2^(-8/H)",
                 true});
  a = {};
  a.next_visible = true;
  out.push_back({"causal: the key right after the query left visible (j > i + 1 blocked)", with_alibi(a),
                 "the key right after its query left visible", true});
  a = {};
  a.detached = true;
  out.push_back({"alibi_scores copied through an array (no gradient)", with_alibi(a),
                 "alibi_scores(scores) does not require grad"});
  return out;
}

}  // namespace rotary_alibi
}  // namespace planted
}  // namespace lab
