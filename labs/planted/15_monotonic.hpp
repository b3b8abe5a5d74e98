// Wrong solutions of lab 15; labs/tests/test_lab15.cpp proves the grader fails each,
// with a message pointing at the mistake.
#pragma once

#include "labs/grader/grader.hpp"
#include "labs/solutions/15_monotonic.hpp"

namespace lab {
namespace planted {
namespace monotonic {

using attn::Tensor;

struct Soft {
  bool p_same = false,          // q carried on with (1 - p_tj) instead of (1 - p_{t,j-1})
      alpha_form = false,       // eq. 10 in alpha without its division by p_{t,j-1}
      divides = false,          // eq. 10 with its division: 0 / 0 where p is 0
      cumprod = false,          // the parallel closed form, cumulative products of 1 - p, unclipped
      restart = false,          // every step from alpha_{-1}, not from the previous step
      no_padding = false,       // p not zeroed on padding
      padding_from_next = false,  // padding taken as j > lengths[b]
      flipped = false,          // p = sigmoid(-energy)
      normalised = false,       // rows divided by their sum
      initial_zero = false,     // alpha_{-1} all 0
      finite_fill = false,      // energies filled with -30 on padding: p about 1e-13 there, not 0
      detached = false;         // copied through an array
};

// A learner's expected alignment with one mistake, built from attn's ops unless `detached`.
inline Tensor expected(const Soft& o, const Tensor& energy, const std::vector<std::size_t>& lengths) {
  const std::size_t B = energy.size(0), Tq = energy.size(1), Tk = energy.size(2);
  attn::Mask padding = xt::zeros<bool>({B, std::size_t(1), Tk});
  if (!o.no_padding)
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t j = lengths[b] + (o.padding_from_next ? 1 : 0); j < Tk; ++j) padding(b, 0, j) = true;
  Tensor p = o.finite_fill ? attn::sigmoid(attn::masked_fill(energy, padding, -30.0))
                           : attn::masked_fill(attn::sigmoid(o.flipped ? -1.0 * energy : energy), padding, 0.0);
  xt::xarray<double> start = xt::zeros<double>({B, Tk});
  if (!o.initial_zero)
    for (std::size_t b = 0; b < B; ++b) start(b, 0) = 1.0;
  Tensor previous(start);
  std::vector<Tensor> steps;
  for (std::size_t t = 0; t < Tq; ++t) {
    std::vector<Tensor> alpha;
    Tensor q, p_before, carried, sum;  // carried: the product of (1 - p) before j (cumprod)
    for (std::size_t j = 0; j < Tk; ++j) {
      Tensor p_j = attn::select(attn::select(p, 1, long(t)), 1, long(j));
      Tensor previous_j = attn::select(o.restart ? Tensor(start) : previous, 1, long(j));
      if (o.cumprod) {  // alpha_t = p_t cumprod(1 - p_t) cumsum(alpha_{t-1} / cumprod(1 - p_t)), exclusive cumprod
        carried = j == 0 ? 1.0 + 0.0 * p_j : carried * (1.0 - p_before);
        sum = j == 0 ? previous_j / carried : sum + previous_j / carried;
        alpha.push_back(p_j * carried * sum);
      } else if (o.alpha_form || o.divides) {  // alpha_tj = p_tj ((1 - p_{t,j-1}) alpha_{t,j-1} [/ p_{t,j-1}] + alpha_{t-1,j})
        Tensor a = j == 0 ? p_j * previous_j
                          : p_j * ((1.0 - p_before) * (o.divides ? alpha.back() / p_before : alpha.back()) + previous_j);
        alpha.push_back(a);
      } else {
        q = j == 0 ? previous_j : (1.0 - (o.p_same ? p_j : p_before)) * q + previous_j;
        alpha.push_back(p_j * q);
      }
      p_before = p_j;
    }
    previous = attn::stack(alpha, 1);
    if (o.normalised) previous = previous / attn::sum(previous, {1}, true);
    steps.push_back(previous);
  }
  Tensor out = attn::stack(steps, 1);
  return o.detached ? Tensor(out.data<double>()) : out;
}

struct Hard {
  bool strict = false, restart = false, past_stop = false, lengths_ignored = false, last_not_none = false,
       stays = false;  // running off the end leaves the pointer where it was, so a later step may stop again
};

inline std::vector<std::vector<long>> hard(const Hard& o, const Tensor& energy, const std::vector<std::size_t>& lengths) {
  const std::size_t B = energy.size(0), Tq = energy.size(1), Tk = energy.size(2);
  const xt::xarray<double> e = energy.data<double>();
  std::vector<std::vector<long>> out(B, std::vector<long>(Tq));
  for (std::size_t b = 0; b < B; ++b) {
    const std::size_t S = o.lengths_ignored ? Tk : lengths[b];
    std::size_t j = 0;
    for (std::size_t t = 0; t < Tq; ++t) {
      if (o.restart) j = 0;
      if (o.stays) {
        std::size_t k = j;
        while (k < S && e(b, t, k) < 0.0) ++k;
        if (k < S) j = k;
        out[b][t] = k < S ? long(k) : -1;
        continue;
      }
      while (j < S && (o.strict ? e(b, t, j) <= 0.0 : e(b, t, j) < 0.0)) ++j;
      out[b][t] = j < S ? long(j) : o.last_not_none && S > 0 ? long(S) - 1 : -1;
      if (o.past_stop && j < S) ++j;
    }
  }
  return out;
}

inline std::vector<Planted<lab::monotonic::Monotonic>> all() {
  using lab::monotonic::Monotonic;
  auto with_soft = [](Soft o) {
    Monotonic s = lab::solutions::monotonic::solution();
    s.expected_alignment = [o](const Tensor& e, const std::vector<std::size_t>& L) { return expected(o, e, L); };
    return s;
  };
  auto with_hard = [](Hard o) {
    Monotonic s = lab::solutions::monotonic::solution();
    s.hard_alignment = [o](const Tensor& e, const std::vector<std::size_t>& L) { return hard(o, e, L); };
    return s;
  };
  std::vector<Planted<Monotonic>> out;
  Soft s;
  s.p_same = true;
  out.push_back({"q_tj carried on with (1 - p_tj), this position's p", with_soft(s), "carried on with (1 - p_tj)", true});
  s = {};
  s.alpha_form = true;
  out.push_back({"eq. 10 in alpha without the division by p_{t,j-1}", with_soft(s), "misses the division by p_{t,j-1}",
                 true});
  s = {};
  s.divides = true;
  out.push_back({"eq. 10 with its division by p_{t,j-1} (0 / 0 on padding)", with_soft(s), "divides by p_{t,j-1}", true});
  s = {};
  s.cumprod = true;
  out.push_back({"the parallel form, dividing by cumulative products of 1 - p", with_soft(s),
                 "a cumulative product of 1 - p", true});
  s = {};
  s.restart = true;
  out.push_back({"every step starts from position 0, not from the previous step's alpha", with_soft(s),
                 "every step starts from position 0", true});
  s = {};
  s.no_padding = true;
  out.push_back({"p not zeroed on padding", with_soft(s), "p not zeroed on padding", true});
  s = {};
  s.padding_from_next = true;
  out.push_back({"padding taken as j > lengths[b] (off by one)", with_soft(s), "position lengths[b] itself left unpadded",
                 true});
  s = {};
  s.flipped = true;
  out.push_back({"p = sigmoid(-energy)", with_soft(s), "p = sigmoid(-energy)", true});
  s = {};
  s.normalised = true;
  out.push_back({"each step's alpha normalised to sum 1", with_soft(s), "normalised to sum 1", true});
  s = {};
  s.initial_zero = true;
  out.push_back({"alpha_{-1} all 0", with_soft(s), "alpha_{-1} all 0", true});
  s = {};
  s.finite_fill = true;
  out.push_back({"energies filled with -30 on padding (p about 1e-13 there, not 0)", with_soft(s),
                 "p must be exactly 0 on padding", true});
  s = {};
  s.detached = true;
  out.push_back({"expected_alignment copied through an array (no gradient)", with_soft(s),
                 "expected_alignment(energy) does not require grad", true});

  Hard h;
  h.strict = true;
  out.push_back({"hard: stops only at energy > 0", with_hard(h), "stops only at energy > 0", true});
  h = {};
  h.restart = true;
  out.push_back({"hard: every step starts again at position 0", with_hard(h), "every step starts again at position 0",
                 true});
  h = {};
  h.past_stop = true;
  out.push_back({"hard: the next step starts after the previous stop", with_hard(h),
                 "the next step starts after the previous stop", true});
  h = {};
  h.lengths_ignored = true;
  out.push_back({"hard: lengths ignored (stops on padding)", with_hard(h), "lengths ignored", true});
  h = {};
  h.last_not_none = true;
  out.push_back({"hard: running off the end gives the last position, not -1", with_hard(h),
                 "running off the end gives the last position", true});
  h = {};
  h.stays = true;
  out.push_back({"hard: running off the end leaves the pointer where it was", with_hard(h),
                 "running off the end left the pointer where it was", true});
  return out;
}

}  // namespace monotonic
}  // namespace planted
}  // namespace lab
