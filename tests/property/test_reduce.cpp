// Properties of the reductions (core/ops/reduce.cpp) and the softmaxes (core/ops/softmax.cpp,
// masked_softmax): forward against loops over random shapes, dims (negative ones too) and
// keepdim, float32 against float64, gradcheck in float64, and softmax's stability.
#include "property.hpp"

#include "core/backend/fused.hpp"

#include <limits>

using namespace prop;

namespace {

// A random non-empty subset of the dims of a tensor of `rank`, some negative.
std::vector<long> dims(std::size_t rank) {
  std::vector<long> out;
  for (std::size_t d = 0; d < rank; ++d)
    if (*rc::gen::arbitrary<bool>()) out.push_back(*rc::gen::arbitrary<bool>() ? long(d) - long(rank) : long(d));
  if (out.empty()) out.push_back(dim(rank));
  return out;
}

// The shape after reducing `reduced` (positive dims) of `s`.
Shape reduced_shape(const Shape& s, const std::vector<bool>& reduced, bool keepdim) {
  Shape out;
  for (std::size_t d = 0; d < s.size(); ++d)
    if (!reduced[d]) out.push_back(s[d]);
    else if (keepdim) out.push_back(1);
  return out;
}

// Folds every element of x into its reduced position: fold(acc, value) from `init`.
Array reduce_loop(const Array& x, const std::vector<bool>& reduced, bool keepdim, double init,
                  const std::function<double(double, double)>& fold) {
  const Shape s = shape_of(x), kept = reduced_shape(s, reduced, true);
  Array out = xt::zeros<double>(kept);
  out.fill(init);
  for (std::size_t i = 0; i < x.size(); ++i) {
    Shape index = unravel(i, s);
    for (std::size_t d = 0; d < s.size(); ++d)
      if (reduced[d]) index[d] = 0;
    double& acc = out.flat(ravel(index, kept));
    acc = fold(acc, x.flat(i));
  }
  out.reshape(reduced_shape(s, reduced, keepdim));
  return out;
}

std::vector<bool> which(const std::vector<long>& ds, std::size_t rank) {
  std::vector<bool> reduced(rank, false);
  for (long d : ds) reduced[positive_dim(d, rank)] = true;
  return reduced;
}

// softmax along dim d by loops: exp(x - max) / sum over the lane.
Array softmax_loop(const Array& x, std::size_t d, bool log) {
  const Shape s = shape_of(x);
  std::vector<bool> lane(s.size(), false);
  lane[d] = true;
  const Array mx = reduce_loop(x, lane, true, -INFINITY, [](double a, double v) { return std::max(a, v); });
  Array shifted = x;
  for (std::size_t i = 0; i < x.size(); ++i) {
    Shape index = unravel(i, s);
    index[d] = 0;
    shifted.flat(i) = x.flat(i) - mx.flat(ravel(index, reduced_shape(s, lane, true)));
  }
  Array e = xt::exp(shifted);
  const Array total = reduce_loop(e, lane, true, 0.0, [](double a, double v) { return a + v; });
  Array out = x;
  for (std::size_t i = 0; i < x.size(); ++i) {
    Shape index = unravel(i, s);
    index[d] = 0;
    const double z = total.flat(ravel(index, reduced_shape(s, lane, true)));
    out.flat(i) = log ? shifted.flat(i) - std::log(z) : e.flat(i) / z;
  }
  return out;
}

const auto plus = [](double a, double v) { return a + v; };
const auto larger = [](double a, double v) { return std::max(a, v); };

}  // namespace

TEST_CASE("sum, mean and max over all elements, rank 0 to 4") {
  PROPERTY("sum(), mean(), max()", [] {
    const Tensor x = randn(shape(0, 4), seed());
    const Array xa = x.to_array();
    assert_close("sum()", attn::sum(x), Array(xt::sum(xa)()), 1e-12, 1e-14);
    assert_close("mean()", attn::mean(x), Array(xt::mean(xa)()), 1e-12, 1e-14);
    assert_close("max()", attn::max(x), Array(xt::amax(xa)()), 0, 0);
  });
}

TEST_CASE("sum and mean over random dims, with and without keepdim") {
  PROPERTY("sum, mean", [] {
    const Shape s = shape(1, 4);
    const Tensor x = randn(s, seed());
    const std::vector<long> ds = dims(s.size());
    const bool keepdim = *rc::gen::arbitrary<bool>();
    const std::vector<bool> reduced = which(ds, s.size());
    std::size_t n = 1;
    for (std::size_t d = 0; d < s.size(); ++d) n *= reduced[d] ? s[d] : 1;
    const Array total = reduce_loop(x.to_array(), reduced, keepdim, 0.0, plus);
    assert_close("sum(dims)", attn::sum(x, ds, keepdim), total, 1e-12, 1e-14);
    assert_close("mean(dims)", attn::mean(x, ds, keepdim), total / static_cast<double>(n), 1e-12, 1e-14);
    assert_gradcheck("sum(dims)", [&](const Inputs& in) { return attn::sum(in[0], ds, keepdim); }, {x});
    assert_gradcheck("mean(dims)", [&](const Inputs& in) { return attn::mean(in[0], ds, keepdim); }, {x});
    assert_float32_matches("sum(dims)", [&](const Inputs& in) { return attn::sum(in[0], ds, keepdim); }, {x});
    assert_float32_matches("mean(dims)", [&](const Inputs& in) { return attn::mean(in[0], ds, keepdim); }, {x});
  });
}

