#include "../helpers.hpp"
#include "../reference.hpp"

#include "audio/fft.hpp"

#include <cmath>
#include <complex>
#include <vector>

using cd = std::complex<double>;

namespace {

// The DFT by its definition, N^2 products.
std::vector<cd> naive_dft(const std::vector<cd>& x) {
  const std::size_t N = x.size();
  const double pi = std::acos(-1.0);
  std::vector<cd> X(N);
  for (std::size_t k = 0; k < N; ++k)
    for (std::size_t n = 0; n < N; ++n) X[k] += x[n] * std::polar(1.0, -2.0 * pi * double(k * n % N) / double(N));
  return X;
}

double max_abs_diff(const std::vector<cd>& a, const std::vector<cd>& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

}  // namespace

TEST_CASE("audio::fft equals torch.fft.fft") {
  test::Reference ref("log_mel");
  for (const std::string name : {"fft_8", "fft_64"}) {
    CAPTURE(name);
    const auto re = ref.array(name, "re"), im = ref.array(name, "im");
    std::vector<cd> x(re.size());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = cd(re(i), im(i));
    const std::vector<cd> X = attn::audio::fft(x);
    const auto out_re = ref.array(name, "out_re"), out_im = ref.array(name, "out_im");
    for (std::size_t k = 0; k < X.size(); ++k) {
      CHECK(std::abs(X[k] - cd(out_re(k), out_im(k))) < 1e-12);
    }
  }
}

TEST_CASE("audio::fft equals the DFT's definition at every power of two up to 1024, and keeps Parseval's sum") {
  attn::Generator gen(3);
  for (std::size_t N = 1; N <= 1024; N *= 2) {
    CAPTURE(N);
    std::vector<cd> x(N);
    for (auto& v : x) v = cd(gen.uniform(-1, 1), gen.uniform(-1, 1));
    const std::vector<cd> X = attn::audio::fft(x);
    CHECK(max_abs_diff(X, naive_dft(x)) < 1e-11 * double(N));
    double energy = 0, spectrum = 0;  // sum |x|^2 = sum |X|^2 / N
    for (std::size_t i = 0; i < N; ++i) {
      energy += std::norm(x[i]);
      spectrum += std::norm(X[i]);
    }
    CHECK(spectrum / double(N) == doctest::Approx(energy).epsilon(1e-12));
  }
}

TEST_CASE("audio::power_spectrum is |X[k]|^2 for k = 0 .. N/2, and a pure tone lands in its bin") {
  const std::size_t N = 64;
  const double pi = std::acos(-1.0);
  xt::xarray<double> tone = xt::zeros<double>({N});
  for (std::size_t n = 0; n < N; ++n) tone(n) = std::cos(2 * pi * 5.0 * double(n) / double(N));  // bin 5
  const xt::xarray<double> P = attn::audio::power_spectrum(tone);
  REQUIRE(P.size() == N / 2 + 1);
  for (std::size_t k = 0; k <= N / 2; ++k) {
    CAPTURE(k);
    CHECK(std::abs(P(k) - (k == 5 ? (N / 2.0) * (N / 2.0) : 0.0)) < 1e-9);  // cos: half the energy in bin 5, half in N - 5
  }
}

TEST_CASE("audio::fft and power_spectrum refuse what they cannot transform, naming the length or shape") {
  CHECK_THROWS_WITH_AS(attn::audio::fft(std::vector<cd>(12)), doctest::Contains("power of two, got 12"), attn::ValueError);
  CHECK_THROWS_AS(attn::audio::fft(std::vector<cd>()), attn::ValueError);
  CHECK_THROWS_AS(attn::audio::power_spectrum(xt::zeros<double>({2, 8})), attn::ShapeError);
}
