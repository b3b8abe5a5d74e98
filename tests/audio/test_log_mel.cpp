#include "../helpers.hpp"
#include "../reference.hpp"

#include "audio/log_mel.hpp"

#include <cmath>

namespace {

// tools/reference/log_mel.py's signal: a chirp from 200 Hz to 3 kHz and tones at 440 Hz and 1.5 kHz.
xt::xarray<double> test_signal(double sample_rate, double seconds) {
  const double pi = std::acos(-1.0);
  const auto S = std::size_t(sample_rate * seconds);
  xt::xarray<double> x = xt::zeros<double>({S});
  for (std::size_t n = 0; n < S; ++n) {
    const double t = double(n) / sample_rate;
    x(n) = 0.5 * std::sin(2 * pi * (200.0 * t + 0.5 * (3000.0 - 200.0) / seconds * t * t)) +
           0.3 * std::sin(2 * pi * 440.0 * t) + 0.2 * std::sin(2 * pi * 1500.0 * t);
  }
  return x;
}

}  // namespace

TEST_CASE("audio::log_mel equals torch.stft + torchaudio's filterbank + a clamped log") {
  test::Reference ref("log_mel");
  attn::audio::LogMelOptions o;  // 16 kHz: 400, 160, 512, 40
  const xt::xarray<double> a = attn::audio::log_mel(test_signal(16000, 0.3), o);
  const xt::xarray<double> want_a = ref.array("log_mel_16k", "features");
  REQUIRE(a.shape() == want_a.shape());
  CHECK(xt::allclose(a, want_a, 0.0, 1e-9));
  o.sample_rate = 22050;
  o.win_length = 551;
  o.hop_length = 220;
  o.n_fft = 1024;
  o.n_mels = 23;
  const xt::xarray<double> b = attn::audio::log_mel(test_signal(22050, 0.3), o);
  const xt::xarray<double> want_b = ref.array("log_mel_22k", "features");
  REQUIRE(b.shape() == want_b.shape());
  CHECK(xt::allclose(b, want_b, 0.0, 1e-9));
}

TEST_CASE("audio::log_mel: frames as torch.stft counts them, silence at the floor, the Hann window periodic") {
  attn::audio::LogMelOptions o;
  CHECK(attn::audio::log_mel(xt::zeros<double>({511}), o).shape() == std::vector<std::size_t>{0, 40});
  CHECK(attn::audio::log_mel(xt::zeros<double>({512}), o).shape() == std::vector<std::size_t>{1, 40});
  const xt::xarray<double> silent = attn::audio::log_mel(xt::zeros<double>({512 + 160 * 3}), o);
  CHECK(silent.shape() == std::vector<std::size_t>{4, 40});
  CHECK(xt::allclose(silent, std::log(1e-10)));
  const xt::xarray<double> w = attn::audio::hann_window(4);  // torch.hann_window(4) = [0, 0.5, 1, 0.5]
  CHECK(xt::allclose(w, xt::xarray<double>{0.0, 0.5, 1.0, 0.5}));
}

TEST_CASE("audio::log_mel refuses options that do not fit, naming them") {
  attn::audio::LogMelOptions o;
  o.n_fft = 256;  // below win_length 400
  CHECK_THROWS_WITH_AS(attn::audio::log_mel(xt::zeros<double>({1000}), o), doctest::Contains("n_fft must be a power of two >= win_length"), attn::ValueError);
  o.n_fft = 500;
  CHECK_THROWS_AS(attn::audio::log_mel(xt::zeros<double>({1000}), o), attn::ValueError);
  o = {};
  o.hop_length = 0;
  CHECK_THROWS_AS(attn::audio::log_mel(xt::zeros<double>({1000}), o), attn::ValueError);
  CHECK_THROWS_AS(attn::audio::log_mel(xt::zeros<double>({2, 1000}), attn::audio::LogMelOptions{}), attn::ShapeError);
}
