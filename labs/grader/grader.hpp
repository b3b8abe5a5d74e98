// The lab track's grading machinery, shared by every lab's grader (labs/grader/labNN_*.hpp).
//
// A grader receives the learner's functions (std::function values, never a name it
// could resolve to the library's own), runs a fixed list of checks, prints one line
// per check and a failure's details, and ends with "lab N: k of M checks pass".
//
//   lab::Grader grader(0, "the engine", std::cout);
//   grader.check("mul: values vs PyTorch", "hint for the usual cause", [&] { ... });
//   lab::Result result = grader.finish();
//
// A check passes when its body returns; it fails when the body throws:
// lab::NotImplemented (the untouched stub), lab::Mismatch (a value or gradient
// that disagrees, with the shapes, argument and index), or any other exception.
// Used by the graders (labs/grader/labNN_*.cpp, compiled into libattn_labs) and the tests.
#pragma once

#include "labs/grader/lab.hpp"

#include "attn.hpp"
#include "core/record.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace lab {

using attn::Shape;
using attn::Tensor;
using Array = xt::xarray<double>;

// A value or gradient that disagrees with the reference; the message names where.
// `hint`, when given, replaces the check's usual hint: the check looked at the values
// and knows which mistake they match (an overflow only when they are not finite, ...).
struct Mismatch : std::runtime_error {
  explicit Mismatch(const std::string& message, std::string hint = "")
      : std::runtime_error(message), hint(std::move(hint)) {}
  std::string hint;
};

// Token ids stored in a reference file as numbers, as an attn::Index.
inline attn::Index ids_of(const Array& a) { return xt::cast<std::int64_t>(a); }

// Lengths stored in a reference file as numbers.
inline std::vector<std::size_t> lengths_of(const Array& a) {
  std::vector<std::size_t> out;
  for (double v : a) out.push_back(std::size_t(v));
  return out;
}

// After backward: an input with no gradient is one the output does not reach through attn's ops. `hint`
// is the lab's hint for its gradients.
inline void expect_grad_defined(const Tensor& x, const std::string& name, const std::string& hint) {
  if (!x.grad().defined())
    throw Mismatch(name + ".grad() is undefined: the output does not depend on " + name +
                       " through attn's ops (unused, detached, or copied through an array)",
                   hint);
}

inline std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

inline std::string num_str(double v) {
  std::ostringstream os;
  os.precision(10);
  os << v;
  return os.str();
}

// "a [3, 1], b [4]" for a check's failure message.
inline std::string shapes_str(const std::vector<std::pair<std::string, Shape>>& named) {
  std::string out;
  for (std::size_t i = 0; i < named.size(); ++i)
    out += (i ? ", " : "") + named[i].first + " " + shape_str(named[i].second);
  return out;
}

inline Shape unravel(std::size_t flat, const Shape& shape) {
  Shape index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

// The learner's result as a float64 array, or a Mismatch saying what came back instead.
inline Array array_of(const Tensor& t, const std::string& what) {
  if (!t.defined()) throw Mismatch(what + ": received an undefined tensor (did the function return Tensor()?)");
  if (t.dtype() != attn::Dtype::Float64) throw Mismatch(what + ": received a float32 tensor, expected float64");
  return t.data<double>();
}

// received must have expected's shape and, element by element,
// |received - expected| <= atol + rtol * |expected| (a NaN never passes; an expected value that is
// not finite, -inf say, is matched only by the same value: its tolerance would be inf and its score NaN).
inline void expect_close(const std::string& what, const Array& expected, const Array& received,
                         const std::string& inputs, double rtol = 1e-7, double atol = 1e-9) {
  Shape es(expected.shape().begin(), expected.shape().end());
  Shape rs(received.shape().begin(), received.shape().end());
  if (es != rs)
    throw Mismatch(what + " has shape " + shape_str(rs) + ", expected " + shape_str(es) + " (inputs: " + inputs + ")");
  std::size_t worst = 0;
  double worst_score = -1.0;
  for (std::size_t k = 0; k < expected.size(); ++k) {
    double err = std::abs(received.flat(k) - expected.flat(k));
    double score = !std::isfinite(expected.flat(k)) ? (received.flat(k) == expected.flat(k) ? 0.0 : INFINITY)
                   : std::isfinite(received.flat(k)) ? err / (atol + rtol * std::abs(expected.flat(k)))
                                                     : INFINITY;
    if (score > worst_score) worst_score = score, worst = k;
  }
  if (worst_score > 1.0)
    throw Mismatch(what + " (inputs: " + inputs + "), index " + shape_str(unravel(worst, es)) + ": expected " +
                   num_str(expected.flat(worst)) + ", received " + num_str(received.flat(worst)));
}

inline void expect_close(const std::string& what, const Array& expected, const Tensor& received,
                         const std::string& inputs, double rtol = 1e-7, double atol = 1e-9) {
  expect_close(what, expected, array_of(received, what), inputs, rtol, atol);
}

// Every gradient of f at `inputs` against central finite differences (attn::gradcheck, float64).
inline void expect_gradients(const std::string& what, const attn::GradcheckFn& f, const std::vector<Tensor>& inputs,
                             const std::vector<std::string>& names) {
  bool any = false;
  std::vector<std::pair<std::string, Shape>> shapes;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    any = any || inputs[i].requires_grad();
    shapes.push_back({names.at(i), inputs[i].shape()});
  }
  if (!any) throw std::logic_error("grader bug: " + what + " checks no input that requires grad");
  attn::GradcheckReport report = attn::gradcheck(f, inputs);
  for (const auto& item : report.inputs) {
    if (item.ok && std::isfinite(item.max_abs_error)) continue;
    throw Mismatch(what + ": gradient of " + names.at(item.input) + " " + shape_str(item.shape) + " (inputs: " +
                   shapes_str(shapes) + "), index " + shape_str(item.worst_index) + ": central difference gives " +
                   num_str(item.numeric_at_worst) + ", your backward gives " + num_str(item.analytic_at_worst));
  }
}

