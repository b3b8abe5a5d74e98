// Rendered scenes (data/scenes.hpp) as a captioning data set, for Show, Attend and Tell on
// pixels: three splits that never share a scene, one vocabulary for all of them, batches of
// images and captions, and a PNG read as a model's input.
//
//   data::SceneCaptions set = data::make_scene_captions(5000, 500, 500, /*seed=*/0);
//   data::Vocab vocab = data::scene_vocab();                   // the same for every split
//   data::BatchOptions o;  o.batch_size = 32;
//   auto order = data::scene_batch_order(set.train, o, gen);   // one epoch: scene positions per batch
//   data::SceneBatch b = data::make_scene_batch(set.train, order[0], vocab);
//   b.images;    // [B, 3, 64, 64] float32 in 0..1
//   b.tgt_in;    // [B, T] <bos> a small red circle above ... <pad>
//   b.tgt_out;   // [B, T] a small red circle above ... <eos> <pad>
//   b.objects;   // [B, T] the object tgt_out[b, t] names (index into b.masks[b]), -1 for none
//   b.masks[0];  // scene 0's gold regions, one [64, 64] mask per object
//
// In an epoch trainer (train/epoch_trainer.hpp), the order is drawn per epoch and each batch
// made when it is used, so an epoch's pixels are never all in memory at once (5000 scenes'
// images are 245 MB in float32):
//
//   family.draw_epoch = [&](Generator& g) { order = data::scene_batch_order(set.train, o, g); return order.size(); };
//   family.step = [&](std::size_t i) { data::SceneBatch b = data::make_scene_batch(set.train, order[i], vocab);
//                                      ... model.forward_all(b.images, b.tgt_in) ... };
//
// The splits. Scene i of a split is render_scene(scene_seed(seed, offset + i)) with the offset
// 0 for train, 2^40 for valid and 2^41 for test (scene_caption_seed), and a split holds fewer
// than 2^40 scenes, so the three index ranges are disjoint. scene_seed(seed, i) is a bijection
// of i (SplitMix64 is one, and so is xor with a fixed seed), so distinct indices give distinct
// render seeds: no scene is drawn in two splits. A split's scenes do not depend on the other
// splits' sizes (the test scenes are the same whether 1000 or 20000 scenes train), and the
// training split is make_scenes(n_train, seed). As with split_scenes, the test scenes are new
// pictures, not new captions (scenes.hpp says why).
//
// The images are 0..1 (value / 255, to_float's), not normalised per channel: the encoder's
// first convolution is followed by batch norm (models/cnn_encoder.hpp), which standardises what
// the convolution computes, so the input's offset and scale matter little; and 0..1 is one
// convention from the renderer to a PNG read at caption time and the overlays, with no channel
// statistics to store in a checkpoint and apply again (a mismatch there would be a silent error).
#pragma once

#include "../core/random.hpp"
#include "../core/tensor.hpp"
#include "batch.hpp"
#include "scenes.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attn::data {

enum class SceneCaptionSplit { Train, Valid, Test };
const char* split_name(SceneCaptionSplit split);  // "train", "valid", "test"

// The first scene index of each split; a split holds fewer than this many scenes.
constexpr std::uint64_t kSceneSplitStride = std::uint64_t(1) << 40;

// The render seed of scene i of `split`: scene_seed(seed, offset + i) (see above). ValueError
// for i >= kSceneSplitStride.
std::uint64_t scene_caption_seed(std::uint64_t seed, SceneCaptionSplit split, std::size_t i);

// n scenes of `split`: scene i is render_scene(scene_caption_seed(seed, split, i), options).
std::vector<Scene> make_scene_split(SceneCaptionSplit split, std::size_t n, std::uint64_t seed,
                                    const SceneOptions& options = {});

struct SceneCaptions {
  std::vector<Scene> train, valid, test;
};

SceneCaptions make_scene_captions(std::size_t n_train, std::size_t n_valid, std::size_t n_test, std::uint64_t seed,
                                  const SceneOptions& options = {});

struct SceneBatch {
  Tensor images;                          // [B, 3, H, W] in 0..1
  Index tgt_in;                           // [B, T] <bos> + caption, padded with <pad>
  Index tgt_out;                          // [B, T] caption + <eos>, padded
  std::vector<std::size_t> tgt_lengths;   // caption length + 1: the tokens of tgt_out that count
  Index objects;                          // [B, T] the object tgt_out[b, t] names (index into masks[b]), -1 for none
  std::vector<Tokens> captions;           // each scene's caption words (tgt_out's, without <eos>)
  std::vector<std::vector<xt::xtensor<bool, 2>>> masks;  // [b][k]: object k's gold region [H, W]
  std::vector<std::size_t> indices;       // which scenes, as positions in the list given

  std::size_t size() const { return tgt_lengths.size(); }  // B
};

// One batch of scenes[indices[0]], scenes[indices[1]], ... in `dtype` (the model's).
// Every caption word must be in `vocab` (scene_vocab() holds them all): a word it lacks is a
// ValueError naming the word and the scene's seed, not a silent <unk>. ValueError for an
// empty list or an index out of range, ShapeError for scenes of different sizes.
SceneBatch make_scene_batch(const std::vector<Scene>& scenes, const std::vector<std::size_t>& indices,
                            const Vocab& vocab, Dtype dtype = Dtype::Float32);

// One epoch's order: lists of scene positions, one per batch, from data/batch.hpp's
// batch_order over the caption lengths (options.sort_buckets groups captions of one length,
// less padding). The same generator state gives the same order.
std::vector<std::vector<std::size_t>> scene_batch_order(const std::vector<Scene>& scenes, const BatchOptions& options,
                                                        Generator& gen);

// Every batch of one epoch at once (as make_grid_batches does), for small sets and tests.
std::vector<SceneBatch> make_scene_batches(const std::vector<Scene>& scenes, const Vocab& vocab,
                                           const BatchOptions& options, Generator& gen, Dtype dtype = Dtype::Float32);

// The PNG at `path` as the pixels a model of height x width takes: [3, height, width] uint8.
// IOError naming the file for a missing, damaged or grayscale file (io/png.hpp's reasons, with
// the size the model wants added) and for a picture of another size, giving the size found
// and the size wanted.
xt::xtensor<std::uint8_t, 3> read_scene_pixels(const std::string& path, std::size_t height, std::size_t width);

// A picture [3, H, W] as one model input [1, 3, H, W] in 0..1, in `dtype`.
Tensor scene_image_input(const xt::xtensor<std::uint8_t, 3>& pixels, Dtype dtype = Dtype::Float32);

// read_scene_pixels, then scene_image_input: the PNG as a model's input [1, 3, height, width].
Tensor read_scene_image(const std::string& path, std::size_t height, std::size_t width, Dtype dtype = Dtype::Float32);

}  // namespace attn::data
