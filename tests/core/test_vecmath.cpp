// vecmath (core/vecmath.hpp): exp, tanh and sigmoid, checked against the C++
// library on every instruction set this CPU can run, so the AVX-512 and AVX2
// copies are tested wherever the machine has them, not only the one in use.
#include "../helpers.hpp"

#include "core/backend/vecmath.hpp"

#include <cmath>
#include <limits>
#include <vector>

using attn::vecmath::Isa;

namespace {

std::vector<Isa> runnable() {
  std::vector<Isa> isas;
  for (Isa isa : {Isa::baseline, Isa::avx2, Isa::avx512})
    if (attn::vecmath::supported(isa)) isas.push_back(isa);
  return isas;
}

// Relative error of got against the (double) reference want; absolute below 1e-30.
double error(double got, double want) { return std::abs(got - want) / std::max(std::abs(want), 1e-30); }

// Every length up to 3 batches of 16 floats (tails of each width), then a long one:
// f(x) against the reference, in a separate buffer and in place, with the value
// after the end untouched.
template <class T, class F, class Ref>
void check_against(F f, Ref ref, T low, T high, double tol) {
  for (Isa isa : runnable()) {
    CAPTURE(attn::vecmath::name(isa));
    for (std::size_t n : {0, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33, 47, 1000}) {
      CAPTURE(n);
      std::vector<T> x(n + 1), y(n + 1, T(-7));
      for (std::size_t i = 0; i < n; ++i) x[i] = low + (high - low) * T(i) / T(std::max<std::size_t>(n - 1, 1));
      f(x.data(), y.data(), n, isa);
      double worst = 0;
      for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, error(y[i], ref(x[i])));
      CHECK(worst <= tol);
      CHECK(y[n] == T(-7));  // nothing written past n
      std::vector<T> z = x;
      f(z.data(), z.data(), n, isa);  // in place
      for (std::size_t i = 0; i < n; ++i) CHECK(z[i] == y[i]);
    }
  }
}

// f at +-inf and NaN, on every instruction set.
template <class T, class F>
void check_special(F f, T at_minus_inf, T at_plus_inf) {
  const T inf = std::numeric_limits<T>::infinity();
  for (Isa isa : runnable()) {
    CAPTURE(attn::vecmath::name(isa));
    std::vector<T> x{-inf, inf, std::numeric_limits<T>::quiet_NaN()}, y(3);
    f(x.data(), y.data(), 3, isa);
    CHECK(y[0] == at_minus_inf);
    CHECK(y[1] == at_plus_inf);
    CHECK(std::isnan(y[2]));
  }
}

template <class T>
void exp_(const T* x, T* y, std::size_t n, Isa isa) { attn::vecmath::exp(x, y, n, isa); }
template <class T>
void tanh_(const T* x, T* y, std::size_t n, Isa isa) { attn::vecmath::tanh(x, y, n, isa); }
template <class T>
void sigmoid_(const T* x, T* y, std::size_t n, Isa isa) { attn::vecmath::sigmoid(x, y, n, isa); }

}  // namespace

TEST_CASE("vecmath: the baseline always runs, and the default is the widest supported") {
  CHECK(attn::vecmath::supported(Isa::baseline));
  const Isa widest = attn::vecmath::supported(Isa::avx512) ? Isa::avx512
                     : attn::vecmath::supported(Isa::avx2)  ? Isa::avx2
                                                             : Isa::baseline;
  CHECK(attn::vecmath::best() == widest);
  MESSAGE("vecmath on this CPU: " << std::string(attn::vecmath::name(attn::vecmath::best())));
  for (Isa isa : {Isa::avx2, Isa::avx512})
    if (!attn::vecmath::supported(isa)) {
      double v = 0;
      CHECK_THROWS_WITH_SUBSTR(attn::vecmath::exp(&v, &v, 1, isa), attn::ValueError, "vecmath: this CPU cannot run");
    }
}

TEST_CASE("vecmath: exp matches std::exp to a few ulp, up to overflow and underflow") {
  check_against<double>(exp_<double>, [](double v) { return std::exp(v); }, -700.0, 700.0, 1e-15);
  check_against<float>(exp_<float>, [](float v) { return std::exp(double(v)); }, -87.0f, 88.0f, 1e-6);
  check_special<double>(exp_<double>, 0.0, std::numeric_limits<double>::infinity());
  check_special<float>(exp_<float>, 0.0f, std::numeric_limits<float>::infinity());
}

