// The checks of lab01_softmax.hpp (compiled into libattn_labs, which the notebook kernel loads).
#include "labs/grader/lab01_softmax.hpp"

#include "labs/grader/grader.hpp"

namespace lab {
namespace softmax {

namespace hint {
inline const char* forward =
    "y = exp(x - m) / sum(exp(x - m)) with m the max of each row, all over the last axis (dim -1, keepdim=true "
    "so the sums broadcast back)";
inline const char* large =
    "exp(1000) overflows to inf: subtract each row's max before exp (softmax is unchanged by it)";
inline const char* log_large =
    "exp(1000) overflows to inf and log(exp(-1000)) is log(0) = -inf: compute (x - m) - log(sum(exp(x - m))) "
    "with m each row's max, never log(softmax(x))";
inline const char* global_max =
    "subtract each row's max (attn::max(x, -1, true)), not the tensor's max (attn::max(x)): rows far below the "
    "tensor's max underflow to 0/0";
inline const char* backward =
    "dx = y * (g - sum(g * y)), the sum over the last axis (keepdim=true): the diagonal term y * g and the "
    "off-diagonal term -y * sum(g * y)";
inline const char* log_forward = "log_softmax(x) = (x - m) - log(sum(exp(x - m))) over the last axis, m the row max";
inline const char* log_backward =
    "dx = g - exp(y) * sum(g), the sum over the last axis (keepdim=true): exp(y) is the softmax";
}  // namespace hint

inline Tensor softmax_op(const Softmax& s, const Tensor& x, bool log) {
  Tensor y;
  {
    attn::no_grad guard;
    y = log ? s.log_softmax(x) : s.softmax(x);
  }
  auto backward = log ? s.log_softmax_backward : s.softmax_backward;
  return learner_op(log ? "log_softmax_backward" : "softmax_backward", y, {x}, {"x"},
                    [backward](const std::vector<Tensor>&, const Tensor& out, const Tensor& g) {
                      return std::vector<Tensor>{backward(out, g)};
                    });
}

// Whether `got` is what subtracting the whole tensor's max (not each row's) gives: the same NaNs
// and infinities (rows far below that max underflow) and close values elsewhere.
inline bool global_max_values(const Tensor& x, bool log, const Array& got) {
  attn::no_grad guard;
  Tensor shifted = x - attn::max(x);
  Tensor e = attn::exp(shifted);
  Array mine = (log ? shifted - attn::log(attn::sum(e, {-1}, true)) : e / attn::sum(e, {-1}, true)).data<double>();
  if (mine.shape() != got.shape() || all_finite(mine)) return false;
  for (std::size_t k = 0; k < mine.size(); ++k) {
    double a = mine.flat(k), b = got.flat(k);
    if (std::isnan(a) != std::isnan(b) || (!std::isnan(a) && !(a == b || std::abs(a - b) <= 1e-9 * std::abs(a) + 1e-12)))
      return false;
  }
  return true;
}

Result grade(const Softmax& s, std::ostream& os) {
  Grader grader(1, "softmax and log-softmax, forward and backward", os);
  Reference ref("lab01_softmax");

  auto forward_of = [&](bool log) { return log ? s.log_softmax : s.softmax; };
  auto name_of = [](bool log) { return std::string(log ? "log_softmax" : "softmax"); };

  for (bool log : {false, true}) {
    const std::string name = name_of(log);
    grader.check(name + ": values vs PyTorch (x [2, 3, 5])", log ? hint::log_forward : hint::forward, [&, log] {
      Tensor x = ref.tensor("fixed", "x");
      attn::no_grad guard;
      expect_close(name + "(x)", ref.array("fixed", name), forward_of(log)(x), "x [2, 3, 5]", 1e-9, 1e-12);
    });
    grader.check(name + ": large magnitudes (|x| up to 1e4) vs PyTorch", log ? hint::log_large : hint::large, [&, log] {
      Tensor x = ref.tensor("large", "x");
      attn::no_grad guard;
      Tensor got = forward_of(log)(x);
      try {
        expect_close(name + "(x)", ref.array("large", name), got, "x [3, 4]", 1e-9, 1e-12);
      } catch (const Mismatch& e) {
        if (!global_max_values(x, log, array_of(got, name))) throw;
        throw Mismatch(e.what() + std::string("; your values are what subtracting the tensor's max gives"),
                       hint::global_max);
      }
    });
    grader.check(name + ": random shapes vs attn::" + name, log ? hint::log_forward : hint::forward, [&, log] {
      Random rng(log ? 1100 : 1000);
      for (int trial = 0; trial < 10; ++trial) {
        Shape shape = rng.shape(1, 4, 5);
        Tensor x(rng.array(shape, -5.0, 5.0));
        attn::no_grad guard;
        Tensor expected = log ? attn::log_softmax(x, -1) : attn::softmax(x, -1);
        expect_close(name + "(x)", expected.data<double>(), forward_of(log)(x), "x " + shape_str(shape), 1e-9, 1e-12);
      }
    });
    grader.check(name + ": gradient vs PyTorch (x [2, 3, 5])", log ? hint::log_backward : hint::backward, [&, log] {
      Tensor x = ref.tensor("fixed", "x", true);
      softmax_op(s, x, log).backward(ref.tensor("fixed", "r"));
      expect_close(name + ": the gradient of x", ref.array("fixed", name + "_grad_x"), x.grad(), "x [2, 3, 5]");
    });
    grader.check(name + ": gradcheck, random shapes (a last axis of 1 included)",
                 log ? hint::log_backward : hint::backward, [&, log] {
                   Random rng(log ? 1300 : 1200);
                   for (int trial = 0; trial < 8; ++trial) {
                     Shape shape = rng.shape(1, 3, 5);
                     if (trial == 0) shape.back() = 1;
                     Tensor x(rng.array(shape, -3.0, 3.0), true);
                     expect_gradients(name, [&](const std::vector<Tensor>& in) { return softmax_op(s, in[0], log); },
                                      {x}, {"x"});
                   }
                 });
  }
  return grader.finish();
}

}  // namespace softmax
}  // namespace lab
