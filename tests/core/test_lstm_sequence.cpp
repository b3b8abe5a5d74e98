// lstm_sequence (core/ops/lstm_sequence.cpp): a whole LSTM layer as one fused op,
// against the same layer composed step by step from core ops (linear, the two
// fused cell ops, where and masked_fill for padding), value and gradient; by
// finite differences; at 1 and 2 threads; and its errors.
#include "../helpers.hpp"

#include "core/backend/parallel.hpp"

using attn::LSTMDirection;
using attn::Tensor;
using Lengths = std::vector<std::int64_t>;

namespace {

// The layer composed from ops, packed as lstm_sequence packs it:
// [T + 2, B, D*H] = the outputs of every step, then the final h and c.
Tensor composed(const std::vector<LSTMDirection>& dirs, const Lengths& lengths) {
  const std::size_t T = dirs[0].xw.size(0), B = dirs[0].xw.size(1), H = dirs[0].weight_hh.size(1);
  std::vector<Tensor> outputs, final_h, final_c;
  for (const LSTMDirection& dir : dirs) {
    Tensor h = dir.h0, c = dir.c0;
    std::vector<Tensor> steps(T);
    for (std::size_t k = 0; k < T; ++k) {
      const std::size_t t = dir.reverse ? T - 1 - k : k;
      Tensor gates = attn::linear(h, dir.weight_hh, attn::select(dir.xw, 0, static_cast<long>(t)));  // [B, 4H]
      Tensor c_new = attn::lstm_cell_c(gates, c), h_new = attn::lstm_cell_h(gates, c_new);
      if (lengths.empty()) {
        steps[t] = h_new;
      } else {
        attn::Mask real = attn::Mask::from_shape({B, H});
        for (std::size_t b = 0; b < B; ++b)
          for (std::size_t j = 0; j < H; ++j) real(b, j) = static_cast<std::int64_t>(t) < lengths[b];
        h_new = attn::where(real, h_new, h);
        c_new = attn::where(real, c_new, c);
        steps[t] = attn::masked_fill(h_new, !real, 0.0);
      }
      h = h_new;
      c = c_new;
    }
    outputs.push_back(attn::stack(steps, 0));  // [T, B, H]
    final_h.push_back(h);
    final_c.push_back(c);
  }
  return attn::concat({attn::concat(outputs, 2), attn::unsqueeze(attn::concat(final_h, 1), 0),
                       attn::unsqueeze(attn::concat(final_c, 1), 0)},
                      0);
}

// D directions of random inputs, T steps, batch B, hidden H; direction 1 runs backwards.
std::vector<LSTMDirection> directions(std::size_t D, std::size_t T, std::size_t B, std::size_t H,
                                      std::uint64_t seed = 1) {
  std::vector<LSTMDirection> dirs;
  for (std::size_t d = 0; d < D; ++d, seed += 4)
    dirs.push_back({test::randn({T, B, 4 * H}, seed), test::randn({B, H}, seed + 1), test::randn({B, H}, seed + 2),
                    (test::randn({4 * H, H}, seed + 3, false) * 0.5).requires_grad_(true), d == 1});
  return dirs;
}

std::vector<Tensor> leaves(const std::vector<LSTMDirection>& dirs) {
  std::vector<Tensor> all;
  for (const LSTMDirection& d : dirs) all.insert(all.end(), {d.xw, d.h0, d.c0, d.weight_hh});
  return all;
}

// The output and every input's gradient, for a fixed grad_output.
std::vector<Tensor> run(const std::function<Tensor()>& f, const std::vector<LSTMDirection>& dirs) {
  std::vector<Tensor> in = leaves(dirs);
  for (Tensor& t : in) t.zero_grad();
  Tensor y = f();
  y.backward(test::randn(y.shape(), 99, false));
  std::vector<Tensor> got{y};
  for (const Tensor& t : in) got.push_back(t.grad());
  return got;
}

}  // namespace

TEST_CASE("lstm_sequence equals the layer composed step by step, values and gradients") {
  struct Case {
    std::size_t D;
    bool reverse_first;
    Lengths lengths;
  };
  for (const Case& c : {Case{1, false, {}}, Case{1, true, {}}, Case{2, false, {}}, Case{1, false, {5, 2, 5}},
                        Case{2, false, {3, 5, 1}}, Case{1, true, {4, 1, 5}}}) {
    CAPTURE(c.D);
    CAPTURE(c.reverse_first);
    CAPTURE(c.lengths.size());
    std::vector<LSTMDirection> dirs = directions(c.D, 5, 3, 4);
    dirs[0].reverse = c.reverse_first;
    const std::vector<Tensor> fused = run([&] { return attn::lstm_sequence(dirs, c.lengths); }, dirs);
    const std::vector<Tensor> reference = run([&] { return composed(dirs, c.lengths); }, dirs);
    REQUIRE(fused[0].shape() == attn::Shape{7, 3, c.D * 4});
    for (std::size_t i = 0; i < fused.size(); ++i) {
      CAPTURE(i);
      CHECK(test::allclose(fused[i], reference[i], 1e-12));
    }
  }
}