// True when every element is finite.
inline bool all_finite(const Array& a) {
  for (double v : a)
    if (!std::isfinite(v)) return false;
  return true;
}

// A failure of a check at large (or tiny) magnitudes, its hint decided by the values: the
// hint of that regime (an overflow, log(0), eps) only when the learner's output is right at
// ordinary magnitudes and, for an overflow, not finite at these; else the check's usual hint.
inline Mismatch at_extreme(const Mismatch& m, bool finite, bool right_at_ordinary, const std::string& regime_hint,
                           const std::string& usual_hint, bool needs_non_finite = true) {
  if (!right_at_ordinary)
    return Mismatch(m.what() + std::string("; the same computation at ordinary magnitudes is wrong too, so the "
                                           "mistake is not the magnitude: the checks before name it"),
                    usual_hint);
  if (needs_non_finite && finite)
    return Mismatch(m.what() + std::string("; right at ordinary magnitudes, and finite here: no overflow, but "
                                           "something loses precision at these magnitudes"),
                    usual_hint);
  return Mismatch(m.what() + std::string(finite ? "; right at ordinary magnitudes, wrong at these"
                                                : "; right at ordinary magnitudes, not finite at these"),
                  regime_hint);
}

// The sums of the real and of the blocked weights (by magnitude) in row `row` of `weights`
// (over its last axis, `blocked` of the same shape), and the row's index without the last axis.
inline Shape blocked_row_sums(const Array& weights, const attn::Mask& blocked, std::size_t row, double& real,
                              double& taken, std::size_t& real_count) {
  Shape ws(weights.shape().begin(), weights.shape().end());
  std::size_t n = ws.back();
  real = taken = 0.0;
  real_count = 0;
  for (std::size_t j = 0; j < n; ++j) {
    double w = weights.flat(row * n + j);
    if (blocked.flat(row * n + j)) taken += std::abs(w);
    else real += w, ++real_count;
  }
  Shape index = unravel(row * n, ws);
  index.pop_back();
  return index;
}

inline bool same_shape(const Array& weights, const attn::Mask& blocked) {
  return weights.dimension() > 0 &&
         std::equal(weights.shape().begin(), weights.shape().end(), blocked.shape().begin(), blocked.shape().end());
}

// For a check whose real scores all lie far below 0 (near -1e12): the row (over the last axis)
// where the blocked positions took the weight from the real ones, as "; in row [b, ...] ...", or "".
// `weights` and `blocked` have the same shape; rows blocked entirely are left out. A NaN counts
// as wrong (0/0: the blocked weights zeroed after the softmax, then renormalised).
inline std::string blocked_outrank_real(const Array& weights, const attn::Mask& blocked) {
  if (!same_shape(weights, blocked)) return "";
  std::size_t n = weights.shape().back();
  for (std::size_t row = 0; row * n < weights.size(); ++row) {
    double real, taken;
    std::size_t real_count;
    Shape index = blocked_row_sums(weights, blocked, row, real, taken, real_count);
    if (real_count == 0 || real_count == n) continue;
    if (taken <= 1e-6 && std::abs(real - 1.0) <= 1e-6) continue;
    std::string where = "; in row " + shape_str(index) + " the real positions' weights sum to " + num_str(real);
    if (std::isnan(real) && std::isnan(taken))
      return where + ": 0/0, the blocked weights zeroed after a softmax in which the blocked scores took all the "
                     "weight, then renormalised";
    if (taken <= 1e-6)
      return where + " and the blocked ones' are 0 (zeroed after the softmax): the blocked scores outranked real "
                     "scores in the softmax before that, and the real weights underflowed to 0";
    return where + " and the blocked ones' to " + num_str(taken) + ": the blocked scores outranked real scores";
  }
  return "";
}

