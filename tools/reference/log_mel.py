"""PyTorch reference values for attn::audio (audio/fft.hpp, audio/mel.hpp, audio/log_mel.hpp).

torch.fft.fft for the FFT; torch.stft(center=False) with a periodic Hann window for the frames'
spectra; the mel filterbank as torchaudio.functional.melscale_fbanks builds it with
mel_scale="htk" and norm=None (torchaudio is not a Debian package: its formula is written out
below, line for line); the log clamped at 1e-10.

Cases:
  fft_8, fft_64       a fixed complex signal: real and imaginary parts in, out
  mel_512_16k_40      the bank for n_fft 512, 16 kHz, 40 filters, 0 .. 8 kHz   [257, 40]
  mel_1024_22k_23     n_fft 1024, 22,050 Hz, 23 filters, 100 .. 7,000 Hz        [513, 23]
  log_mel_16k         a chirp plus two tones, 0.3 s at 16 kHz (its formula in the test too):
                      win 400, hop 160, n_fft 512, 40 bands
  log_mel_22k         the same signal at 22,050 Hz: win 551, hop 220, n_fft 1024, 23 bands
"""
import math

import torch

from common import Writer, fixed


def hz_to_mel(f):
    return 2595.0 * math.log10(1.0 + f / 700.0)


def mel_to_hz(m):
    return 700.0 * (10.0 ** (m / 2595.0) - 1.0)


def melscale_fbanks(n_freqs, f_min, f_max, n_mels, sample_rate):
    """torchaudio.functional.melscale_fbanks(..., norm=None, mel_scale="htk")."""
    all_freqs = torch.linspace(0, sample_rate // 2, n_freqs)
    m_pts = torch.linspace(hz_to_mel(f_min), hz_to_mel(f_max), n_mels + 2)
    f_pts = 700.0 * (10.0 ** (m_pts / 2595.0) - 1.0)
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts.unsqueeze(0) - all_freqs.unsqueeze(1)  # [n_freqs, n_mels + 2]
    down = (-1.0 * slopes[:, :-2]) / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    return torch.max(torch.zeros(1), torch.min(down, up))  # [n_freqs, n_mels]


def signal(sample_rate, seconds):
    """A chirp from 200 Hz to 3 kHz plus tones at 440 Hz and 1.5 kHz; the C++ test builds the same."""
    n = torch.arange(int(sample_rate * seconds), dtype=torch.float64)
    t = n / sample_rate
    chirp = torch.sin(2 * math.pi * (200.0 * t + 0.5 * (3000.0 - 200.0) / seconds * t * t))
    return 0.5 * chirp + 0.3 * torch.sin(2 * math.pi * 440.0 * t) + 0.2 * torch.sin(2 * math.pi * 1500.0 * t)


def log_mel(x, sample_rate, win, hop, n_fft, n_mels, f_min=0.0, f_max=None):
    f_max = sample_rate / 2 if f_max is None else f_max
    window = torch.hann_window(win, periodic=True, dtype=torch.float64)
    spec = torch.stft(x, n_fft, hop_length=hop, win_length=win, window=window, center=False,
                      return_complex=True)  # [n_fft / 2 + 1, T]
    power = spec.abs() ** 2
    bank = melscale_fbanks(n_fft // 2 + 1, f_min, f_max, n_mels, sample_rate)
    return torch.log(torch.clamp(power.T @ bank, min=1e-10))  # [T, n_mels]


def main():
    w = Writer("log_mel")
    for n in (8, 64):
        re, im = fixed((n,), n, requires_grad=False), fixed((n,), n + 1, requires_grad=False)
        X = torch.fft.fft(torch.complex(re, im))
        w.case("fft_%d" % n, re=re, im=im, out_re=X.real, out_im=X.imag)
    w.case("mel_512_16k_40", bank=melscale_fbanks(257, 0.0, 8000.0, 40, 16000))
    w.case("mel_1024_22k_23", bank=melscale_fbanks(513, 100.0, 7000.0, 23, 22050))
    w.case("log_mel_16k", features=log_mel(signal(16000, 0.3), 16000, 400, 160, 512, 40))
    w.case("log_mel_22k", features=log_mel(signal(22050, 0.3), 22050, 551, 220, 1024, 23))
    w.save()


if __name__ == "__main__":
    main()
