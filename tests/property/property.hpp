// Property-based tests of the ops with rapidcheck (Debian's librapidcheck-dev), in the
// style of minitorch's Hypothesis tests: every op over random shapes, values and dtypes,
// its forward against a plain loop where one exists, its gradients against central
// differences in float64 (gradcheck), and broadcasting over random compatible shapes.
//
// Each TEST_CASE runs one rapidcheck property (PROPERTY below): rapidcheck draws the shapes
// and a seed for the values, and on a failure shrinks the shapes and prints the smallest
// case with the seed to reproduce it. tests/meson.build fixes RC_PARAMS (seed and number
// of cases) so CI is reproducible; another seed explores other cases:
//   RC_PARAMS="seed=7 max_success=500" build/tests/test_property_elementwise
#pragma once

#include "../helpers.hpp"

#include <rapidcheck.h>
#include <xtensor/xio.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

namespace prop {

using attn::Dtype;
using attn::Shape;
using attn::Tensor;
using Array = xt::xarray<double>;
using Inputs = std::vector<Tensor>;

// One rapidcheck property as a doctest check: rapidcheck prints the failing case.
#define PROPERTY(name, ...) CHECK(rc::check(name, __VA_ARGS__))

// A size in [1, 3], or one time in four in [4, 17]: long enough for the SIMD kernels'
// vector bodies (4 doubles, 8 floats) and their tails, not only their tails.
inline std::size_t size() {
  return *rc::gen::inRange(0, 4) == 0 ? *rc::gen::inRange<std::size_t>(4, 18) : *rc::gen::inRange<std::size_t>(1, 4);
}

// A shape of rank in [min_rank, max_rank]: sizes in [1, max_size], the last one from size().
inline Shape shape(std::size_t min_rank, std::size_t max_rank, std::size_t max_size = 3) {
  const auto rank = *rc::gen::inRange<std::size_t>(min_rank, max_rank + 1);
  Shape s = *rc::gen::container<Shape>(rank, rc::gen::inRange<std::size_t>(1, max_size + 1));
  if (!s.empty()) s.back() = size();
  return s;
}

// A shape that broadcasts to `out`: a suffix of it with some sizes set to 1.
inline Shape broadcastable_to(const Shape& out) {
  const auto rank = *rc::gen::inRange<std::size_t>(0, out.size() + 1);
  Shape s(out.end() - static_cast<long>(rank), out.end());
  for (auto& d : s)
    if (*rc::gen::arbitrary<bool>()) d = 1;
  return s;
}

// A seed for values drawn with attn's own generator.
inline std::uint64_t seed() { return *rc::gen::inRange<std::uint64_t>(0, 1u << 30); }

// Normal values of `shape`, float64, requiring grad.
inline Tensor randn(const Shape& s, std::uint64_t seed, bool requires_grad = true) {
  return test::randn(s, seed, requires_grad);
}

// Normal values at least `gap` away from 0 (for abs, relu, div: no kink within the step).
inline Tensor away_from_zero(const Shape& s, std::uint64_t seed, double gap = 0.1) {
  attn::Generator gen(seed);
  Array a = attn::randn(s, Dtype::Float64, gen).to_array();
  for (double& v : a) v = v < 0 ? v - gap : v + gap;
  return Tensor(std::move(a), true);
}

// A dim of a tensor of `rank` (rank >= 1), negative half of the time.
inline long dim(std::size_t rank) {
  const long d = *rc::gen::inRange<long>(0, static_cast<long>(rank));
  return *rc::gen::arbitrary<bool>() ? d - static_cast<long>(rank) : d;
}

inline std::size_t positive_dim(long d, std::size_t rank) {
  return static_cast<std::size_t>(d < 0 ? d + static_cast<long>(rank) : d);
}

// The multi-index of flat position `flat` in a row-major array of `shape`.
inline Shape unravel(std::size_t flat, const Shape& shape) {
  Shape index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

// The flat position of `index` in `shape`.
inline std::size_t ravel(const Shape& index, const Shape& shape) {
  std::size_t flat = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

// numpy's broadcast of two shapes (they must be compatible).
inline Shape broadcast(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::size_t da = i < a.size() ? a[a.size() - 1 - i] : 1, db = i < b.size() ? b[b.size() - 1 - i] : 1;
    out[out.size() - 1 - i] = std::max(da, db);
  }
  return out;
}

// The element of `a` (of shape `s`) that broadcasting puts at `out_index`.
inline double at_broadcast(const Array& a, const Shape& s, const Shape& out_index) {
  Shape index(s.size());
  for (std::size_t d = 0; d < s.size(); ++d) index[d] = s[d] == 1 ? 0 : out_index[out_index.size() - s.size() + d];
  return a.flat(ravel(index, s));
}

inline Shape shape_of(const Array& a) { return Shape(a.shape().begin(), a.shape().end()); }

// |x - y| <= atol + rtol |y| everywhere, shapes equal; NaN never passes.
inline bool close(const Array& x, const Array& y, double rtol = 1e-12, double atol = 1e-12) {
  if (shape_of(x) != shape_of(y)) return false;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!(std::abs(x.flat(i) - y.flat(i)) <= atol + rtol * std::abs(y.flat(i)))) return false;
  return true;
}

// Asserts that x equals the reference y, printing both on failure.
inline void assert_close(const std::string& what, const Tensor& x, const Array& y, double rtol = 1e-12,
                         double atol = 1e-12) {
  const Array a = x.to_array();
  if (!close(a, y, rtol, atol)) {
    std::ostringstream os;
    os << what << ": got " << a << " of shape " << attn::shape_str(shape_of(a)) << ", expected " << y
       << " of shape " << attn::shape_str(shape_of(y));
    RC_FAIL(os.str());
  }
}

// Asserts that every gradient of f at `inputs` matches central differences (float64).
inline void assert_gradcheck(const std::string& what, const attn::GradcheckFn& f, const Inputs& inputs) {
  const attn::GradcheckReport report = attn::gradcheck(f, inputs);
  if (!report.ok) {
    std::ostringstream os;
    os << what << ":\n" << report.str() << "input shapes:";
    for (const Tensor& t : inputs) os << " " << attn::shape_str(t.shape());
    RC_FAIL(os.str());
  }
}

// The same op in float32 gives float32 values close to float64's, and float32 gradients
// (of sum(f * r), r fixed) close to the float64 ones: the float32 kernels' backward too.
inline void assert_float32_matches(const std::string& what, const std::function<Tensor(const Inputs&)>& f,
                                   const Inputs& inputs, double rtol = 1e-5, double atol = 1e-5) {
  Inputs narrow, wide;
  for (const Tensor& t : inputs) {
    narrow.push_back(t.detach().to(Dtype::Float32).requires_grad_(t.requires_grad()));
    wide.push_back(t.detach().requires_grad_(t.requires_grad()));
  }
  const Tensor y32 = f(narrow), y64 = f(wide);
  RC_ASSERT(y32.dtype() == Dtype::Float32);
  assert_close(what + " in float32", y32, y64.to_array(), rtol, atol);
  if (!y64.requires_grad()) return;
  attn::Generator gen(1);
  const Tensor r = attn::randn(y64.shape(), Dtype::Float64, gen);
  attn::sum(attn::mul(y64, r)).backward();
  attn::sum(attn::mul(y32, r.to(Dtype::Float32))).backward();
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (wide[i].requires_grad() && wide[i].grad().defined()) {
      RC_ASSERT(narrow[i].grad().defined());
      RC_ASSERT(narrow[i].grad().dtype() == Dtype::Float32);
      assert_close(what + ": float32 gradient of input " + std::to_string(i), narrow[i].grad(),
                   wide[i].grad().to_array(), 1e-3, 1e-4);
    }
}

}  // namespace prop
