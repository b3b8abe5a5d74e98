// Wrong solutions of lab 9; labs/tests/test_lab09.cpp proves the grader fails each,
// with a message pointing at the mistake.
#pragma once

#include "labs/grader/grader.hpp"
#include "labs/solutions/09_adam.hpp"

#include <cmath>

namespace lab {
namespace planted {
namespace adam {

using Array = xt::xarray<double>;

struct Options {
  bool no_bias_correction = false, eps_inside_sqrt = false, t_from_zero = false, squares_m = false, section2 = false,
       eps_ignored = false;
};

inline void step(const Options& o, Array& p, const Array& g, Array& m, Array& v, long t, double lr, double b1,
                 double b2, double eps) {
  m = b1 * m + (1.0 - b1) * g;
  v = b2 * v + (1.0 - b2) * (o.squares_m ? m * m : g * g);
  double tt = static_cast<double>(o.t_from_zero ? t - 1 : t);
  double ms = o.no_bias_correction ? 1.0 : 1.0 / (1.0 - std::pow(b1, tt));
  double vs = o.no_bias_correction ? 1.0 : 1.0 / (1.0 - std::pow(b2, tt));
  if (o.section2)  // Kingma & Ba's section 2: the corrections folded into lr_t, eps on sqrt(v)
    p -= lr * std::sqrt(1.0 - std::pow(b2, tt)) / (1.0 - std::pow(b1, tt)) * m / (xt::sqrt(v) + eps);
  else if (o.eps_inside_sqrt)
    p -= lr * (m * ms) / xt::sqrt(v * vs + eps);
  else if (o.eps_ignored)
    p -= lr * (m * ms) / xt::sqrt(v * vs);
  else
    p -= lr * (m * ms) / (xt::sqrt(v * vs) + eps);
}

inline std::vector<Planted<lab::adam::Adam>> all() {
  auto make = [](Options o) {
    return lab::adam::Adam{[o](Array& p, const Array& g, Array& m, Array& v, long t, double lr, double b1, double b2,
                               double eps) { step(o, p, g, m, v, t, lr, b1, b2, eps); }};
  };
  std::vector<Planted<lab::adam::Adam>> out;
  Options o;
  o.no_bias_correction = true;
  out.push_back({"no bias correction", make(o), "your values are what this mistake gives: no bias correction", true});
  o = {};
  o.eps_inside_sqrt = true;
  out.push_back({"eps inside the square root", make(o), "eps is added after the square root", true});
  o = {};
  o.t_from_zero = true;
  out.push_back({"t counted from 0 in the bias corrections", make(o), "t counted from 1"});
  o = {};
  o.squares_m = true;
  out.push_back({"v averages m^2 instead of g^2", make(o), "(1 - beta2) g^2"});
  o = {};
  o.section2 = true;
  out.push_back({"Kingma & Ba's section 2 form, eps on sqrt(v) before the correction", make(o),
                 "Kingma & Ba's section 2 form"});
  o = {};
  o.eps_ignored = true;
  out.push_back({"eps left out of the step", make(o), "eps left out: m_hat / sqrt(v_hat)", true});
  return out;
}

}  // namespace adam
}  // namespace planted
}  // namespace lab
