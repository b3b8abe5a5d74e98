// The checks of lab13_online_softmax.hpp (compiled into libattn_labs, which the notebook kernel loads).
#include "labs/grader/lab13_online_softmax.hpp"

#include "labs/grader/grader.hpp"

#include <malloc.h>

#include <cmath>
#include <fstream>
#include <limits>

namespace lab {
namespace online_softmax {

namespace hint {
inline const char* merge =
    "m = max(m_a, m_b); each side was summed against its own max, so bring both to m: "
    "l = exp(m_a - m) l_a + exp(m_b - m) l_b and u = exp(m_a - m) u_a + exp(m_b - m) u_b (each row of u times its factor)";
inline const char* empty =
    "the empty partial (m = -inf, l = 0, u = 0) is where a walk over the keys starts: exp(-inf - m) = 0 drops it, "
    "so the formula needs no special case; m is the max of the two, never their sum or the newer one alone";
inline const char* forward =
    "per block of keys J: s = q k_J^T / sqrt(D) [Tq, n], its partial (m = row max of s, l = row sum of exp(s - m), "
    "u = exp(s - m) v_J), merged into the running one; at the end out = u / l and lse = m + log l";
inline const char* blocks =
    "every block size must give the same out and lse, up to rounding: walk the keys j0 = 0, block, 2 block, ... "
    "with a last block of min(block, Tk - j0) keys, none skipped or read twice";
inline const char* large =
    "large scores: exp of a score near 1e4 overflows; subtract each block's row max before exp, and let the merge "
    "rescale by exp(m_old - m_new) <= 1: no exp of anything above 0";
inline const char* empty_start =
    "scores far below 0: the walk starts from the empty partial, m = -inf, l = 0, u = 0, not m = 0: "
    "exp(s - 0) of a score below about -708 is 0, so l = 0 and out = 0/0";
inline const char* memory =
    "hold one block at a time: the scores of q against k_J are [Tq, block]; never q k^T whole, nor every block's "
    "scores or weights kept until the end (out and lse are all that a row needs)";
inline const char* backward =
    "per block J: p = exp(q k_J^T / sqrt(D) - lse) (the block's weights, again), dv_J = p^T dout, dp = dout v_J^T, "
    "ds = p * (dp - delta) with delta = rowsum(dout * out), dq += ds k_J / sqrt(D), dk_J = ds^T q / sqrt(D)";
inline const char* large_backward =
    "large scores: recompute the weights as exp(s - lse), one exp of a number <= 0; exp(s) / exp(lse) overflows";
inline const char* gradcheck =
    "your backward against central differences of your forward: where the values checks fail too, fix those first";
}  // namespace hint

// ---- references, with the classic mistakes as variants (to name the one the values match) ----

enum class Merge { right, older_not_rescaled, newer_not_rescaled, l_not_rescaled, u_not_rescaled, newer_max };

inline Partial reference_merge(const Partial& a, const Partial& b, Merge variant = Merge::right) {
  attn::no_grad guard;
  Tensor m = variant == Merge::newer_max ? b.m : attn::max(attn::stack({a.m, b.m}, 0), 0);
  Tensor ca = attn::exp(a.m - m), cb = attn::exp(b.m - m);
  Tensor one = attn::ones_like(m);
  Tensor la = variant == Merge::older_not_rescaled || variant == Merge::l_not_rescaled ? one : ca;
  Tensor lb = variant == Merge::newer_not_rescaled || variant == Merge::l_not_rescaled ? one : cb;
  Tensor ua = variant == Merge::older_not_rescaled || variant == Merge::u_not_rescaled ? one : ca;
  Tensor ub = variant == Merge::newer_not_rescaled || variant == Merge::u_not_rescaled ? one : cb;
  return {m, la * a.l + lb * b.l, attn::unsqueeze(ua, 1) * a.u + attn::unsqueeze(ub, 1) * b.u};
}

enum class Forward { right, lse_is_m, not_normalised, scale_by_d, no_scale };

inline Output reference_forward(const Tensor& q, const Tensor& k, const Tensor& v, Forward variant = Forward::right) {
  attn::no_grad guard;
  double d = static_cast<double>(q.size(-1));
  double scale = variant == Forward::scale_by_d ? 1.0 / d : variant == Forward::no_scale ? 1.0 : 1.0 / std::sqrt(d);
  Tensor s = attn::matmul(q, attn::transpose(k, 0, 1)) * scale;
  Tensor m = attn::max(s, 1);
  Tensor p = attn::exp(s - attn::unsqueeze(m, 1));
  Tensor l = attn::sum(p, {1}), u = attn::matmul(p, v);
  Tensor out = variant == Forward::not_normalised ? u : u / attn::unsqueeze(l, 1);
  return {out, variant == Forward::lse_is_m ? m : m + attn::log(l)};
}

enum class Backward { right, p_unscaled, grads_unscaled, scale_by_d, no_delta };

inline Gradients reference_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                                    const Tensor& lse, const Tensor& dout, Backward variant = Backward::right) {
  attn::no_grad guard;
  double d = static_cast<double>(q.size(-1));
  double scale = variant == Backward::scale_by_d ? 1.0 / d : 1.0 / std::sqrt(d);
  double p_scale = variant == Backward::p_unscaled ? 1.0 : scale;
  double g_scale = variant == Backward::grads_unscaled ? 1.0 : scale;
  Tensor p = attn::exp(attn::matmul(q, attn::transpose(k, 0, 1)) * p_scale - attn::unsqueeze(lse, 1));
  Tensor dp = attn::matmul(dout, attn::transpose(v, 0, 1));
  Tensor ds = variant == Backward::no_delta ? p * dp : p * (dp - attn::unsqueeze(attn::sum(dout * out, {1}), 1));
  return {attn::matmul(ds, k) * g_scale, attn::matmul(attn::transpose(ds, 0, 1), q) * g_scale,
          attn::matmul(attn::transpose(p, 0, 1), dout)};
}

// The gradients of sum(out * dout) by attn's autograd through plain softmax attention.
inline Gradients autograd_gradients(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& dout) {
  Tensor qq(Array(q.data<double>()), true), kk(Array(k.data<double>()), true), vv(Array(v.data<double>()), true);
  double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  Tensor out = attn::matmul(attn::softmax(attn::matmul(qq, attn::transpose(kk, 0, 1)) * scale, 1), vv);
  attn::sum(out * dout).backward();
  return {qq.grad(), kk.grad(), vv.grad()};
}

// ---- comparisons ----

inline std::string qkv_shapes(const Tensor& q, const Tensor& k, const Tensor& v, std::size_t block) {
  return shapes_str({{"q", q.shape()}, {"k", k.shape()}, {"v", v.shape()}}) + ", block " + std::to_string(block);
}

inline std::string partial_shapes(const Partial& a, const Partial& b) {
  return shapes_str({{"a.m", a.m.shape()}, {"a.l", a.l.shape()}, {"a.u", a.u.shape()}, {"b.m", b.m.shape()},
                     {"b.l", b.l.shape()}, {"b.u", b.u.shape()}});
}

inline void expect_partial(const Partial& expected, const Partial& got, const std::string& inputs) {
  expect_close("m", expected.m.data<double>(), got.m, inputs, 1e-9, 1e-12);
  expect_close("l", expected.l.data<double>(), got.l, inputs, 1e-9, 1e-12);
  expect_close("u", expected.u.data<double>(), got.u, inputs, 1e-9, 1e-12);
}

inline void expect_output(const Output& expected, const Output& got, const std::string& inputs) {
  expect_close("out", expected.out.data<double>(), got.out, inputs, 1e-9, 1e-12);
  expect_close("lse", expected.lse.data<double>(), got.lse, inputs, 1e-9, 1e-12);
}

inline void expect_gradients_close(const Gradients& expected, const Gradients& got, const std::string& inputs) {
  expect_close("dq", expected.dq.data<double>(), got.dq, inputs, 1e-8, 1e-10);
  expect_close("dk", expected.dk.data<double>(), got.dk, inputs, 1e-8, 1e-10);
  expect_close("dv", expected.dv.data<double>(), got.dv, inputs, 1e-8, 1e-10);
}

// "; your values are what this mistake gives: ..." when `matches(variant)` holds for one of them, else "".
template <class Variant, class Matches>
std::string which_mistake(const std::vector<std::pair<Variant, const char*>>& mistakes, Matches matches) {
  for (const auto& [variant, what] : mistakes) {
    try {
      matches(variant);
      return std::string("; your values are what this mistake gives: ") + what;
    } catch (const Mismatch&) {
    } catch (const std::exception&) {
    }
  }
  return "";
}

// The peak memory (MiB) that f() adds to what the process holds: /proc/self/status's VmHWM after
// it, less VmRSS before it, the peak reset through /proc/self/clear_refs (Linux 4.0 and later);
// malloc_trim(0) first, so that memory freed earlier is not reused unseen (chapter 13's measure).
inline double status_mib(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + ":", 0) == 0) return std::stod(line.substr(key.size() + 1)) / 1024.0;
  throw std::runtime_error("cannot measure memory: no " + key + " in /proc/self/status (this check needs Linux)");
}

