// Properties of the products (core/ops/matmul.cpp, core/ops/conv.cpp): matmul over numpy's
// cases (1-D operands, stacks with broadcast batch dims), linear with and without a bias,
// conv1d with random padding, each against a triple loop, in float32 too, and gradcheck.
#include "property.hpp"

#include "core/kernels.hpp"

using namespace prop;

namespace {

// numpy's matmul by loops: a 1-D operand is a row (left) or a column (right) vector whose
// extra dim is dropped from the result; batch dims broadcast.
Array matmul_loop(const Array& a, const Array& b) {
  Shape sa = shape_of(a), sb = shape_of(b);
  const bool a_vec = sa.size() == 1, b_vec = sb.size() == 1;
  if (a_vec) sa.insert(sa.begin(), 1);
  if (b_vec) sb.push_back(1);
  const std::size_t n = sa[sa.size() - 2], k = sa.back(), m = sb.back();
  const Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2), batch = broadcast(ba, bb);
  Shape full = batch;
  full.push_back(n);
  full.push_back(m);
  Array out = xt::zeros<double>(full);
  std::size_t batches = 1;
  for (std::size_t d : batch) batches *= d;
  for (std::size_t t = 0; t < batches; ++t) {
    const Shape bi = unravel(t, batch);
    auto offset = [&](const Shape& own) {  // the flat start of this batch's matrix in an operand
      Shape index(own.size());
      for (std::size_t d = 0; d < own.size(); ++d) index[d] = own[d] == 1 ? 0 : bi[bi.size() - own.size() + d];
      return own.empty() ? 0 : ravel(index, own);
    };
    const std::size_t oa = offset(ba) * n * k, ob = offset(bb) * k * m;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < m; ++j) {
        double acc = 0;
        for (std::size_t l = 0; l < k; ++l) acc += a.flat(oa + i * k + l) * b.flat(ob + l * m + j);
        out.flat(t * n * m + i * m + j) = acc;
      }
  }
  Shape result = batch;
  if (!a_vec) result.push_back(n);
  if (!b_vec) result.push_back(m);
  out.reshape(result);
  return out;
}

}  // namespace

TEST_CASE("matmul: 1-D and N-D operands with broadcast batch dims, against loops") {
  PROPERTY("matmul", [] {
    const std::size_t n = *rc::gen::inRange<std::size_t>(1, 4), k = size(), m = size();
    const Shape batch = shape(0, 2);
    Shape sa = broadcastable_to(batch), sb = broadcastable_to(batch);
    if (*rc::gen::arbitrary<bool>()) std::swap(sa, sb);
    const bool a_vec = *rc::gen::element(0, 0, 1) == 1, b_vec = *rc::gen::element(0, 0, 1) == 1;
    if (a_vec) sa = {k};
    else sa.insert(sa.end(), {n, k});
    if (b_vec) sb = {k};
    else sb.insert(sb.end(), {k, m});
    const Tensor a = randn(sa, seed()), b = randn(sb, seed());
    for (bool fused : {true, false}) {  // BLAS planning, and the plain composition
      attn::FusedOps guard(fused);
      assert_close("matmul", attn::matmul(a, b), matmul_loop(a.to_array(), b.to_array()), 1e-12, 1e-13);
      assert_gradcheck("matmul", [](const Inputs& in) { return attn::matmul(in[0], in[1]); }, {a, b});
      assert_float32_matches("matmul", [](const Inputs& in) { return attn::matmul(in[0], in[1]); }, {a, b}, 1e-4, 1e-5);
    }
  });
}

TEST_CASE("linear: x [..., in] W^T + bias [out], or + a whole [..., out] array") {
  PROPERTY("linear", [] {
    const std::size_t in = size(), out = size();
    Shape sx = shape(0, 2);
    sx.push_back(in);
    const int bias_kind = *rc::gen::inRange(0, 3);  // none, [out], [..., out]
    if (bias_kind == 2 && sx.size() < 2) sx.insert(sx.begin(), 2);
    Shape sy(sx.begin(), sx.end() - 1);
    sy.push_back(out);
    const Tensor x = randn(sx, seed()), w = randn({out, in}, seed());
    const Tensor bias = bias_kind == 0 ? Tensor() : randn(bias_kind == 1 ? Shape{out} : sy, seed());
    Array expected = matmul_loop(x.to_array(), xt::transpose(w.to_array()));
    if (bias.defined()) expected = expected + bias.to_array();
    Inputs inputs{x, w};
    if (bias.defined()) inputs.push_back(bias);
    const auto f = [](const Inputs& in) { return attn::linear(in[0], in[1], in.size() > 2 ? in[2] : Tensor()); };
    for (bool fused : {true, false}) {
      attn::FusedOps guard(fused);
      assert_close("linear", attn::linear(x, w, bias), expected, 1e-12, 1e-13);
      assert_gradcheck("linear", f, inputs);
      assert_float32_matches("linear", f, inputs, 1e-4, 1e-5);
    }
  });
}

TEST_CASE("conv1d: random channels, kernel, padding on each side, with and without bias") {
  PROPERTY("conv1d", [] {
    const std::size_t N = *rc::gen::inRange<std::size_t>(1, 3), Cin = *rc::gen::inRange<std::size_t>(1, 3),
                      Cout = *rc::gen::inRange<std::size_t>(1, 3), K = *rc::gen::inRange<std::size_t>(1, 4),
                      pl = *rc::gen::inRange<std::size_t>(0, 3), pr = *rc::gen::inRange<std::size_t>(0, 3);
    const std::size_t L = *rc::gen::inRange<std::size_t>(K > pl + pr ? K - pl - pr : 1, 6);
    const Tensor x = randn({N, Cin, L}, seed()), w = randn({Cout, Cin, K}, seed());
    const Tensor b = *rc::gen::arbitrary<bool>() ? randn({Cout}, seed()) : Tensor();
    const std::size_t Lout = L + pl + pr - K + 1;
    Array expected = xt::zeros<double>({N, Cout, Lout});
    const Array xa = x.to_array(), wa = w.to_array();
    for (std::size_t n = 0; n < N; ++n)
      for (std::size_t o = 0; o < Cout; ++o)
        for (std::size_t t = 0; t < Lout; ++t) {
          double acc = b.defined() ? b.to_array()(o) : 0.0;
          for (std::size_t c = 0; c < Cin; ++c)
            for (std::size_t j = 0; j < K; ++j) {
              const long pos = long(t + j) - long(pl);  // zero padding outside [0, L)
              if (pos >= 0 && pos < long(L)) acc += wa(o, c, j) * xa(n, c, std::size_t(pos));
            }
          expected(n, o, t) = acc;
        }
    assert_close("conv1d", attn::conv1d(x, w, b, pl, pr), expected, 1e-12, 1e-13);
    Inputs inputs{x, w};
    if (b.defined()) inputs.push_back(b);
    const auto f = [pl, pr](const Inputs& in) { return attn::conv1d(in[0], in[1], in.size() > 2 ? in[2] : Tensor(), pl, pr); };
    assert_gradcheck("conv1d", f, inputs);
    assert_float32_matches("conv1d", f, inputs, 1e-4, 1e-5);
  });
}
