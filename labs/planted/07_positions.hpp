// Wrong solutions of lab 7; labs/tests/test_lab07.cpp proves the grader fails each,
// with a message pointing at the mistake.
#pragma once

#include "labs/grader/grader.hpp"
#include "labs/solutions/07_positions.hpp"

#include <cmath>

namespace lab {
namespace planted {
namespace positions {

using attn::Tensor;

struct Options {
  bool swap_sin_cos = false, exponent_i = false, halves = false, from_one = false;
};

inline Tensor encoding(const Options& o, std::size_t T, std::size_t d) {
  xt::xarray<double> pe = xt::zeros<double>({T, d});
  for (std::size_t pos = 0; pos < T; ++pos)
    for (std::size_t i = 0; 2 * i < d; ++i) {
      double p = static_cast<double>(pos + (o.from_one ? 1 : 0));
      double e = (o.exponent_i ? 1.0 : 2.0) * static_cast<double>(i) / static_cast<double>(d);
      double angle = p / std::pow(10000.0, e);
      std::size_t a = o.halves ? i : 2 * i, b = o.halves ? d / 2 + i : 2 * i + 1;
      pe(pos, a) = o.swap_sin_cos ? std::cos(angle) : std::sin(angle);
      pe(pos, b) = o.swap_sin_cos ? std::sin(angle) : std::cos(angle);
    }
  return Tensor(pe);
}

inline std::vector<Planted<lab::positions::Positions>> all() {
  auto make = [](Options o) {
    lab::positions::Positions p;
    p.encoding = [o](std::size_t T, std::size_t d) { return encoding(o, T, d); };
    p.add_positions = [o](const Tensor& x) { return x + encoding(o, x.size(1), x.size(2)); };
    return p;
  };
  std::vector<Planted<lab::positions::Positions>> out;
  Options o;
  o.swap_sin_cos = true;
  out.push_back({"sin and cos swapped", make(o), "sin on the even dim"});
  o = {};
  o.exponent_i = true;
  out.push_back({"the exponent i / d_model instead of 2i / d_model", make(o), "10000^(2i / d_model)"});
  o = {};
  o.halves = true;
  out.push_back({"sines in the first half, cosines in the second", make(o), "interleaved (not two halves)"});
  o = {};
  o.from_one = true;
  out.push_back({"positions counted from 1", make(o), "positions start at 0"});
  auto s = lab::solutions::positions::solution();
  s.add_positions = [](const Tensor& x) {  // the encoding of the batch axis instead of the time axis
    return x + attn::unsqueeze(lab::solutions::positions::encoding(x.size(0), x.size(2)), 1);
  };
  out.push_back({"add_positions indexes positions by the batch axis", s, "adds it to every sequence"});
  return out;
}

}  // namespace positions
}  // namespace planted
}  // namespace lab
