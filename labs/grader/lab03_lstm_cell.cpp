// The checks of lab03_lstm_cell.hpp (compiled into libattn_labs, which the notebook kernel loads).
#include "labs/grader/lab03_lstm_cell.hpp"

#include "labs/grader/grader.hpp"

namespace lab {
namespace lstm {

namespace hint {
inline const char* cell =
    "z = x W_ih^T + b_ih + h W_hh^T + b_hh [B, 4H], split into z_i, z_f, z_g, z_o (PyTorch's order, H columns "
    "each); i = sigmoid(z_i), f = sigmoid(z_f), g = tanh(z_g), o = sigmoid(z_o); c' = f * c + i * g; "
    "h' = o * tanh(c')";
inline const char* large =
    "attn::sigmoid and attn::tanh are stable for any input; tanh written as (exp(2x) - 1) / (exp(2x) + 1) is "
    "inf / inf = NaN for large x";
}  // namespace hint

// The usual mistakes, to name the one a learner's values match.
enum class Variant { right, swap_i_f, ifog, g_sigmoid, h_without_tanh, no_hidden_bias };

inline State reference_cell(const std::vector<Tensor>& a, Variant v = Variant::right) {
  const Tensor &x = a[0], &h = a[1], &c = a[2], &w_ih = a[3], &w_hh = a[4], &b_ih = a[5], &b_hh = a[6];
  Tensor gates = attn::linear(x, w_ih, b_ih) + (v == Variant::no_hidden_bias ? attn::linear(h, w_hh)
                                                                             : attn::linear(h, w_hh, b_hh));
  std::vector<Tensor> q = attn::chunk(gates, 4, 1);  // i, f, g, o: [B, H] each
  if (v == Variant::ifog) std::swap(q[2], q[3]);  // blocks read as i, f, o, g
  Tensor i = attn::sigmoid(q[0]), f = attn::sigmoid(q[1]), o = attn::sigmoid(q[3]);
  Tensor g = v == Variant::g_sigmoid ? attn::sigmoid(q[2]) : attn::tanh(q[2]);
  if (v == Variant::swap_i_f) std::swap(i, f);
  Tensor c1 = f * c + i * g;
  Tensor h1 = o * (v == Variant::h_without_tanh ? c1 : attn::tanh(c1));
  return {h1, c1};
}

inline std::string diagnose(const std::vector<Tensor>& args, const State& got) {
  const std::vector<std::pair<Variant, const char*>> mistakes = {
      {Variant::swap_i_f, "gates i and f swapped: PyTorch's order is i, f, g, o"},
      {Variant::ifog, "gates read in the order i, f, o, g: PyTorch's order is i, f, g, o (g third, o last)"},
      {Variant::g_sigmoid, "sigmoid on the candidate g: g takes tanh"},
      {Variant::h_without_tanh, "h' = o * c', without the tanh: h' = o * tanh(c')"},
      {Variant::no_hidden_bias, "b_hh left out: both biases are added"}};
  attn::no_grad guard;
  for (const auto& [v, what] : mistakes) {
    State s = reference_cell(args, v);
    bool same = true;
    try {
      expect_close("h'", s.first.data<double>(), got.first, "", 1e-9, 1e-12);
      expect_close("c'", s.second.data<double>(), got.second, "", 1e-9, 1e-12);
    } catch (const Mismatch&) {
      same = false;
    }
    if (same) return std::string("; your values are what a cell with this mistake gives: ") + what;
  }
  return "";
}

inline const std::vector<std::string>& names() {
  static const std::vector<std::string> n = {"x", "h", "c", "w_ih", "w_hh", "b_ih", "b_hh"};
  return n;
}

inline State call(const LSTMCell& m, const std::vector<Tensor>& a) { return m.cell(a[0], a[1], a[2], a[3], a[4], a[5], a[6]); }

// Random arguments for B, I, H.
inline std::vector<Tensor> random_args(Random& rng, std::size_t B, std::size_t I, std::size_t H, double scale = 1.0,
                                       bool requires_grad = true) {
  std::vector<Shape> shapes = {{B, I}, {B, H}, {B, H}, {4 * H, I}, {4 * H, H}, {4 * H}, {4 * H}};
  std::vector<Tensor> a;
  for (const auto& s : shapes) a.push_back(Tensor(rng.array(s, -scale, scale), requires_grad));
  return a;
}

inline std::string arg_shapes(const std::vector<Tensor>& a) {
  std::vector<std::pair<std::string, Shape>> s;
  for (std::size_t i = 0; i < a.size(); ++i) s.push_back({names()[i], a[i].shape()});
  return shapes_str(s);
}

inline void expect_state(const std::vector<Tensor>& args, const State& expected, const State& got, double rtol,
                         bool name_the_mistake = false) {
  std::string shapes = arg_shapes(args);
  try {
    expect_close("c'", expected.second.data<double>(), got.second, shapes, rtol, 1e-12);
    expect_close("h'", expected.first.data<double>(), got.first, shapes, rtol, 1e-12);
  } catch (const Mismatch& m) {
    // Named on the fixed inputs only: saturated gates can make two mistakes agree.
    throw Mismatch(m.what() + (name_the_mistake ? diagnose(args, got) : std::string()));
  }
}

Result grade(const LSTMCell& m, std::ostream& os) {
  Grader grader(3, "an LSTM cell", os);
  Reference ref("lab03_lstm_cell");
  auto fixed_args = [&](bool requires_grad) {
    std::vector<Tensor> a;
    for (const auto& n : names()) a.push_back(ref.tensor("fixed", n, requires_grad));
    return a;
  };

  grader.check("values vs PyTorch's nn.LSTMCell (B 2, I 3, H 4)", hint::cell, [&] {
    std::vector<Tensor> a = fixed_args(false);
    State expected{ref.tensor("fixed", "h1"), ref.tensor("fixed", "c1")};
    expect_state(a, expected, call(m, a), 1e-9, true);
  });
  grader.check("gradients vs PyTorch (of sum(h' * rh) + sum(c' * rc), every argument)", hint::cell, [&] {
    std::vector<Tensor> a = fixed_args(true);
    State s = call(m, a);
    if (!s.first.requires_grad() || !s.second.requires_grad())
      throw Mismatch("h' or c' does not require grad: compute them with attn's ops from the arguments (no detach, no new tensors)");
    Tensor loss = attn::sum(s.first * ref.tensor("fixed", "rh")) + attn::sum(s.second * ref.tensor("fixed", "rc"));
    loss.backward();
    for (std::size_t i = 0; i < a.size(); ++i)
      expect_close("the gradient of " + names()[i], ref.array("fixed", "grad_" + names()[i]), a[i].grad(), arg_shapes(a),
                   1e-8, 1e-10);
  });
  grader.check("values, random shapes (B, I, H from 1 to 4) vs attn's ops", hint::cell, [&] {
    Random rng(3000);
    for (int trial = 0; trial < 8; ++trial) {
      std::vector<Tensor> a = random_args(rng, rng.integer(1, 4), rng.integer(1, 4), rng.integer(1, 4), 1.0, false);
      expect_state(a, reference_cell(a), call(m, a), 1e-9);
    }
  });
  grader.check("large magnitudes (gates in the thousands, saturated) vs attn's ops", hint::large, [&] {
    Random rng(3100);
    std::vector<Tensor> a = random_args(rng, 3, 4, 5, 30.0, false);
    expect_state(a, reference_cell(a), call(m, a), 1e-9);
  });
  grader.check("gradcheck, random shapes, every argument", hint::cell, [&] {
    Random rng(3200);
    for (int trial = 0; trial < 4; ++trial) {
      std::vector<Tensor> a = random_args(rng, rng.integer(1, 3), rng.integer(1, 3), rng.integer(1, 3));
      expect_gradients("lstm_cell", [&](const std::vector<Tensor>& in) {
        State s = call(m, in);
        return attn::concat({s.first, s.second}, 1);  // [B, 2H]: both outputs checked at once
      }, a, names());
    }
  });
  return grader.finish();
}

}  // namespace lstm
}  // namespace lab