// For a check at large ordinary scores: the row whose real weights sum to 0 (or NaN) while its
// blocked ones are 0, as "; in row [b, ...] ...", or "": the blocked scores won the softmax and
// were zeroed after it (renormalised or not).
inline std::string blocked_zeroed_after_softmax(const Array& weights, const attn::Mask& blocked) {
  if (!same_shape(weights, blocked)) return "";
  std::size_t n = weights.shape().back();
  for (std::size_t row = 0; row * n < weights.size(); ++row) {
    double real, taken;
    std::size_t real_count;
    Shape index = blocked_row_sums(weights, blocked, row, real, taken, real_count);
    // Zeroed after the softmax: real 0 and blocked 0; renormalised after it: 0/0 on both sides.
    bool zeroed = (real == 0.0 && taken == 0.0) || (std::isnan(real) && std::isnan(taken));
    if (real_count == 0 || real_count == n || !zeroed) continue;
    return "; in row " + shape_str(index) + " the real positions' weights sum to " + num_str(real) +
           " and the blocked ones are 0 (or NaN): the blocked scores took all the weight in the softmax and were "
           "zeroed after it";
  }
  return "";
}

// The hints when blocked_outrank_real or blocked_zeroed_after_softmax found such a row.
inline const char* blocked_fill_hint =
    "the value the blocked scores are filled with must lie below every real score: this row's real scores lie "
    "near -1e12, so any finite fill above them wins the softmax (-1e4, and -1e9 too, the Annotated Transformer's: "
    "it is right only while every real score stays above it); fill with -1e30, as attn does (or -infinity), "
    "before the softmax";
inline const char* blocked_after_softmax_hint =
    "block the scores before the softmax (masked_fill(scores, mask, -1e30): a fill below every real score); "
    "zeroing the blocked weights after it, renormalised or not, leaves 0 (or 0/0) where the blocked scores took "
    "all the weight";
inline std::string blocked_hint(const std::string& outrank) {
  return outrank.find("0/0") != std::string::npos ? blocked_after_softmax_hint : blocked_fill_hint;
}

// The learner's backward rule: given the op's inputs, its output and the incoming
// gradient, one gradient per input (a Tensor of that input's shape).
using BackwardRule =
    std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs, const Tensor& out, const Tensor& grad)>;

// An op of the graph whose value is `value` and whose backward runs the learner's rule.
// A gradient of the wrong shape is an error here (the engine would otherwise sum a
// broadcast gradient down for the learner and hide a missing un-broadcast).
inline Tensor learner_op(const std::string& rule_name, const Tensor& value, const std::vector<Tensor>& inputs,
                         const std::vector<std::string>& names, BackwardRule rule) {
  Array v = array_of(value, rule_name + " forward");
  return attn::record<double>(
      "learner_op", std::move(v), inputs, [rule_name, names, rule](attn::Node<double>& out) {
        attn::no_grad guard;
        std::vector<Tensor> in;
        for (std::size_t i = 0; i < out.inputs.size(); ++i) in.push_back(Tensor(Array(out.input(i).value)));
        std::vector<Tensor> grads = rule(in, Tensor(Array(out.value)), Tensor(Array(out.grad)));
        if (grads.size() != in.size())
          throw Mismatch(rule_name + " returned " + std::to_string(grads.size()) + " gradients for " +
                         std::to_string(in.size()) + " inputs");
        for (std::size_t i = 0; i < in.size(); ++i) {
          if (!out.input_requires_grad(i)) continue;
          Array g = array_of(grads[i], rule_name + ": the gradient of " + names.at(i));
          Shape gs(g.shape().begin(), g.shape().end());
          if (gs != in[i].shape())
            throw Mismatch(rule_name + " returned a gradient of shape " + shape_str(gs) + " for " + names.at(i) +
                           " of shape " + shape_str(in[i].shape()));
          out.add_to_input_grad(i, std::move(g));
        }
      });
}

