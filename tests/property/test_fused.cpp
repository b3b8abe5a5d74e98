// Properties of the fused ops (core/backend/fused.hpp) and the fused cross-entropy: each
// against a loop over random shapes, on both paths (fused, and the composed one that
// attn::FusedOps(false) runs), in float32 too, and gradcheck in float64 on both paths.
#include "property.hpp"

#include "core/backend/fused.hpp"

using namespace prop;

namespace {

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// Checks f's value against `expected` and its gradients, fused and composed.
void both_paths(const std::string& what, const attn::GradcheckFn& f, const Inputs& inputs, const Array& expected,
                double rtol = 1e-12, double atol = 1e-13) {
  for (bool fused : {true, false}) {
    attn::FusedOps guard(fused);
    const std::string name = what + (fused ? " (fused)" : " (composed)");
    assert_close(name, f(inputs), expected, rtol, atol);
    assert_gradcheck(name, f, inputs);
    assert_float32_matches(name, f, inputs, 1e-4, 1e-5);
  }
}

}  // namespace

TEST_CASE("layer_norm over the last 1 to 3 dims, with and without weight and bias") {
  PROPERTY("layer_norm", [] {
    const Shape s = shape(1, 4);
    const std::size_t k = *rc::gen::inRange<std::size_t>(1, std::min<std::size_t>(s.size(), 3) + 1);
    const Shape normalized(s.end() - long(k), s.end());
    const Tensor x = randn(s, seed());
    const bool affine = *rc::gen::arbitrary<bool>();
    Inputs inputs{x};
    if (affine) inputs.push_back(randn(normalized, seed())), inputs.push_back(randn(normalized, seed()));
    std::size_t n = 1;
    for (std::size_t d : normalized) n *= d;
    const Array xa = x.to_array();
    Array expected = xa;
    for (std::size_t row = 0; row < xa.size() / n; ++row) {
      double mu = 0, var = 0;
      for (std::size_t i = 0; i < n; ++i) mu += xa.flat(row * n + i) / double(n);
      for (std::size_t i = 0; i < n; ++i) var += (xa.flat(row * n + i) - mu) * (xa.flat(row * n + i) - mu) / double(n);
      for (std::size_t i = 0; i < n; ++i) {
        double y = (xa.flat(row * n + i) - mu) / std::sqrt(var + 1e-5);
        if (affine) y = y * inputs[1].to_array().flat(i) + inputs[2].to_array().flat(i);
        expected.flat(row * n + i) = y;
      }
    }
    both_paths("layer_norm", [&normalized](const Inputs& in) {
      return attn::layer_norm(in[0], normalized, in.size() > 1 ? in[1] : Tensor(), in.size() > 1 ? in[2] : Tensor());
    }, inputs, expected, 1e-10, 1e-12);
  });
}

TEST_CASE("the LSTM cell's pointwise step: c' and h' against the equations") {
  PROPERTY("lstm_cell_c, lstm_cell_h", [] {
    const std::size_t B = *rc::gen::inRange<std::size_t>(1, 3), H = size();
    const Tensor gates = randn({B, 4 * H}, seed()), c = randn({B, H}, seed());
    const Array g = gates.to_array(), ca = c.to_array();
    Array c_new = xt::zeros<double>({B, H}), h_new = xt::zeros<double>({B, H});
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t j = 0; j < H; ++j) {  // gates i, f, g, o side by side
        c_new(b, j) = sigmoid(g(b, H + j)) * ca(b, j) + sigmoid(g(b, j)) * std::tanh(g(b, 2 * H + j));
        h_new(b, j) = sigmoid(g(b, 3 * H + j)) * std::tanh(c_new(b, j));
      }
    both_paths("lstm_cell_c", [](const Inputs& in) { return attn::lstm_cell_c(in[0], in[1]); }, {gates, c}, c_new);
    const Tensor cn(c_new, true);
    both_paths("lstm_cell_h", [](const Inputs& in) { return attn::lstm_cell_h(in[0], in[1]); }, {gates, cn}, h_new);
  });
}

TEST_CASE("additive_score: v . tanh(q_i + k_j) for every pair") {
  PROPERTY("additive_score", [] {
    const std::size_t B = *rc::gen::inRange<std::size_t>(1, 3), Tq = *rc::gen::inRange<std::size_t>(1, 4),
                      Tk = *rc::gen::inRange<std::size_t>(1, 4), A = size();
    const Tensor q = randn({B, Tq, A}, seed()), k = randn({B, Tk, A}, seed()), v = randn({A}, seed());
    Array e = xt::zeros<double>({B, Tq, Tk});
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t i = 0; i < Tq; ++i)
        for (std::size_t j = 0; j < Tk; ++j)
          for (std::size_t a = 0; a < A; ++a)
            e(b, i, j) += v.to_array()(a) * std::tanh(q.to_array()(b, i, a) + k.to_array()(b, j, a));
    both_paths("additive_score", [](const Inputs& in) { return attn::additive_score(in[0], in[1], in[2]); }, {q, k, v},
               e);
  });
}

