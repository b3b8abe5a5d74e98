#include "attention_share.hpp"

#include "../core/errors.hpp"

#include <xtensor/xview.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn::models {

namespace {

std::string dims(const xt::xarray<double>& a) {
  return shape_str(Shape(a.shape().begin(), a.shape().end()));
}

std::size_t index_in(const data::Tokens& list, const std::string& word) {
  return static_cast<std::size_t>(std::find(list.begin(), list.end(), word) - list.begin());
}

// The first pixel row of cell r of `cells` over `pixels`: floor(r * pixels / cells).
std::size_t edge(std::size_t r, std::size_t pixels, std::size_t cells) { return r * pixels / cells; }

// Checks one map [rows, cols] of weights: finite, >= 0, a positive total; returns the total.
double check_weights(const char* op, const xt::xarray<double>& cells) {
  double total = 0.0;
  for (double w : cells) {
    if (!std::isfinite(w) || w < 0)
      throw ValueError(std::string(op) + ": attention weights must be finite and >= 0, got " + std::to_string(w));
    total += w;
  }
  if (!(total > 0)) throw ValueError(std::string(op) + ": the attention weights sum to 0: no share can be taken");
  return total;
}

}  // namespace

SceneWordKind scene_word_kind(const std::string& word) {
  if (index_in(data::scene_sizes(), word) < data::scene_sizes().size()) return SceneWordKind::Size;
  if (index_in(data::scene_colours(), word) < data::scene_colours().size()) return SceneWordKind::Colour;
  if (index_in(data::scene_shapes(), word) < data::scene_shapes().size()) return SceneWordKind::Shape;
  return SceneWordKind::Other;
}

const char* kind_name(SceneWordKind kind) {
  switch (kind) {
    case SceneWordKind::Size: return "size";
    case SceneWordKind::Colour: return "colour";
    case SceneWordKind::Shape: return "shape";
    default: return "other";
  }
}

xt::xtensor<double, 2> cell_weights_to_pixels(const xt::xarray<double>& cells, std::size_t height, std::size_t width) {
  if (cells.dimension() != 2 || cells.shape()[0] < 1 || cells.shape()[1] < 1 || cells.shape()[0] > height ||
      cells.shape()[1] > width)
    throw ShapeError("cell_weights_to_pixels: expected cells [rows, cols] with 1 <= rows <= " + std::to_string(height) +
                     " and 1 <= cols <= " + std::to_string(width) + " (the picture's height and width), got " +
                     dims(cells));
  const std::size_t rows = cells.shape()[0], cols = cells.shape()[1];
  xt::xtensor<double, 2> pixels = xt::xtensor<double, 2>::from_shape({height, width});
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t y0 = edge(r, height, rows), y1 = edge(r + 1, height, rows);
    for (std::size_t c = 0; c < cols; ++c) {
      const std::size_t x0 = edge(c, width, cols), x1 = edge(c + 1, width, cols);
      const double each = cells(r, c) / static_cast<double>((y1 - y0) * (x1 - x0));
      for (std::size_t y = y0; y < y1; ++y)
        for (std::size_t x = x0; x < x1; ++x) pixels(y, x) = each;
    }
  }
  return pixels;
}

double attention_share(const xt::xarray<double>& cells, const xt::xtensor<bool, 2>& mask) {
  const double total = check_weights("attention_share", cells);
  const xt::xtensor<double, 2> pixels = cell_weights_to_pixels(cells, mask.shape()[0], mask.shape()[1]);
  double inside = 0.0;
  for (std::size_t i = 0; i < pixels.size(); ++i)
    if (mask.flat(i)) inside += pixels.flat(i);
  return inside / total;
}

double mask_coverage(const xt::xtensor<bool, 2>& mask) {
  if (mask.size() == 0) throw ShapeError("mask_coverage: the mask is empty (0 pixels)");
  std::size_t n = 0;
  for (bool v : mask) n += v ? 1 : 0;
  return static_cast<double>(n) / static_cast<double>(mask.size());
}

std::vector<WordShare> caption_word_shares(const xt::xarray<double>& weights, const data::Tokens& words,
                                           const std::vector<std::int64_t>& objects,
                                           const std::vector<xt::xtensor<bool, 2>>& masks) {
  const char* op = "caption_word_shares";
  if (weights.dimension() != 3 || weights.shape()[0] < words.size())
    throw ShapeError(std::string(op) + ": expected weights [T, rows, cols] with T >= " + std::to_string(words.size()) +
                     " (the caption's words), got " + dims(weights));
  if (objects.size() != words.size())
    throw ValueError(std::string(op) + ": expected an object (or -1) per word, got " + std::to_string(objects.size()) +
                     " for " + std::to_string(words.size()) + " words");
  if (masks.empty()) throw ValueError(std::string(op) + ": expected the scene's masks, got none");
  for (const auto& m : masks)
    if (m.shape() != masks[0].shape())
      throw ShapeError(std::string(op) + ": the scene's masks differ in size");
  // Where a word naming no object is measured: the union of every object's mask.
  xt::xtensor<bool, 2> any = masks[0];
  for (const auto& m : masks) any = any || m;
  const double any_chance = mask_coverage(any);

  std::vector<WordShare> out;
  for (std::size_t t = 0; t < words.size(); ++t) {
    WordShare w;
    w.position = t;
    w.word = words[t];
    w.kind = scene_word_kind(words[t]);
    w.object = objects[t];
    if (w.object >= static_cast<std::int64_t>(masks.size()) || w.object < -1)
      throw ValueError(std::string(op) + ": word " + std::to_string(t) + " ('" + words[t] + "') names object " +
                       std::to_string(w.object) + " of a scene of " + std::to_string(masks.size()));
    if (w.kind != SceneWordKind::Other && w.object < 0) continue;  // names no object of the scene
    if (w.kind == SceneWordKind::Other) w.object = -1;
    const xt::xarray<double> cells = xt::view(weights, t);
    const xt::xtensor<bool, 2>& mask = w.object >= 0 ? masks[static_cast<std::size_t>(w.object)] : any;
    w.share = attention_share(cells, mask);
    w.chance = w.object >= 0 ? mask_coverage(mask) : any_chance;
    out.push_back(w);
  }
  return out;
}