inline double peak_mib(const std::function<void()>& f) {
  malloc_trim(0);
  {
    std::ofstream reset("/proc/self/clear_refs");
    if (!(reset << "5"))
      throw std::runtime_error("cannot measure memory: /proc/self/clear_refs is not writable (this check needs Linux)");
  }
  const double before = status_mib("VmRSS");
  f();
  return status_mib("VmHWM") - before;
}

// Where the memory is measured: 256 queries against 8192 keys, so that one [Tq, Tk] float64 array is
// 16 MiB while a block of 64 keys' scores is 128 KiB (few queries: the check stays fast).
constexpr std::size_t memory_Tq = 256, memory_Tk = 8192, memory_block = 64;
constexpr double square_mib = memory_Tq * memory_Tk * 8.0 / (1024.0 * 1024.0);

// out and lse without a [Tq, Tk] array, for the memory checks: nn::flash_attention's out, and the
// log-sum-exp of the blocks' log-sum-exps.
inline Output linear_memory_forward(const Tensor& q, const Tensor& k, const Tensor& v) {
  attn::no_grad guard;
  double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  std::vector<Tensor> lses;
  for (std::size_t j0 = 0; j0 < k.size(0); j0 += memory_block) {
    Tensor kj = attn::narrow(k, 0, j0, std::min(memory_block, k.size(0) - j0));
    lses.push_back(attn::logsumexp(attn::matmul(q, attn::transpose(kj, 0, 1)) * scale, 1));
  }
  return {attn::nn::flash_attention(q, k, v), attn::logsumexp(attn::stack(lses, 0), 0)};
}

