#include "../helpers.hpp"
#include "../reference.hpp"

#include "audio/mel.hpp"

#include <xtensor/xview.hpp>

TEST_CASE("audio::mel_filterbank equals torchaudio's melscale_fbanks (htk, no norm)") {
  test::Reference ref("log_mel");
  const xt::xarray<double> a = attn::audio::mel_filterbank(512, 16000, 40);
  CHECK(xt::allclose(a, ref.array("mel_512_16k_40", "bank"), 0.0, 1e-12));
  const xt::xarray<double> b = attn::audio::mel_filterbank(1024, 22050, 23, 100.0, 7000.0);
  CHECK(xt::allclose(b, ref.array("mel_1024_22k_23", "bank"), 0.0, 1e-12));
}

TEST_CASE("audio::hz_to_mel and mel_to_hz: the HTK formula, each the other's inverse") {
  CHECK(attn::audio::hz_to_mel(700.0) == doctest::Approx(2595.0 * std::log10(2.0)));
  CHECK(attn::audio::hz_to_mel(1000.0) == doctest::Approx(1000.0).epsilon(1e-3));  // about 1000 mel at 1 kHz, by design
  for (double f : {0.0, 55.0, 440.0, 3000.0, 11025.0}) CHECK(attn::audio::mel_to_hz(attn::audio::hz_to_mel(f)) == doctest::Approx(f));
}

TEST_CASE("audio::mel_filterbank: triangles between f_min and f_max, none outside") {
  const xt::xarray<double> bank = attn::audio::mel_filterbank(256, 8000, 10, 300.0, 3000.0);  // bins of 31.25 Hz
  REQUIRE(bank.shape() == std::vector<std::size_t>{129, 10});
  CHECK(xt::amin(bank)() >= 0.0);
  CHECK(xt::amax(bank)() <= 1.0);
  for (std::size_t k = 0; k < 129; ++k) {
    const double f = 31.25 * double(k);
    if (f <= 300.0 || f >= 3000.0) CHECK(xt::amax(xt::view(bank, k, xt::all()))() == 0.0);
  }
}

TEST_CASE("audio::mel_filterbank refuses ranges and sizes that make no bank") {
  using attn::audio::mel_filterbank;
  CHECK_THROWS_AS(mel_filterbank(512, 16000, 0), attn::ValueError);
  CHECK_THROWS_AS(mel_filterbank(1, 16000, 40), attn::ValueError);
  CHECK_THROWS_WITH_AS(mel_filterbank(512, 16000, 40, 0.0, 9000.0), doctest::Contains("f_max 9000"), attn::ValueError);
  CHECK_THROWS_AS(mel_filterbank(512, 16000, 40, 500.0, 400.0), attn::ValueError);
}