TEST_CASE("vecmath: tanh matches std::tanh, saturating to +-1") {
  check_against<double>(tanh_<double>, [](double v) { return std::tanh(v); }, -25.0, 25.0, 1e-15);
  check_against<float>(tanh_<float>, [](float v) { return std::tanh(double(v)); }, -12.0f, 12.0f, 1e-6);
  check_special<double>(tanh_<double>, -1.0, 1.0);
  check_special<float>(tanh_<float>, -1.0f, 1.0f);
}

TEST_CASE("vecmath: sigmoid matches 1 / (1 + exp(-x)), 0 and 1 at the ends") {
  auto ref = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  check_against<double>(sigmoid_<double>, ref, -700.0, 700.0, 1e-15);
  check_against<float>(sigmoid_<float>, ref, -80.0f, 80.0f, 1e-6);
  check_special<double>(sigmoid_<double>, 0.0, 1.0);
  check_special<float>(sigmoid_<float>, 0.0f, 1.0f);
}

TEST_CASE("vecmath: double exp, tanh and sigmoid near their edges (attn's own kernels, kernels.hpp)") {
  // exp: the largest finite results, the first infinite one, and the subnormal
  // results below exp(-708.4), which it scales in two steps
  check_against<double>(exp_<double>, [](double v) { return std::exp(v); }, 700.0, 709.78, 1e-15);
  check_against<double>(exp_<double>, [](double v) { return std::exp(v); }, -708.4, -700.0, 1e-15);
  for (Isa isa : runnable()) {
    CAPTURE(attn::vecmath::name(isa));
    std::vector<double> x{709.79, 1e300, -745.2, -1e300, -0.0, 0.0, 1e-300}, y(x.size());
    attn::vecmath::exp(x.data(), y.data(), x.size(), isa);
    CHECK(y[0] == std::numeric_limits<double>::infinity());
    CHECK(y[1] == std::numeric_limits<double>::infinity());
    CHECK(y[2] == 0.0);
    CHECK(y[3] == 0.0);
    CHECK(y[4] == 1.0);
    CHECK(y[5] == 1.0);
    CHECK(y[6] == 1.0);
    double worst = 0;  // subnormal results: within an ulp of the smallest subnormal, or 1e-15 relative
    for (double v = -745.1; v < -708.4; v += 0.37) {
      double got = 0;
      attn::vecmath::exp(&v, &got, 1, isa);
      const double want = std::exp(v);
      worst = std::max(worst, std::abs(got - want) / std::max(want * 1e-15, 2 * 4.9406564584124654e-324));
    }
    CHECK(worst <= 1.0);
  }
  // tanh: both sides of 0.625, where it switches from its rational form to exp, and tiny values
  check_against<double>(tanh_<double>, [](double v) { return std::tanh(v); }, 0.55, 0.7, 1e-15);
  check_against<double>(tanh_<double>, [](double v) { return std::tanh(v); }, -0.7, -0.55, 1e-15);
  check_against<double>(tanh_<double>, [](double v) { return std::tanh(v); }, -1e-8, 1e-8, 1e-15);
  for (Isa isa : runnable()) {
    CAPTURE(attn::vecmath::name(isa));
    std::vector<double> x{1e-300, -1e-300, 4.9406564584124654e-324, -0.0, 0.625, -0.625}, y(x.size());
    attn::vecmath::tanh(x.data(), y.data(), x.size(), isa);
    CHECK(y[0] == 1e-300);
    CHECK(y[1] == -1e-300);
    CHECK(y[2] == x[2]);
    CHECK((y[3] == 0.0 && std::signbit(y[3])));
    CHECK(error(y[4], std::tanh(0.625)) <= 1e-15);
    CHECK(error(y[5], std::tanh(-0.625)) <= 1e-15);
  }
  auto ref = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  check_against<double>(sigmoid_<double>, ref, -1e-3, 1e-3, 1e-15);
  check_against<double>(sigmoid_<double>, ref, -745.0, -700.0, 1e-15);
}