TEST_CASE("max and logsumexp over a random dim") {
  PROPERTY("max, logsumexp", [] {
    const Shape s = shape(1, 4);
    const Tensor x = randn(s, seed());  // distinct values (almost surely): no tie within the step
    const long d = dim(s.size());
    const bool keepdim = *rc::gen::arbitrary<bool>();
    std::vector<bool> reduced(s.size(), false);
    reduced[positive_dim(d, s.size())] = true;
    const Array mx = reduce_loop(x.to_array(), reduced, keepdim, -INFINITY, larger);
    assert_close("max(dim)", attn::max(x, d, keepdim), mx, 0, 0);
    const Array lse = xt::log(reduce_loop(xt::exp(x.to_array()), reduced, keepdim, 0.0, plus));
    assert_close("logsumexp", attn::logsumexp(x, d, keepdim), lse, 1e-12, 1e-14);
    assert_gradcheck("max(dim)", [&](const Inputs& in) { return attn::max(in[0], d, keepdim); }, {x});
    assert_gradcheck("logsumexp", [&](const Inputs& in) { return attn::logsumexp(in[0], d, keepdim); }, {x});
    assert_float32_matches("logsumexp", [&](const Inputs& in) { return attn::logsumexp(in[0], d, keepdim); }, {x});
  });
}

TEST_CASE("max sends the gradient of a tie to the first maximum only") {
  PROPERTY("max tie", [] {
    const Shape s = shape(1, 3);
    Tensor x = attn::full(s, 1.5, Dtype::Float64, true);
    attn::max(x).backward();
    Array expected = xt::zeros<double>(s);
    expected.flat(0) = 1.0;
    assert_close("grad of max over equal values", x.grad(), expected, 0, 0);
  });
}

TEST_CASE("softmax and log_softmax along a random dim: loops, gradients, float32, large inputs") {
  PROPERTY("softmax, log_softmax", [] {
    const Shape s = shape(1, 4);
    const std::uint64_t sd = seed();
    const double scale = *rc::gen::element(1.0, 100.0, 1000.0);
    const Tensor x = randn(s, sd);
    const Tensor big = attn::mul(x.detach(), scale);  // stable: no overflow at 1000
    const long d = dim(s.size());
    const std::size_t pd = positive_dim(d, s.size());
    for (bool fused : {true, false}) {  // the backend's kernels and the composed ops docs/ops derives
      attn::FusedOps guard(fused);
      assert_close("softmax", attn::softmax(big, d), softmax_loop(big.to_array(), pd, false), 1e-12, 1e-15);
      assert_close("log_softmax", attn::log_softmax(big, d), softmax_loop(big.to_array(), pd, true), 1e-12, 1e-12);
      assert_gradcheck("softmax", [d](const Inputs& in) { return attn::softmax(in[0], d); }, {x});
      assert_gradcheck("log_softmax", [d](const Inputs& in) { return attn::log_softmax(in[0], d); }, {x});
      assert_float32_matches("softmax", [d](const Inputs& in) { return attn::softmax(in[0], d); }, {x}, 1e-4, 1e-6);
      assert_float32_matches("log_softmax", [d](const Inputs& in) { return attn::log_softmax(in[0], d); }, {x}, 1e-4,
                             1e-5);
    }
  });
}

TEST_CASE("masked_softmax: a random broadcast mask; blocked entries and fully blocked lanes are 0") {
  PROPERTY("masked_softmax", [] {
    const Shape s = shape(1, 4);
    const Tensor x = randn(s, seed());
    const Shape ms = broadcastable_to(s);
    attn::Generator gen(seed());
    attn::Mask mask = xt::zeros<bool>(ms);
    for (bool& m : mask) m = gen.uniform() < 0.4;
    // The reference: the softmax of x with -inf where blocked, 0 on a lane blocked entirely.
    Array blocked_x = x.to_array();
    for (std::size_t i = 0; i < blocked_x.size(); ++i)
      if (at_broadcast(xt::cast<double>(mask), ms, unravel(i, s)) != 0) blocked_x.flat(i) = -INFINITY;
    Array expected = softmax_loop(blocked_x, s.size() - 1, false);
    for (double& v : expected)
      if (std::isnan(v)) v = 0.0;
    for (bool fused : {true, false}) {
      attn::FusedOps guard(fused);
      assert_close("masked_softmax", attn::masked_softmax(x, mask, -1), expected, 1e-12, 1e-15);
      assert_gradcheck("masked_softmax", [&mask](const Inputs& in) { return attn::masked_softmax(in[0], mask, -1); },
                       {x});
    }
  });
}
