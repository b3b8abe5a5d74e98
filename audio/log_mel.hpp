// Log-mel filterbank features, the input of most speech recognizers since the 2010s (Listen,
// Attend and Spell reads 40 of them per 10 ms): the signal cut into overlapping frames, each
// frame windowed, its power spectrum taken and summed into mel bands, and the log of each band.
//
//   frame t:   the n_fft samples x[t * hop .. t * hop + n_fft)   (frames that fit whole; no padding)
//   window:    times a Hann window, w[n] = 0.5 - 0.5 cos(2 pi n / win_length) (periodic),
//              zero-padded on both sides to n_fft samples, as torch.stft pads a shorter window
//   spectrum:  P_t[k] = |FFT(frame)[k]|^2,  k = 0 .. n_fft / 2
//   mel:       E_t[m] = sum_k P_t[k] bank[k, m]    (audio/mel.hpp)
//   log:       F_t[m] = log(max(E_t[m], floor))
//
// The same numbers as torch.stft(center=False, window=torch.hann_window(win_length)) followed by
// torchaudio's HTK filterbank and a clamped log (tools/reference/log_mel.py checks it).
//
//   attn::audio::LogMelOptions o;        // 16 kHz: 25 ms frames every 10 ms, 40 bands
//   xt::xarray<double> F = attn::audio::log_mel(samples, o);   // [frames, 40]
#pragma once

#include <cstddef>
#include <xtensor/xarray.hpp>

namespace attn::audio {

struct LogMelOptions {
  double sample_rate = 16000;
  std::size_t win_length = 400;  // samples per frame: 25 ms at 16 kHz
  std::size_t hop_length = 160;  // samples between frame starts: 10 ms at 16 kHz
  std::size_t n_fft = 512;       // a power of two >= win_length
  std::size_t n_mels = 40;
  double f_min = 0.0;
  double f_max = -1.0;           // < 0: sample_rate / 2
  double log_floor = 1e-10;      // the log of a silent band is log(floor), not -inf
};

// samples [S] (any scale) -> [T, n_mels] with T = 1 + (S - n_fft) / hop_length frames, or 0
// when S < n_fft. ValueError on options that do not fit (n_fft not a power of two or below
// win_length, a zero hop, ...), ShapeError on samples that are not one channel [S].
xt::xarray<double> log_mel(const xt::xarray<double>& samples, const LogMelOptions& options = {});

// The periodic Hann window of `length` samples, as torch.hann_window(length).
xt::xarray<double> hann_window(std::size_t length);

}  // namespace attn::audio