TEST_CASE("lstm_sequence: padding outputs zeros and passes the state through") {
  std::vector<LSTMDirection> dirs = directions(2, 4, 2, 3);
  Tensor y = attn::lstm_sequence(dirs, {4, 2});
  const auto v = y.to_array();
  for (std::size_t t = 2; t < 4; ++t)  // sequence 1 ends after 2 steps: both directions output 0 there
    for (std::size_t j = 0; j < 6; ++j) CHECK(v(t, 1, j) == 0.0);
  // The backward direction starts at sequence 1's own last step from h0: its output at t = 1
  // is one step from h0, c0, as a sequence of length 2 alone would give.
  std::vector<LSTMDirection> alone = dirs;
  for (LSTMDirection& d : alone) {
    d.xw = attn::narrow(d.xw, 0, 0, 2);
  }
  Tensor y2 = attn::lstm_sequence(alone);
  const auto v2 = y2.to_array();
  for (std::size_t j = 0; j < 6; ++j) {
    CHECK(v(1, 1, j) == doctest::Approx(v2(1, 1, j)).epsilon(1e-14));
    CHECK(v(4, 1, j) == doctest::Approx(v2(2, 1, j)).epsilon(1e-14));  // final h
    CHECK(v(5, 1, j) == doctest::Approx(v2(3, 1, j)).epsilon(1e-14));  // final c
  }
}

TEST_CASE("lstm_sequence: gradients against finite differences, and float32") {
  std::vector<LSTMDirection> dirs = directions(2, 3, 2, 2, 7);
  auto f = [](const std::vector<Tensor>& in) {
    std::vector<LSTMDirection> d{{in[0], in[1], in[2], in[3], false}, {in[4], in[5], in[6], in[7], true}};
    return attn::lstm_sequence(d, {3, 2});
  };
  CHECK_GRADCHECK(f, leaves(dirs));
  std::vector<LSTMDirection> d32;
  for (const LSTMDirection& d : dirs)
    d32.push_back({d.xw.detach().to(attn::Dtype::Float32), d.h0.detach().to(attn::Dtype::Float32),
                   d.c0.detach().to(attn::Dtype::Float32), d.weight_hh.detach().to(attn::Dtype::Float32), d.reverse});
  Tensor y32 = attn::lstm_sequence(d32, {3, 2});
  CHECK(y32.dtype() == attn::Dtype::Float32);
  CHECK(test::allclose(y32.to(attn::Dtype::Float64), attn::lstm_sequence(dirs, {3, 2}), 1e-5));
}

TEST_CASE("lstm_sequence: two directions give the same bits on one thread as on two at once") {
  // At 2 threads each direction runs on a thread of its own; its products and loops
  // are then the same calls as on one thread.
  std::vector<LSTMDirection> dirs = directions(2, 20, 32, 16);
  auto with_threads = [&](int n) {
    const int before = attn::get_num_threads();
    attn::set_num_threads(n);
    std::vector<Tensor> got = run([&] { return attn::lstm_sequence(dirs, {}); }, dirs);
    attn::set_num_threads(before);
    return got;
  };
  const std::vector<Tensor> one = with_threads(1), two = with_threads(2);
  for (std::size_t i = 0; i < one.size(); ++i) {
    CAPTURE(i);
    CHECK(test::allclose(one[i], two[i], 0.0));
  }
}

TEST_CASE("lstm_sequence frees its graph") {
  const long before = attn::NodeBase::live_count();
  {
    std::vector<LSTMDirection> dirs = directions(2, 4, 2, 3);
    attn::sum(attn::lstm_sequence(dirs, {4, 3})).backward();
    CHECK(dirs[0].weight_hh.grad().defined());
  }
  CHECK(attn::NodeBase::live_count() == before);
}

TEST_CASE("lstm_sequence rejects bad shapes, lengths and dtypes, naming what is wrong") {
  std::vector<LSTMDirection> dirs = directions(2, 4, 2, 3);
  CHECK_THROWS_WITH_SUBSTR(attn::lstm_sequence({}), attn::ValueError, "lstm_sequence: expected at least one direction");
  std::vector<LSTMDirection> bad = dirs;
  bad[0].xw = attn::zeros({4, 2, 10});
  CHECK_THROWS_WITH_SUBSTR(attn::lstm_sequence(bad), attn::ShapeError,
                           "lstm_sequence: expected xw [T, B, 4H] (T >= 1) and weight_hh [4H, H], got xw [4, 2, 10] and weight_hh [12, 3]");
  bad = dirs;
  bad[1].xw = attn::zeros({3, 2, 12});
  CHECK_THROWS_WITH_SUBSTR(attn::lstm_sequence(bad), attn::ShapeError,
                           "lstm_sequence: expected xw of direction 1 [4, 2, 12], got [3, 2, 12]");
  bad = dirs;
  bad[1].h0 = attn::zeros({2, 4});
  CHECK_THROWS_WITH_SUBSTR(attn::lstm_sequence(bad), attn::ShapeError,
                           "lstm_sequence: expected h0 of direction 1 [2, 3], got [2, 4]");
  bad = dirs;
  bad[0].weight_hh = attn::zeros({12, 4});
  CHECK_THROWS_WITH_SUBSTR(attn::lstm_sequence(bad), attn::ShapeError, "got xw [4, 2, 12] and weight_hh [12, 4]");
  CHECK_THROWS_WITH_SUBSTR(attn::lstm_sequence(dirs, {4}), attn::ShapeError,
                           "lstm_sequence: expected one length per sequence (B = 2), got 1 lengths");
  CHECK_THROWS_WITH_SUBSTR(attn::lstm_sequence(dirs, {4, 5}), attn::ValueError,
                           "lstm_sequence: every length must be in 1..T (T = 4), got lengths[1] = 5");
  CHECK_THROWS_WITH_SUBSTR(attn::lstm_sequence(dirs, {0, 2}), attn::ValueError, "got lengths[0] = 0");
  bad = dirs;
  bad[1].c0 = attn::zeros({2, 3}, attn::Dtype::Float32);
  CHECK_THROWS_WITH_SUBSTR(attn::lstm_sequence(bad), attn::ValueError, "lstm_sequence: inputs must share a dtype");
  bad = dirs;
  bad[0].h0 = Tensor();
  CHECK_THROWS_WITH_SUBSTR(attn::lstm_sequence(bad), attn::ValueError, "lstm_sequence: an input tensor is undefined");
}
