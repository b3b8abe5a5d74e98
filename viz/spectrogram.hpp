// Speech features as pictures: a log-mel spectrogram, and a speller's attention drawn under
// it on the same time axis, so that each character's weights stand below the sound it read.
//
//   std::string a = attn::viz::spectrogram_svg(features);           // features [T, n_mels]
//   std::string b = attn::viz::alignment_over_spectrogram_svg(features, weights, chars, 8);
//       // weights [L, U]: character i's attention over U listener states, each state the
//       // summary of 8 frames (3 pyramid layers), so it is drawn 8 frames wide
#pragma once

#include "../core/config.hpp"

#include <string>
#include <vector>

namespace attn::viz {

struct SpectrogramOptions {
  std::string title;
  double frame_seconds = 0.01;  // time between frames: ticks on the time axis are in seconds
  int frame_px = 3;             // pixels per frame
  int band_px = 3;              // pixels per mel band
  int row_px = 14;              // pixels per character row of the attention
};

// features [T, n_mels] as columns of colour, the lowest band at the bottom, coloured from the
// smallest value (dark) to the largest (yellow). ShapeError unless 2-d with T, n_mels > 0.
std::string spectrogram_svg(const xt::xarray<double>& features, const SpectrogramOptions& options = {});

// The spectrogram, and below it weights [L, U] (rows: the characters written, `row_labels`),
// listener state u drawn over frames u * frames_per_state .. (u + 1) * frames_per_state - 1
// (cut at T), weights coloured 0 .. 1. ShapeError when the labels or the states do not fit the
// frames (U * frames_per_state must cover T and start inside it).
std::string alignment_over_spectrogram_svg(const xt::xarray<double>& features, const xt::xarray<double>& weights,
                                           const std::vector<std::string>& row_labels, std::size_t frames_per_state,
                                           const SpectrogramOptions& options = {});

}  // namespace attn::viz