TEST_CASE("split_heads and merge_heads: [B, T, H * d] <-> [B, H, T, d]") {
  PROPERTY("split_heads, merge_heads", [] {
    const std::size_t B = *rc::gen::inRange<std::size_t>(1, 3), T = *rc::gen::inRange<std::size_t>(1, 4),
                      H = *rc::gen::inRange<std::size_t>(1, 4), d = *rc::gen::inRange<std::size_t>(1, 3);
    const Tensor x = randn({B, T, H * d}, seed());
    Array split = xt::zeros<double>({B, H, T, d});
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t h = 0; h < H; ++h)
        for (std::size_t t = 0; t < T; ++t)
          for (std::size_t i = 0; i < d; ++i) split(b, h, t, i) = x.to_array()(b, t, h * d + i);
    both_paths("split_heads", [H](const Inputs& in) { return attn::split_heads(in[0], H); }, {x}, split, 0, 0);
    both_paths("merge_heads", [](const Inputs& in) { return attn::merge_heads(in[0]); }, {Tensor(split, true)},
               x.to_array(), 0, 0);
  });
}

TEST_CASE("lstm_sequence: one or two directions, padded sequences, against the cell unrolled by a loop") {
  PROPERTY("lstm_sequence", [] {
    const std::size_t T = *rc::gen::inRange<std::size_t>(1, 4), B = *rc::gen::inRange<std::size_t>(1, 3),
                      H = *rc::gen::inRange<std::size_t>(1, 3), D = *rc::gen::inRange<std::size_t>(1, 3);
    std::vector<std::int64_t> lengths;
    for (std::size_t b = 0; b < B; ++b) lengths.push_back(*rc::gen::inRange<std::int64_t>(1, std::int64_t(T) + 1));
    Inputs inputs;  // per direction: xw, h0, c0, weight_hh
    for (std::size_t dir = 0; dir < D; ++dir)
      for (const Shape& s : {Shape{T, B, 4 * H}, Shape{B, H}, Shape{B, H}, Shape{4 * H, H}}) inputs.push_back(randn(s, seed()));
    const auto f = [D, &lengths](const Inputs& in) {
      std::vector<attn::LSTMDirection> dirs;
      for (std::size_t dir = 0; dir < D; ++dir)
        dirs.push_back({in[4 * dir], in[4 * dir + 1], in[4 * dir + 2], in[4 * dir + 3], dir == 1});
      return attn::lstm_sequence(dirs, lengths);
    };
    // The reference: each direction's cell stepped by a loop, state frozen and output 0 on padding.
    Array expected = xt::zeros<double>({T + 2, B, D * H});
    for (std::size_t dir = 0; dir < D; ++dir) {
      const Array xw = inputs[4 * dir].to_array(), whh = inputs[4 * dir + 3].to_array();
      Array h = inputs[4 * dir + 1].to_array(), c = inputs[4 * dir + 2].to_array();
      for (std::size_t step = 0; step < T; ++step) {
        const std::size_t t = dir == 1 ? T - 1 - step : step;
        for (std::size_t b = 0; b < B; ++b) {
          if (std::int64_t(t) >= lengths[b]) continue;
          std::vector<double> gate(4 * H);
          for (std::size_t r = 0; r < 4 * H; ++r) {
            gate[r] = xw(t, b, r);
            for (std::size_t j = 0; j < H; ++j) gate[r] += whh(r, j) * h(b, j);
          }
          for (std::size_t j = 0; j < H; ++j) {
            c(b, j) = sigmoid(gate[H + j]) * c(b, j) + sigmoid(gate[j]) * std::tanh(gate[2 * H + j]);
            h(b, j) = sigmoid(gate[3 * H + j]) * std::tanh(c(b, j));
            expected(t, b, dir * H + j) = h(b, j);
          }
        }
      }
      for (std::size_t b = 0; b < B; ++b)
        for (std::size_t j = 0; j < H; ++j) expected(T, b, dir * H + j) = h(b, j), expected(T + 1, b, dir * H + j) = c(b, j);
    }
    both_paths("lstm_sequence", f, inputs, expected, 1e-10, 1e-12);
  });
}

TEST_CASE("cross_entropy with ignored targets and label smoothing, against -log softmax by a loop") {
  PROPERTY("cross_entropy", [] {
    const std::size_t N = *rc::gen::inRange<std::size_t>(1, 5), C = size();
    const double smoothing = *rc::gen::element(0.0, 0.1, 0.5);
    const Tensor logits = randn({N, C}, seed());
    attn::Index targets = attn::Index::from_shape({N});
    for (auto& t : targets) t = *rc::gen::inRange<std::int64_t>(-1, std::int64_t(C));  // -1: ignored
    targets(0) = *rc::gen::inRange<std::int64_t>(0, std::int64_t(C));                 // at least one counts
    const Array z = logits.to_array();
    double total = 0;
    std::size_t counted = 0;
    for (std::size_t i = 0; i < N; ++i) {
      if (targets(i) < 0) continue;
      double mx = -INFINITY, sum = 0;
      for (std::size_t c = 0; c < C; ++c) mx = std::max(mx, z(i, c));
      for (std::size_t c = 0; c < C; ++c) sum += std::exp(z(i, c) - mx);
      const auto nlp = [&](std::size_t c) { return -(z(i, c) - mx - std::log(sum)); };
      double smooth = 0;
      for (std::size_t c = 0; c < C; ++c) smooth += nlp(c);
      total += (1 - smoothing) * nlp(std::size_t(targets(i))) + smoothing / double(C) * smooth;
      ++counted;
    }
    both_paths("cross_entropy", [&](const Inputs& in) { return attn::nn::cross_entropy(in[0], targets, -1, smoothing); },
               {logits}, Array(total / double(counted)), 1e-12, 1e-13);
  });
}
