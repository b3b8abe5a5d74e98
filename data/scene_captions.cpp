#include "scene_captions.hpp"

#include "../core/errors.hpp"
#include "../io/png.hpp"

#include <algorithm>

namespace attn::data {

namespace {

std::string size_text(std::size_t height, std::size_t width) {
  return std::to_string(width) + "x" + std::to_string(height) + " (width x height)";
}

// pixels [3, H, W] uint8 written as 0..1 into out[b] of images [B, 3, H, W].
template <class T>
void fill_image(xt::xarray<T>& images, std::size_t b, const xt::xtensor<std::uint8_t, 3>& pixels) {
  const std::size_t n = pixels.size();
  T* out = images.data() + b * n;
  const std::uint8_t* in = pixels.data();
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<T>(in[i]) / T(255);
}

template <class T>
Tensor images_tensor(const std::vector<Scene>& scenes, const std::vector<std::size_t>& indices) {
  const auto& s = scenes[indices[0]].pixels.shape();
  xt::xarray<T> images = xt::xarray<T>::from_shape({indices.size(), s[0], s[1], s[2]});
  for (std::size_t b = 0; b < indices.size(); ++b) fill_image(images, b, scenes[indices[b]].pixels);
  return Tensor(std::move(images));
}

template <class T>
Tensor image_input(const xt::xtensor<std::uint8_t, 3>& pixels) {
  const auto& s = pixels.shape();
  xt::xarray<T> images = xt::xarray<T>::from_shape({std::size_t(1), s[0], s[1], s[2]});
  fill_image(images, 0, pixels);
  return Tensor(std::move(images));
}

}  // namespace

const char* split_name(SceneCaptionSplit split) {
  switch (split) {
    case SceneCaptionSplit::Train: return "train";
    case SceneCaptionSplit::Valid: return "valid";
    default: return "test";
  }
}

std::uint64_t scene_caption_seed(std::uint64_t seed, SceneCaptionSplit split, std::size_t i) {
  if (static_cast<std::uint64_t>(i) >= kSceneSplitStride)
    throw ValueError(std::string("scene_caption_seed: scene ") + std::to_string(i) + " of the " + split_name(split) +
                     " split is past the split's range (fewer than 2^40 scenes a split)");
  const std::uint64_t offset = split == SceneCaptionSplit::Train ? 0
                               : split == SceneCaptionSplit::Valid ? kSceneSplitStride
                                                                   : 2 * kSceneSplitStride;
  return scene_seed(seed, static_cast<std::size_t>(offset + i));
}

std::vector<Scene> make_scene_split(SceneCaptionSplit split, std::size_t n, std::uint64_t seed,
                                    const SceneOptions& options) {
  if (n > 0) scene_caption_seed(seed, split, n - 1);  // the range check, before any drawing
  std::vector<Scene> scenes;
  scenes.reserve(n);
  for (std::size_t i = 0; i < n; ++i) scenes.push_back(render_scene(scene_caption_seed(seed, split, i), options));
  return scenes;
}

SceneCaptions make_scene_captions(std::size_t n_train, std::size_t n_valid, std::size_t n_test, std::uint64_t seed,
                                  const SceneOptions& options) {
  SceneCaptions set;
  set.train = make_scene_split(SceneCaptionSplit::Train, n_train, seed, options);
  set.valid = make_scene_split(SceneCaptionSplit::Valid, n_valid, seed, options);
  set.test = make_scene_split(SceneCaptionSplit::Test, n_test, seed, options);
  return set;
}

SceneBatch make_scene_batch(const std::vector<Scene>& scenes, const std::vector<std::size_t>& indices,
                            const Vocab& vocab, Dtype dtype) {
  if (indices.empty()) throw ValueError("make_scene_batch: expected at least one scene, got none");
  for (std::size_t i : indices)
    if (i >= scenes.size())
      throw ValueError("make_scene_batch: index " + std::to_string(i) + " is out of range for " +
                       std::to_string(scenes.size()) + " scenes");
  const auto& first = scenes[indices[0]].pixels.shape();
  for (std::size_t i : indices) {
    const auto& s = scenes[i].pixels.shape();
    if (s != first)
      throw ShapeError("make_scene_batch: every scene of a batch must have one size, got [" + std::to_string(first[0]) +
                       ", " + std::to_string(first[1]) + ", " + std::to_string(first[2]) + "] for scene " +
                       std::to_string(indices[0]) + " and [" + std::to_string(s[0]) + ", " + std::to_string(s[1]) +
                       ", " + std::to_string(s[2]) + "] for scene " + std::to_string(i));
  }

  SceneBatch batch;
  batch.indices = indices;
  std::size_t longest = 0;
  for (std::size_t i : indices) longest = std::max(longest, scenes[i].caption.size());
  const std::size_t B = indices.size(), T = longest + 1;  // + <eos>
  batch.tgt_in = Index(Shape{B, T}, Vocab::pad_id);
  batch.tgt_out = Index(Shape{B, T}, Vocab::pad_id);
  batch.objects = Index(Shape{B, T}, -1);
  for (std::size_t b = 0; b < B; ++b) {
    const Scene& scene = scenes[indices[b]];
    std::vector<std::int64_t> ids;
    try {
      ids = vocab.encode(scene.caption, /*strict=*/true);
    } catch (const ValueError& e) {
      throw ValueError("make_scene_batch: the caption of scene " + std::to_string(indices[b]) + " (seed " +
                       std::to_string(scene.seed) + ") has a word the vocabulary lacks: " + e.what());
    }
    batch.tgt_in(b, 0) = Vocab::bos_id;
    for (std::size_t t = 0; t < ids.size(); ++t) {
      batch.tgt_in(b, t + 1) = ids[t];
      batch.tgt_out(b, t) = ids[t];
      batch.objects(b, t) = scene.word_objects[t];
    }
    batch.tgt_out(b, ids.size()) = Vocab::eos_id;
    batch.tgt_lengths.push_back(ids.size() + 1);
    batch.captions.push_back(scene.caption);
    batch.masks.push_back(scene.masks);
  }
  batch.images = dtype == Dtype::Float32 ? images_tensor<float>(scenes, indices) : images_tensor<double>(scenes, indices);
  return batch;
}

std::vector<std::vector<std::size_t>> scene_batch_order(const std::vector<Scene>& scenes, const BatchOptions& options,
                                                        Generator& gen) {
  if (scenes.empty()) throw ValueError("scene_batch_order: expected scenes, got none");
  std::vector<std::size_t> lengths;
  lengths.reserve(scenes.size());
  for (const Scene& s : scenes) lengths.push_back(s.caption.size());
  return batch_order(lengths, options, gen);
}

std::vector<SceneBatch> make_scene_batches(const std::vector<Scene>& scenes, const Vocab& vocab,
                                           const BatchOptions& options, Generator& gen, Dtype dtype) {
  std::vector<SceneBatch> batches;
  for (const auto& indices : scene_batch_order(scenes, options, gen))
    batches.push_back(make_scene_batch(scenes, indices, vocab, dtype));
  return batches;
}

xt::xtensor<std::uint8_t, 3> read_scene_pixels(const std::string& path, std::size_t height, std::size_t width) {
  const std::string wanted = "the model takes RGB pictures of " + size_text(height, width);
  xt::xtensor<std::uint8_t, 3> pixels;
  try {
    pixels = io::read_png(path);
  } catch (const IOError& e) {
    throw IOError(std::string(e.what()) + "; " + wanted);
  }
  const std::size_t h = pixels.shape()[1], w = pixels.shape()[2];
  if (h != height || w != width)
    throw IOError("read_scene_pixels: '" + path + "' is a picture of " + size_text(h, w) + "; " + wanted +
                  " (the size it was trained on)");
  return pixels;
}

Tensor scene_image_input(const xt::xtensor<std::uint8_t, 3>& pixels, Dtype dtype) {
  if (pixels.shape()[0] != 3 || pixels.size() == 0)
    throw ShapeError("scene_image_input: expected pixels [3, H, W], got [" + std::to_string(pixels.shape()[0]) + ", " +
                     std::to_string(pixels.shape()[1]) + ", " + std::to_string(pixels.shape()[2]) + "]");
  return dtype == Dtype::Float32 ? image_input<float>(pixels) : image_input<double>(pixels);
}

Tensor read_scene_image(const std::string& path, std::size_t height, std::size_t width, Dtype dtype) {
  return scene_image_input(read_scene_pixels(path, height, width), dtype);
}

}  // namespace attn::data
