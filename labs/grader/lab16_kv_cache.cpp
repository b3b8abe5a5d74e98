// The checks of lab16_kv_cache.hpp (compiled into libattn_labs, which the notebook kernel loads).
#include "labs/grader/lab16_kv_cache.hpp"

#include "labs/grader/grader.hpp"

#include <xtensor/xmanipulation.hpp>
#include <xtensor/xview.hpp>

#include <cmath>
#include <functional>
#include <optional>

namespace lab {
namespace kv_cache {

namespace hint {
inline const char* first =
    "project x_t, append its key and value to the cache (empty before the first step), then attend over the cache: "
    "with one position cached the output is that position's value, v_0";
inline const char* steps =
    "each step's row is out_t = softmax(q_t K^T / sqrt(d)) V over the keys and values of positions 0 .. t, this "
    "step's included; d is the width of a key (q.size(-1)), not the input's E";
inline const char* cache =
    "after step t the cache holds t + 1 positions, in order: attn::concat({cache.key, k}, 1) and the same for the "
    "values ([B, t + 1, d] each); only this step's key and value are new";
inline const char* projections =
    "call each projection once per step, on x_t [B, 1, E] alone: the earlier positions' keys and values are in the "
    "cache, and recomputing them is what the cache is there to avoid";
inline const char* filled =
    "read the old keys and values from the cache as they are (a step cannot know the inputs they came from), "
    "append this step's, and attend over all of them";
inline const char* overflow =
    "exp of scores near 1e4 overflows: the softmax subtracts each row's maximum before exp (attn::softmax does)";
inline const char* random =
    "B is x_t.size(0), E x_t.size(-1), d the projections' output width; the first step finds the cache empty "
    "(cache.key.defined() is false)";
}  // namespace hint

// ---- the right rows and the usual mistakes, computed here on arrays ----

enum class V { right, no_scale, scale_d, scale_width, scale_positions, scale_after_softmax, new_only, before_append, softmax_query_axis,
               values_are_keys };

inline Array project(const Array& x, const Array& W) {  // [B, n, E] x [E, d] -> [B, n, d]
  const std::size_t B = x.shape()[0], n = x.shape()[1], E = x.shape()[2], d = W.shape()[1];
  Array out = xt::zeros<double>({B, n, d});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t c = 0; c < d; ++c)
        for (std::size_t e = 0; e < E; ++e) out(b, i, c) += x(b, i, e) * W(e, c);
  return out;
}

// One query row q [B, 1, d] over keys and values [B, n, d] (the last one this step's): [B, 1, d].
inline Array attend(const Array& q, const Array& K, const Array& Vals, V v, double E) {
  const std::size_t B = K.shape()[0], n = K.shape()[1], d = K.shape()[2];
  Array out = xt::zeros<double>({B, std::size_t(1), d});
  const std::size_t lo = v == V::new_only ? n - 1 : 0, hi = v == V::before_append ? n - 1 : n;
  const double scale = v == V::no_scale || v == V::scale_after_softmax ? 1.0
                       : v == V::scale_d                                ? 1.0 / double(d)
                       : v == V::scale_width                            ? 1.0 / std::sqrt(E)
                       : v == V::scale_positions                        ? 1.0 / std::sqrt(double(n))
                                                                        : 1.0 / std::sqrt(double(d));
  for (std::size_t b = 0; b < B; ++b) {
    std::vector<double> s;
    double top = -INFINITY, total = 0.0;
    for (std::size_t j = lo; j < hi; ++j) {
      double dot = 0.0;
      for (std::size_t c = 0; c < d; ++c) dot += q(b, 0, c) * K(b, j, c);
      s.push_back(dot * scale);
      top = std::max(top, s.back());
    }
    for (double& x : s) total += x = std::exp(x - top);
    for (std::size_t j = lo; j < hi; ++j) {
      double w = v == V::softmax_query_axis ? 1.0 : s[j - lo] / total;
      if (v == V::scale_after_softmax) w /= std::sqrt(double(d));
      for (std::size_t c = 0; c < d; ++c) out(b, 0, c) += w * (v == V::values_are_keys ? K : Vals)(b, j, c);
    }
  }
  return out;
}

// Every step's row of causal self-attention over x [B, T, E]: [B, T, d].
inline Array causal_rows(const Array& x, const Array& Wq, const Array& Wk, const Array& Wv, V v) {
  const std::size_t B = x.shape()[0], T = x.shape()[1], d = Wq.shape()[1];
  Array q = project(x, Wq), K = project(x, Wk), Vals = project(x, Wv), out = xt::zeros<double>({B, T, d});
  for (std::size_t t = 0; t < T; ++t) {
    auto upto = [&](const Array& a) { return Array(xt::view(a, xt::all(), xt::range(0, t + 1), xt::all())); };
    Array row = attend(Array(xt::view(q, xt::all(), xt::range(t, t + 1), xt::all())), upto(K), upto(Vals), v,
                       double(x.shape()[2]));
    xt::view(out, xt::all(), xt::range(t, t + 1), xt::all()) = row;
  }
  return out;
}

const std::vector<std::pair<V, const char*>> mistakes = {
    {V::no_scale, "scores not divided by sqrt(d): softmax(q_t K^T / sqrt(d))"},
    {V::scale_d, "scores divided by d: by sqrt(d), the square root of a key's width"},
    {V::scale_width,
     "scores divided by sqrt(E), the input's width: by sqrt(d), the width of a key (q.size(-1)), which the products "
     "sum over"},
    {V::scale_positions,
     "scores divided by sqrt(t + 1), the positions cached (cache.key.size(1)): by sqrt(d), the width of a key "
     "(q.size(-1)), which the products sum over; the softmax itself is over the positions"},
    {V::scale_after_softmax,
     "the weights divided by sqrt(d) after the softmax: the scores are scaled before it, and the weights sum to 1"},
    {V::new_only,
     "each step attends to this step's value alone: the cache was replaced, not appended to, so the step sees no "
     "earlier position"},
    {V::before_append,
     "each step attends over the positions before it, with its own key and value left out: append them first, a "
     "query attends to itself too"},
    {V::softmax_query_axis,
     "every weight 1 (the values summed): a softmax over the query axis, of size 1; the scores [B, 1, t + 1] are "
     "normalised over the keys, the last axis"},
    {V::values_are_keys, "the keys summed where the values belong: the value cache holds the keys where the values go"}};

// "; your rows are what this mistake gives: ..." when exactly one usual mistake gives the learner's rows and,
// when `also` is given, passes it too (the random check asks that it reproduce the fixed steps as well: on a
// small draw, B = 1 or d = 1, different mistakes can give the same rows).
inline std::string diagnose(const std::function<Array(V)>& rows, const Array& got,
                            const std::function<bool(V)>& also = nullptr) {
  std::vector<const char*> matched;
  for (const auto& [v, what] : mistakes) {
    try {
      expect_close("", rows(v), got, "", 1e-9, 1e-12);
      if (!also || also(v)) matched.push_back(what);
    } catch (const Mismatch&) {
    }
  }
  return matched.size() == 1 ? std::string("; your rows are what this mistake gives: ") + matched[0] : "";
}

// ---- running the learner's steps ----

struct Call {
  std::string which;
  Shape shape;
};

// The grader's projections, x W for W [E, d], recording every call.
inline Projections projections(const Array& Wq, const Array& Wk, const Array& Wv, std::vector<Call>& calls) {
  auto one = [&calls](const std::string& which, const Array& W) {
    return [&calls, which, W](const Tensor& x) {
      calls.push_back({which, x.shape()});
      if (x.dim() != 3 || x.size(2) != W.shape()[0])
        throw Mismatch("project." + which + " takes x [B, n, E = " + std::to_string(W.shape()[0]) + "], received " +
                       shape_str(x.shape()));
      return attn::matmul(x, Tensor(W));
    };
  };
  return {one("query", Wq), one("key", Wk), one("value", Wv)};
}

// What a wrong cache after step t holds, against `keys` [B, t + 1, d], the rows it should hold.
inline std::string cache_mistake(const Cache& c, const Array& keys, std::size_t t, std::size_t E) {
  const std::size_t d = keys.shape()[2];
  if (!c.key.defined() || !c.value.defined() || c.length() == 0)
    return "; the cache is still empty after step " + std::to_string(t) + ": append this step's key and value to it";
  if (c.key.dim() == 3 && c.key.size(2) == E && E != d)
    return "; the cache holds the inputs x " + shape_str(c.key.shape()) + ", not their keys and values [B, t + 1, d]: "
           "a cache of inputs makes every step project the whole prefix again";
  if (t > 0 && c.length() == 1)
    return "; the cache holds one position after step " + std::to_string(t) +
           ": it was replaced, not appended to (attn::concat({cache.key, k}, 1))";
  Array k = c.key.data<double>(), v = c.value.data<double>();
  if (k.shape() == keys.shape() && xt::allclose(k, xt::flip(keys, 1), 1e-9, 1e-12) && t > 0)
    return "; the cache holds the positions newest first: append at the end, attn::concat({old, new}, 1), so that "
           "row j is position j";
  if (v.shape() == keys.shape() && xt::allclose(v, keys, 1e-9, 1e-12))
    return "; the value cache holds the keys where the values go";
  return "";
}

// Runs the learner's step over x [B, T, E] from `cache`, checking the cache after each step against
// `keys`/`values` ([B, T0 + T, d], the rows it must hold) when given; returns the rows [B, T, d].
inline Array run(const KVCache& m, const Array& x, const Projections& p, Cache& cache, const Array* keys,
                 const Array* values, const std::string& inputs) {
  const std::size_t B = x.shape()[0], T = x.shape()[1], E = x.shape()[2], t0 = cache.length();
  std::vector<Array> rows;
  for (std::size_t t = 0; t < T; ++t) {
    Tensor x_t(Array(xt::view(x, xt::all(), xt::range(t, t + 1), xt::all())));
    Tensor out = m.decode_step(x_t, p, cache);
    Array row = array_of(out, "decode_step");
    if (row.dimension() != 3 || row.shape()[0] != B || row.shape()[1] != 1)
      throw Mismatch("decode_step at step " + std::to_string(t0 + t) + " returned " +
                     shape_str(Shape(row.shape().begin(), row.shape().end())) + ", expected [B, 1, d] with B = " +
                     std::to_string(B) + " (inputs: " + inputs + ")");
    rows.push_back(row);
    if (keys) {
      const std::size_t n = t0 + t + 1;
      auto upto = [&](const Array& a) { return Array(xt::view(a, xt::all(), xt::range(0, n), xt::all())); };
      try {
        if (!cache.key.defined() || !cache.value.defined())
          throw Mismatch("cache.key or cache.value is undefined after step " + std::to_string(t0 + t));
        expect_close("cache.key after step " + std::to_string(t0 + t), upto(*keys), cache.key, inputs, 1e-9, 1e-12);
        expect_close("cache.value after step " + std::to_string(t0 + t), upto(*values), cache.value, inputs, 1e-9,
                     1e-12);
      } catch (const Mismatch& e) {
        throw Mismatch(e.what() + cache_mistake(cache, upto(*keys), t0 + t, E));
      }
    }
  }
  Array out = xt::zeros<double>({B, T, rows.empty() ? std::size_t(0) : rows[0].shape()[2]});
  for (std::size_t t = 0; t < T; ++t) {
    if (rows[t].shape()[2] != out.shape()[2])
      throw Mismatch("decode_step returned rows of different widths at steps 0 and " + std::to_string(t));
    xt::view(out, xt::all(), xt::range(t, t + 1), xt::all()) = rows[t];
  }
  return out;
}

Result grade(const KVCache& m, std::ostream& os) {
  Grader grader(16, "a decoding step with a KV cache", os);
  Reference ref("lab16_kv_cache");
  const Array x = ref.array("steps", "x"), Wq = ref.array("steps", "Wq"), Wk = ref.array("steps", "Wk"),
              Wv = ref.array("steps", "Wv");
  const std::string inputs = "x [2, 6, 5] one step at a time, W_q, W_k, W_v [5, 3]";
  attn::no_grad guard;

  // The rows of the fixed steps against PyTorch's full causal attention, the first `T` of them.
  auto fixed_rows = [&](std::size_t T, const Array& q_weights, const std::string& c) {
    std::vector<Call> calls;
    Cache cache;
    Array xs = xt::view(x, xt::all(), xt::range(0, T), xt::all());
    Array got = run(m, xs, projections(q_weights, Wk, Wv, calls), cache, nullptr, nullptr, inputs);
    Array want = xt::view(ref.array(c, "out"), xt::all(), xt::range(0, T), xt::all());
    try {
      expect_close("the rows of steps 0 .. " + std::to_string(T - 1), want, got, inputs, 1e-9, 1e-12);
    } catch (const Mismatch& e) {
      throw Mismatch(e.what() + diagnose([&](V v) { return causal_rows(xs, q_weights, Wk, Wv, v); }, got));
    }
  };
  grader.check("the first step (empty cache) vs PyTorch: its output is v_0", hint::first, [&] { fixed_rows(1, Wq, "steps"); });
  grader.check("six steps vs PyTorch's full causal attention, row by row (x [2, 6, 5], d 3)", hint::steps,
               [&] { fixed_rows(6, Wq, "steps"); });
  grader.check("the cache after each step: t + 1 positions, in order, this step's key and value appended",
               hint::cache, [&] {
                 std::vector<Call> calls;
                 Cache cache;
                 Array keys = ref.array("steps", "keys"), values = ref.array("steps", "values");
                 run(m, x, projections(Wq, Wk, Wv, calls), cache, &keys, &values, inputs);
               });
  grader.check("each step projects its new token only: query, key and value once each, on x_t [B, 1, E]",
               hint::projections, [&] {
                 std::vector<Call> calls;
                 Projections p = projections(Wq, Wk, Wv, calls);
                 Cache cache;
                 for (std::size_t t = 0; t < x.shape()[1]; ++t) {
                   calls.clear();
                   m.decode_step(Tensor(Array(xt::view(x, xt::all(), xt::range(t, t + 1), xt::all()))), p, cache);
                   for (const char* which : {"query", "key", "value"}) {
                     std::size_t n = 0;
                     for (const auto& c : calls) {
                       if (c.which != which) continue;
                       ++n;
                       if (c.shape != Shape{2, 1, 5})
                         throw Mismatch("step " + std::to_string(t) + ": project." + which + " was called on x " +
                                        shape_str(c.shape) + ", expected x_t [2, 1, 5]: " +
                                        (c.shape.size() == 3 && c.shape[1] > 1
                                             ? std::to_string(c.shape[1]) + " positions projected, the old keys and "
                                                                            "values recomputed instead of read from "
                                                                            "the cache"
                                             : std::string("only this step's token is new")));
                     }
                     if (n != 1)
                       throw Mismatch("step " + std::to_string(t) + ": project." + which + " was called " +
                                      std::to_string(n) + " times, expected once");
                   }
                 }
               });
  // E = 6 here, unlike the other fixed cases: with 5 positions cached after the step, an E of 5 would make
  // sqrt(E) and sqrt(t + 1) the same number, and the diagnosis could not tell them apart.
  grader.check("a cache filled beforehand (4 positions of keys and values the grader chose, x_t [2, 1, 6]): the step "
               "reads them from the cache", hint::filled, [&] {
                 std::vector<Call> calls;
                 const Array fq = ref.array("filled", "Wq"), fk = ref.array("filled", "Wk"),
                             fv = ref.array("filled", "Wv");
                 Cache cache{ref.tensor("filled", "key"), ref.tensor("filled", "value")};
                 Array keys = ref.array("filled", "keys"), values = ref.array("filled", "values");
                 std::string in = "a cache of 4 positions [2, 4, 3], x_t [2, 1, 6], W_q, W_k, W_v [6, 3]";
                 Array got;
                 try {
                   got = run(m, ref.array("filled", "x"), projections(fq, fk, fv, calls), cache, nullptr, nullptr, in);
                 } catch (const NotImplemented&) {
                   throw;
                 } catch (const Mismatch&) {
                   throw;
                 } catch (const std::exception& e) {
                   throw Mismatch(std::string("decode_step raised an error on a cache of keys and values [2, 4, 3]: ") +
                                  e.what() + "; the cache holds keys and values [B, t, d], not inputs");
                 }
                 try {
                   expect_close("the step's row", ref.array("filled", "out"), got, in, 1e-9, 1e-12);
                 } catch (const Mismatch& e) {
                   throw Mismatch(e.what() + diagnose([&](V v) {
                                    return attend(project(ref.array("filled", "x"), fq), keys, values, v, 6.0);
                                  }, got));
                 }
               });
  grader.check("scores near 1e4 (W_q scaled by 3000): the six steps vs PyTorch", hint::steps, [&] {
    const Array big = 3000.0 * Wq;
    try {
      fixed_rows(6, big, "large");
    } catch (const Mismatch& e) {
      bool ordinary_right = true;
      try {
        fixed_rows(6, Wq, "steps");
      } catch (const std::exception&) {
        ordinary_right = false;
      }
      std::vector<Call> calls;
      Cache cache;
      bool finite = true;
      try {
        finite = all_finite(run(m, x, projections(big, Wk, Wv, calls), cache, nullptr, nullptr, inputs));
      } catch (const std::exception&) {
      }
      throw at_extreme(e, finite, ordinary_right, hint::overflow, hint::steps);
    }
  });
  grader.check("random B, E, d and lengths: every step vs the full causal attention (attn::softmax, causal mask)",
               hint::random, [&] {
                 std::optional<Array> fixed_got;  // the learner's rows of the fixed six steps, once asked for
                 bool fixed_tried = false;
                 auto also = [&](V var) {
                   if (!fixed_tried) {
                     fixed_tried = true;
                     try {
                       std::vector<Call> calls;
                       Cache cache;
                       fixed_got = run(m, x, projections(Wq, Wk, Wv, calls), cache, nullptr, nullptr, inputs);
                     } catch (const std::exception&) {
                     }
                   }
                   if (!fixed_got) return false;
                   try {
                     expect_close("", causal_rows(x, Wq, Wk, Wv, var), *fixed_got, "", 1e-9, 1e-12);
                     return true;
                   } catch (const Mismatch&) {
                     return false;
                   }
                 };
                 Random rng(16000);
                 for (int trial = 0; trial < 10; ++trial) {
                   std::size_t B = rng.integer(1, 3), T = rng.integer(1, 7), E = rng.integer(1, 6), d = rng.integer(1, 5);
                   Array xr = rng.array({B, T, E}), q = rng.array({E, d}), k = rng.array({E, d}), v = rng.array({E, d});
                   Tensor scores = attn::matmul(Tensor(project(xr, q)), attn::transpose(Tensor(project(xr, k)), -2, -1)) /
                                   std::sqrt(double(d));
                   Array want = attn::matmul(attn::softmax(attn::masked_fill(scores, attn::nn::causal_mask(T), -1e30), -1),
                                             Tensor(project(xr, v)))
                                    .data<double>();
                   std::vector<Call> calls;
                   Cache cache;
                   std::string in = "x [" + std::to_string(B) + ", " + std::to_string(T) + ", " + std::to_string(E) +
                                    "], d " + std::to_string(d);
                   Array got = run(m, xr, projections(q, k, v, calls), cache, nullptr, nullptr, in);
                   try {
                     expect_close("the rows of every step", want, got, in, 1e-9, 1e-12);
                   } catch (const Mismatch& e) {
                     throw Mismatch(e.what() +
                                    diagnose([&](V var) { return causal_rows(xr, q, k, v, var); }, got, also));
                   }
                 }
               });
  return grader.finish();
}

}  // namespace kv_cache
}  // namespace lab