std::vector<std::int64_t> generated_word_objects(const data::Tokens& words, const data::Scene& scene) {
  std::vector<std::int64_t> objects(words.size(), -1);
  for (std::size_t i = 0; i + 3 < words.size(); ++i) {
    if (words[i] != "a") continue;
    const std::size_t size = index_in(data::scene_sizes(), words[i + 1]);
    const std::size_t colour = index_in(data::scene_colours(), words[i + 2]);
    const std::size_t shape = index_in(data::scene_shapes(), words[i + 3]);
    for (std::size_t k = 0; k < scene.objects.size(); ++k) {
      const data::SceneObject& o = scene.objects[k];
      if (o.size == size && o.colour == colour && o.shape == shape)
        for (std::size_t j = 1; j <= 3; ++j) objects[i + j] = static_cast<std::int64_t>(k);
    }
  }
  return objects;
}

double KindShare::ratio() const {
  return words == 0 ? std::numeric_limits<double>::quiet_NaN() : share / chance;
}

void AttentionShareMeter::add(const std::vector<WordShare>& caption) {
  ++captions_;
  // Per caption: the sums and counts of each kind (index 4: object words together).
  std::array<double, 5> share{}, chance{};
  std::array<std::size_t, 5> count{};
  for (const WordShare& w : caption) {
    const std::size_t k = static_cast<std::size_t>(w.kind);
    for (std::size_t slot : {k, std::size_t(4)}) {
      if (slot == 4 && w.kind == SceneWordKind::Other) continue;
      share[slot] += w.share;
      chance[slot] += w.chance;
      ++count[slot];
    }
  }
  for (std::size_t slot = 0; slot < 5; ++slot) {
    if (count[slot] == 0) continue;
    Sums& s = sums_[slot];
    s.words += count[slot];
    ++s.captions;
    s.share += share[slot] / static_cast<double>(count[slot]);
    s.chance += chance[slot] / static_cast<double>(count[slot]);
  }
}

void AttentionShareMeter::add_batch(const data::SceneBatch& batch, const xt::xarray<double>& weights, std::size_t rows) {
  const std::size_t B = batch.size();
  if (weights.dimension() != 3 || weights.shape()[0] != B || weights.shape()[1] < batch.tgt_out.shape(1) ||
      rows == 0 || weights.shape()[2] % rows != 0)
    throw ShapeError("AttentionShareMeter::add_batch: expected weights [" + std::to_string(B) + ", >= " +
                     std::to_string(batch.tgt_out.shape(1)) + ", rows * cols] with rows = " + std::to_string(rows) +
                     ", got " + dims(weights));
  const std::size_t cols = weights.shape()[2] / rows;
  for (std::size_t b = 0; b < B; ++b) {
    const data::Tokens& words = batch.captions[b];
    std::vector<std::int64_t> objects(words.size());
    for (std::size_t t = 0; t < words.size(); ++t) objects[t] = batch.objects(b, t);
    xt::xarray<double> maps = xt::view(weights, b, xt::range(0, words.size()), xt::all());
    maps.reshape({words.size(), rows, cols});
    add(caption_word_shares(maps, words, objects, batch.masks[b]));
  }
}

void AttentionShareMeter::add_generated(const data::Scene& scene, const data::Tokens& words,
                                        const xt::xarray<double>& weights) {
  const std::vector<std::int64_t> objects = generated_word_objects(words, scene);
  for (std::size_t t = 0; t < words.size(); ++t)
    if (objects[t] < 0 && scene_word_kind(words[t]) != SceneWordKind::Other) ++unmatched_;
  add(caption_word_shares(weights, words, objects, scene.masks));
}

KindShare AttentionShareMeter::summary(std::size_t slot) const {
  const Sums& s = sums_[slot];
  KindShare k;
  k.words = s.words;
  k.captions = s.captions;
  if (s.captions > 0) {
    k.share = s.share / static_cast<double>(s.captions);
    k.chance = s.chance / static_cast<double>(s.captions);
  }
  return k;
}

KindShare AttentionShareMeter::kind(SceneWordKind kind) const { return summary(static_cast<std::size_t>(kind)); }

KindShare AttentionShareMeter::object_words() const { return summary(4); }

}  // namespace attn::models