inline void expect_small_peak(const std::string& what, double mib) {
  if (mib >= square_mib / 2)
    throw Mismatch(what + " added " + num_str(std::round(mib)) + " MiB at its peak (Tq " + std::to_string(memory_Tq) +
                   ", Tk " + std::to_string(memory_Tk) + ", D 8, block " + std::to_string(memory_block) +
                   "), and one [Tq, Tk] float64 array is " + num_str(square_mib) +
                   " MiB: it holds an array of size Tq x Tk (the whole scores or weights), or keeps every block's");
}

Result grade(const Flash& f, std::ostream& os) {
  Grader grader(13, "the online softmax, tiled attention and its backward from the log-sum-exp", os);
  Reference ref("lab13_online_softmax");
  auto fixed = [&](const std::string& name) { return ref.tensor("fixed", name); };
  auto fixed_partial = [&](const std::string& side) {
    return Partial{fixed(side + "_m"), fixed(side + "_l"), fixed(side + "_u")};
  };
  const Tensor q = fixed("q"), k = fixed("k"), v = fixed("v");

  // ---- (1) the merge ----
  grader.check("merge: keys 0-2 and 3-6 vs PyTorch's (m, l, u) of all 7 (the max in either part)", hint::merge, [&] {
    Partial a = fixed_partial("a"), b = fixed_partial("b");
    Partial got = f.merge(a, b);
    try {
      expect_partial({fixed("m"), fixed("l"), fixed("u")}, got, partial_shapes(a, b));
    } catch (const Mismatch& e) {
      throw Mismatch(e.what() + which_mistake<Merge>(
                                    {{Merge::older_not_rescaled,
                                      "the older partial not rescaled: multiply a's l and u by exp(m_a - m) too"},
                                     {Merge::newer_not_rescaled,
                                      "the newer partial not rescaled: multiply b's l and u by exp(m_b - m) too"},
                                     {Merge::l_not_rescaled,
                                      "u rescaled but l not: l = exp(m_a - m) l_a + exp(m_b - m) l_b, like u"},
                                     {Merge::u_not_rescaled,
                                      "l rescaled but u not: u = exp(m_a - m) u_a + exp(m_b - m) u_b, like l"},
                                     {Merge::newer_max,
                                      "the newer max kept as m: m = max(m_a, m_b), else exp(m_a - m) overflows where "
                                      "the older max was the larger"}},
                                    [&](Merge variant) { expect_partial(reference_merge(a, b, variant), got, ""); }));
    }
  });
  grader.check("merge: random partials, maxima up to 800 apart, in both orders", hint::merge, [&] {
    Random rng(13000);
    for (int trial = 0; trial < 8; ++trial) {
      std::size_t Tq = rng.integer(1, 5), Dv = rng.integer(1, 4);
      auto random_partial = [&] {
        return Partial{Tensor(rng.array({Tq}, -400.0, 400.0)), Tensor(rng.array({Tq}, 1.0, 6.0)),
                       Tensor(rng.array({Tq, Dv}, -5.0, 5.0))};
      };
      Partial a = random_partial(), b = random_partial();
      expect_partial(reference_merge(a, b), f.merge(a, b), partial_shapes(a, b));
      expect_partial(reference_merge(b, a), f.merge(b, a), partial_shapes(b, a));
    }
  });
  grader.check("merge with the empty partial (m = -inf, l = 0, u = 0), either side, returns the other", hint::empty,
               [&] {
                 Partial a = fixed_partial("a");
                 std::size_t Tq = a.m.size(0), Dv = a.u.size(1);
                 Partial empty{Tensor(Array(xt::ones<double>({Tq}) * -std::numeric_limits<double>::infinity())),
                               attn::zeros({Tq}), attn::zeros({Tq, Dv})};
                 expect_partial(a, f.merge(empty, a), "the empty partial, then a: " + partial_shapes(empty, a));
                 expect_partial(a, f.merge(a, empty), "a, then the empty partial: " + partial_shapes(a, empty));
               });

  // ---- (2) the tiled forward ----
  grader.check("forward: out and lse vs PyTorch (Tq 5, Tk 7, block 3: a last block of 1 key)", hint::forward, [&] {
    Output got = f.forward(q, k, v, 3);
    try {
      expect_output({fixed("out"), fixed("lse")}, got, qkv_shapes(q, k, v, 3));
    } catch (const Mismatch& e) {
      throw Mismatch(e.what() + which_mistake<Forward>(
                                    {{Forward::lse_is_m, "lse = m, the log l left out: lse = m + log l"},
                                     {Forward::not_normalised, "out = u, not divided by l: out = u / l"},
                                     {Forward::scale_by_d, "the scores divided by D: divide by sqrt(D)"},
                                     {Forward::no_scale, "the scores not scaled: divide by sqrt(D)"}},
                                    [&](Forward variant) { expect_output(reference_forward(q, k, v, variant), got, ""); }));
    }
  });
  grader.check("forward: random shapes, every block size from 1 to Tk + 1, vs softmax(q k^T / sqrt(D)) v",
               hint::blocks, [&] {
                 Random rng(13100);
                 for (int trial = 0; trial < 6; ++trial) {
                   std::size_t Tq = rng.integer(1, 6), Tk = rng.integer(1, 9), D = rng.integer(1, 5), Dv = rng.integer(1, 4);
                   Tensor rq(rng.array({Tq, D}, -2, 2)), rk(rng.array({Tk, D}, -2, 2)), rv(rng.array({Tk, Dv}));
                   Output expected = reference_forward(rq, rk, rv);
                   for (std::size_t block = 1; block <= Tk + 1; ++block)
                     expect_output(expected, f.forward(rq, rk, rv, block), qkv_shapes(rq, rk, rv, block));
                 }
               });
  grader.check("forward: large scores (q, k up to 100, scores near 1e4; then scores all near -2000), block 4", hint::forward, [&] {
    Random rng(13200);
    Tensor lq(rng.array({6, 4}, -100, 100)), lk(rng.array({10, 4}, -100, 100)), lv(rng.array({10, 3}));
    Output got = f.forward(lq, lk, lv, 4);
    try {
      expect_output(reference_forward(lq, lk, lv), got, qkv_shapes(lq, lk, lv, 4));
    } catch (const Mismatch& e) {
      Tensor oq(Array(lq.data<double>() * 1e-2)), ok(Array(lk.data<double>() * 1e-2));
      bool ordinary = true;
      try {
        expect_output(reference_forward(oq, ok, lv), f.forward(oq, ok, lv, 4), "");
      } catch (const Mismatch&) {
        ordinary = false;
      }
      bool finite = all_finite(array_of(got.out, "out")) && all_finite(array_of(got.lse, "lse"));
      throw at_extreme(e, finite, ordinary, hint::large, hint::forward);
    }
    // Scores all far below 0 (near -2000): a walk started from m = 0 rather than the empty partial
    // underflows every exp(s - 0) to 0, and out = 0/0.
    Tensor nq(Array(xt::ones<double>({6, 4}) * 10.0)), nk(Array(-(100.0 + rng.array({10, 4}, 0, 10))));
    Output neg = f.forward(nq, nk, lv, 4);
    try {
      expect_output(reference_forward(nq, nk, lv), neg, "scores near -2000: " + qkv_shapes(nq, nk, lv, 4));
    } catch (const Mismatch& e) {
      Tensor oq(Array(nq.data<double>() * 1e-2)), ok(Array(nk.data<double>() * 1e-2));
      bool ordinary = true;
      try {
        expect_output(reference_forward(oq, ok, lv), f.forward(oq, ok, lv, 4), "");
      } catch (const Mismatch&) {
        ordinary = false;
      }
      bool finite = all_finite(array_of(neg.out, "out")) && all_finite(array_of(neg.lse, "lse"));
      throw at_extreme(e, finite, ordinary, hint::empty_start, hint::forward);
    }
  });
  grader.check("forward: memory at Tq 256, Tk 8192, block 64 (less than half a [Tq, Tk] float64 array)", hint::memory, [&] {
    Random rng(13300);
    Tensor mq(rng.array({memory_Tq, 8})), mk(rng.array({memory_Tk, 8})), mv(rng.array({memory_Tk, 8}));
    attn::no_grad guard;
    Output got;
    f.forward(mq, mk, mv, memory_block);  // once first: the BLAS buffers a first call touches are not the learner's
    double mib = peak_mib([&] { got = f.forward(mq, mk, mv, memory_block); });
    expect_small_peak("your forward", mib);
    Tensor expected = attn::nn::flash_attention(mq, mk, mv);  // linear memory too, after the measurement
    try {
      expect_close("out", expected.data<double>(), got.out, qkv_shapes(mq, mk, mv, memory_block), 1e-9, 1e-12);
    } catch (const Mismatch& e) {  // the memory is fine; the values are the forward's mistake
      throw Mismatch(e.what() + std::string("; the memory is within bounds, the values are wrong: see the checks above"),
                     hint::forward);
    }
  });

  // ---- (3) the backward from the log-sum-exp ----
  grader.check("backward: dq, dk, dv vs PyTorch's autograd (of sum(out * dout)), given PyTorch's out and lse, block 3",
               hint::backward, [&] {
                 Tensor out = fixed("out"), lse = fixed("lse"), dout = fixed("dout");
                 Gradients got = f.backward(q, k, v, out, lse, dout, 3);
                 try {
                   expect_gradients_close({fixed("grad_q"), fixed("grad_k"), fixed("grad_v")}, got,
                                          qkv_shapes(q, k, v, 3));
                 } catch (const Mismatch& e) {
                   throw Mismatch(
                       e.what() +
                       which_mistake<Backward>(
                           {{Backward::p_unscaled,
                             "the weights recomputed from unscaled scores, exp(q k^T - lse): lse is the log-sum-exp of "
                             "q k^T / sqrt(D), so recompute p = exp(q k^T / sqrt(D) - lse)"},
                            {Backward::grads_unscaled,
                             "dq and dk without the scale: s = q k^T / sqrt(D), so dq = ds k / sqrt(D) and dk = ds^T q / sqrt(D)"},
                            {Backward::scale_by_d, "the scores scaled by 1/D: the scale is 1/sqrt(D)"},
                            {Backward::no_delta,
                             "ds = p * dp, delta left out: ds = p * (dp - delta), delta = rowsum(dout * out)"}},
                           [&](Backward variant) {
                             expect_gradients_close(reference_backward(q, k, v, out, lse, dout, variant), got, "");
                           }));
                 }
               });
  grader.check("backward: random shapes and block sizes vs attn's autograd through softmax attention", hint::backward,
               [&] {
                 Random rng(13400);
                 for (int trial = 0; trial < 6; ++trial) {
                   std::size_t Tq = rng.integer(1, 6), Tk = rng.integer(1, 9), D = rng.integer(1, 5), Dv = rng.integer(1, 4);
                   Tensor rq(rng.array({Tq, D}, -2, 2)), rk(rng.array({Tk, D}, -2, 2)), rv(rng.array({Tk, Dv})),
                       dout(rng.array({Tq, Dv}));
                   Output o = reference_forward(rq, rk, rv);
                   Gradients expected = autograd_gradients(rq, rk, rv, dout);
                   for (std::size_t block : {std::size_t(1), rng.integer(2, Tk + 1)})
                     expect_gradients_close(expected, f.backward(rq, rk, rv, o.out, o.lse, dout, block),
                                            qkv_shapes(rq, rk, rv, block));
                 }
               });
  grader.check("gradcheck: your backward against central differences of your forward (float64), q, k and v",
               hint::gradcheck, [&] {
                 Random rng(13500);
                 for (int trial = 0; trial < 4; ++trial) {
                   std::size_t Tq = rng.integer(1, 4), Tk = rng.integer(1, 6), D = rng.integer(1, 4), Dv = rng.integer(1, 3);
                   std::size_t block = rng.integer(1, Tk);
                   std::vector<Tensor> in = {rng.tensor({Tq, D}), rng.tensor({Tk, D}), rng.tensor({Tk, Dv})};
                   expect_gradients("your forward and backward", [&](const std::vector<Tensor>& x) {
                     Output o;
                     {
                       attn::no_grad guard;
                       o = f.forward(x[0], x[1], x[2], block);
                     }
                     Tensor lse = o.lse;
                     return learner_op("backward", o.out, x, {"q", "k", "v"},
                                       [&f, lse, block](const std::vector<Tensor>& a, const Tensor& out,
                                                        const Tensor& grad) -> std::vector<Tensor> {
                                         Gradients g = f.backward(a[0], a[1], a[2], out, lse, grad, block);
                                         return {g.dq, g.dk, g.dv};
                                       });
                   }, in, {"q", "k", "v"});
                 }
               });
  grader.check("backward: large scores (q, k up to 100), block 4, vs attn's autograd", hint::backward, [&] {
    Random rng(13600);
    Tensor lq(rng.array({6, 4}, -100, 100)), lk(rng.array({10, 4}, -100, 100)), lv(rng.array({10, 3})),
        dout(rng.array({6, 3}));
    auto run = [&](const Tensor& a, const Tensor& b) {
      Output o = reference_forward(a, b, lv);
      return std::make_pair(autograd_gradients(a, b, lv, dout), f.backward(a, b, lv, o.out, o.lse, dout, 4));
    };
    auto [expected, got] = run(lq, lk);
    try {
      expect_gradients_close(expected, got, qkv_shapes(lq, lk, lv, 4));
    } catch (const Mismatch& e) {
      bool ordinary = true;
      try {
        auto [e2, g2] = run(Tensor(Array(lq.data<double>() * 1e-2)), Tensor(Array(lk.data<double>() * 1e-2)));
        expect_gradients_close(e2, g2, "");
      } catch (const Mismatch&) {
        ordinary = false;
      }
      bool finite = all_finite(array_of(got.dq, "dq")) && all_finite(array_of(got.dk, "dk")) &&
                    all_finite(array_of(got.dv, "dv"));
      throw at_extreme(e, finite, ordinary, hint::large_backward, hint::backward);
    }
  });
  grader.check("backward: memory at Tq 256, Tk 8192, block 64 (less than half a [Tq, Tk] float64 array)", hint::memory, [&] {
    Random rng(13700);
    Tensor mq(rng.array({memory_Tq, 8})), mk(rng.array({memory_Tk, 8})), mv(rng.array({memory_Tk, 8})),
        dout(rng.array({memory_Tq, 8}));
    Output o = linear_memory_forward(mq, mk, mv);
    Gradients got;
    {
      attn::no_grad guard;
      f.backward(mq, mk, mv, o.out, o.lse, dout, memory_block);  // once first, as for the forward
      double mib = peak_mib([&] { got = f.backward(mq, mk, mv, o.out, o.lse, dout, memory_block); });
      expect_small_peak("your backward", mib);
    }
    // The expected gradients by autograd through nn::flash_attention (its backward's memory is linear too).
    Tensor gq(Array(mq.data<double>()), true), gk(Array(mk.data<double>()), true), gv(Array(mv.data<double>()), true);
    attn::sum(attn::nn::flash_attention(gq, gk, gv) * dout).backward();
    try {
      expect_gradients_close({gq.grad(), gk.grad(), gv.grad()}, got, qkv_shapes(mq, mk, mv, memory_block));
    } catch (const Mismatch& e) {  // the memory is fine; the values are the backward's mistake
      throw Mismatch(e.what() + std::string("; the memory is within bounds, the values are wrong: see the checks above"),
                     hint::backward);
    }
  });
  return grader.finish();
}

}  // namespace online_softmax
}  // namespace lab