// Reproducible random inputs and shapes.
class Random {
 public:
  explicit Random(std::uint64_t seed) : gen_(seed) {}
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(gen_); }
  std::size_t integer(std::size_t lo, std::size_t hi) {  // lo .. hi inclusive
    return std::uniform_int_distribution<std::size_t>(lo, hi)(gen_);
  }
  bool coin() { return integer(0, 1) == 1; }
  Array array(const Shape& shape, double lo = -1.0, double hi = 1.0) {
    Array a = Array::from_shape(shape);
    for (double& v : a) v = uniform(lo, hi);
    return a;
  }
  // Values whose magnitude lies in [lo, hi], of either sign (no zeros: denominators).
  Array away_from_zero(const Shape& shape, double lo, double hi) {
    Array a = array(shape, lo, hi);
    for (double& v : a) v = coin() ? v : -v;
    return a;
  }
  Tensor tensor(const Shape& shape, bool requires_grad = true, double lo = -1.0, double hi = 1.0) {
    return Tensor(array(shape, lo, hi), requires_grad);
  }
  Shape shape(std::size_t min_dims, std::size_t max_dims, std::size_t max_size = 4) {
    Shape s(integer(min_dims, max_dims));
    for (auto& d : s) d = integer(1, max_size);
    return s;
  }
  // A shape that broadcasts to `full`: leading axes dropped, some axes set to 1.
  Shape broadcast_source(const Shape& full) {
    std::size_t drop = integer(0, full.size());
    Shape s(full.begin() + static_cast<long>(drop), full.end());
    for (auto& d : s)
      if (coin()) d = 1;
    return s;
  }

 private:
  std::mt19937_64 gen_;
};

// The values PyTorch computed once (tools/reference/labs.py -> labs/reference/<name>.json).
class Reference {
 public:
  explicit Reference(const std::string& name) : path_(dir() + "/" + name + ".json") {
    std::ifstream in(path_);
    if (!in) throw std::runtime_error("lab reference file missing: " + path_ + " (set ATTN_LABS_REFERENCE_DIR)");
    json_ = nlohmann::json::parse(in);
  }
  Array array(const std::string& case_name, const std::string& tensor_name) const {
    const auto& cases = json_.at("cases");
    if (!cases.contains(case_name) || !cases.at(case_name).contains(tensor_name))
      throw std::runtime_error(path_ + ": no tensor '" + tensor_name + "' in case '" + case_name + "'");
    const auto& entry = cases.at(case_name).at(tensor_name);
    Array a = Array::from_shape(entry.at("shape").get<Shape>());
    std::vector<double> data = entry.at("data").get<std::vector<double>>();
    if (data.size() != a.size()) throw std::runtime_error(path_ + ": size mismatch in " + case_name + "." + tensor_name);
    std::copy(data.begin(), data.end(), a.begin());
    return a;
  }
  Tensor tensor(const std::string& case_name, const std::string& tensor_name, bool requires_grad = false) const {
    return Tensor(array(case_name, tensor_name), requires_grad);
  }
  double scalar(const std::string& case_name, const std::string& tensor_name) const {
    return array(case_name, tensor_name).flat(0);
  }

  // ATTN_LABS_REFERENCE_DIR, else the build's ATTN_LABS_DIR, else next to this header.
  static std::string dir() {
    if (const char* env = std::getenv("ATTN_LABS_REFERENCE_DIR")) return env;
#ifdef ATTN_LABS_DIR
    return std::string(ATTN_LABS_DIR) + "/reference";
#else
    std::string here = __FILE__;  // .../labs/grader/grader.hpp
    auto cut = here.rfind("/grader/");
    return (cut == std::string::npos ? std::string("labs") : here.substr(0, cut)) + "/reference";
#endif
  }

 private:
  std::string path_;
  nlohmann::json json_;
};

// A wrong solution planted to prove a grader fails it (labs/planted/, labs/tests/):
// `points_at` is a piece of the failure message that names the mistake; with
// `in_first_failure`, the first failure the learner reads must hold it (where a hint
// of another check would otherwise point at a different mistake first).
template <class Solution>
struct Planted {
  std::string mistake;
  Solution solution;
  std::string points_at;
  bool in_first_failure = false;
};

class Grader {
 public:
  Grader(int lab, const std::string& title, std::ostream& os) : os_(os) {
    result_.lab = lab;
    os_ << "lab " << lab << ": " << title << "\n";
  }

  // Runs one check. `hint` names the usual cause of its failure.
  void check(const std::string& name, const std::string& hint, const std::function<void()>& body) {
    ++result_.total;
    std::string message, own_hint = hint;
    bool stub = false;  // the untouched stub: its "not implemented" needs no hint
    try {
      body();
      ++result_.passed;
      os_ << "  PASS  " << name << "\n";
      return;
    } catch (const NotImplemented& e) {
      message = e.what();
      stub = true;
    } catch (const Mismatch& e) {
      message = e.what();
      if (!e.hint.empty()) own_hint = e.hint;
    } catch (const std::exception& e) {
      message = std::string("raised an error: ") + e.what();
    }
    std::string text = name + ": " + message + (stub ? "" : "\n        hint: " + own_hint);
    result_.failures.push_back(text);
    os_ << "  FAIL  " << text << "\n";
  }

  Result finish() {
    os_ << "lab " << result_.lab << ": " << result_.passed << " of " << result_.total << " checks pass\n";
    return result_;
  }

 private:
  std::ostream& os_;
  Result result_;
};

}  // namespace lab
