// Where a captioner looks on a rendered scene (data/scenes.hpp): for each word that names an
// object, the share of its attention that falls inside that object's gold mask, against the
// share of the picture the mask covers, which is what attention spread evenly over the picture
// would get (the chance level).
//
//   AttentionShareMeter meter;
//   meter.add_batch(batch, model.last_attention().to_array(), 8);   // teacher forced: [B, T, 64], an 8 x 8 grid
//   meter.add_generated(scene, words, weights);                     // a generated caption: weights [T, 8, 8]
//   meter.kind(SceneWordKind::Colour).share;    // mean share inside the mask, over captions
//   meter.kind(SceneWordKind::Colour).chance;   // mean share of the picture the masks cover
//   meter.kind(SceneWordKind::Colour).ratio();  // share / chance: 1 is no better than spreading evenly
//
// From cells to pixels. The attention is over an L x L grid of cells; the mask is over the
// H x W pixels. Here a cell's weight is spread evenly over the pixels of its cell (cell (r, c)
// covers pixel rows floor(r H / L) .. floor((r + 1) H / L) - 1, and the same for columns): the
// mass-preserving map, which says exactly what the weight says (this much of the context came
// from this cell) and nothing more. A bilinear or blurred upsampling (the paper's 16x upsampling
// with a Gaussian blur, viz/attention_overlay.hpp's bilinear) is a display choice: it moves
// weight across cell borders, so a word attending to the one cell that holds an object would
// be scored as partly outside it. (A CNN cell sees beyond its block, models/cnn_encoder.hpp; the
// measure credits a weight to the block the cell is centred on. It scores a_t as it is, whatever the
// gate beta_t that scales the context.) Attention spread evenly over the cells then gets exactly the
// mask's coverage when L divides H and W (as the CNN's 8 x 8 grid divides 64 x 64 pictures).
//
// Word kinds. Size, colour and shape words name an object (scene.word_objects): they are
// measured against that object's mask, and reported per kind. "a", "and" and the relation words
// ("above", "below", "left", "right", "of") name no object and have no gold mask of their own (a
// relation speaks of two objects at once); they are reported apart as kind Other, against the
// union of all the scene's objects: whether words that name nothing look at objects or at the
// background.
//
// Generated captions (generated_word_objects): a generated phrase "a SIZE COLOUR SHAPE" whose
// three words describe an object of the scene names that object (a scene never holds two objects
// of one description), wherever the phrase stands in the caption; its three words are measured
// against that object's mask. A size, colour or shape word outside such a phrase (a wrong colour,
// a phrase cut short) names no gold object: it is left out of the shares and counted in
// unmatched(). Matching whole phrases, not words at the gold caption's positions, because a
// caption can describe a scene correctly in another order ("B below A" for the gold "A above B").
//
// Hard attention: pass the distribution a_t (CaptionerOutput::weights, a hypothesis's "alpha")
// for where the model would look, or the one-hot cell it read (CaptionerOutput::used, "attention")
// for where it looked; in eval mode hard decoding reads the highest cell of a_t.
//
// Means: within a caption, the mean over its words of a kind; then the mean over the captions
// that have such words (each caption counts once, however many objects it names); ratio() is
// the mean share over the mean chance (a mean of per-word ratios would be led by the smallest
// masks, whose chance is tiny).
#pragma once

#include "../data/scene_captions.hpp"

#include <xtensor/xarray.hpp>
#include <xtensor/xtensor.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attn::models {

enum class SceneWordKind { Size, Colour, Shape, Other };
// What a caption word is: scene_sizes(), scene_colours(), scene_shapes(), else Other.
SceneWordKind scene_word_kind(const std::string& word);
const char* kind_name(SceneWordKind kind);  // "size", "colour", "shape", "other"

// Cell weights [rows, cols] spread over height x width pixels, each cell's weight evenly over
// the pixels of its cell (above): the total is kept. ShapeError unless 2-d with
// 1 <= rows <= height and 1 <= cols <= width.
xt::xtensor<double, 2> cell_weights_to_pixels(const xt::xarray<double>& cells, std::size_t height, std::size_t width);

// The share of cells [rows, cols] that falls inside mask [H, W] through that map, over the
// cells' total (a distribution need not be renormalised). ValueError for a negative or
// non-finite weight or a total of 0.
double attention_share(const xt::xarray<double>& cells, const xt::xtensor<bool, 2>& mask);

// The share of the picture the mask covers: its pixels over H * W (the chance level).
double mask_coverage(const xt::xtensor<bool, 2>& mask);

struct WordShare {
  std::size_t position = 0;   // in the caption
  std::string word;
  SceneWordKind kind = SceneWordKind::Other;
  std::int64_t object = -1;   // the object it names; -1 for an Other word (measured against all objects)
  double share = 0.0;         // of its weight inside the mask
  double chance = 0.0;        // the mask's coverage
};

// One caption's measured words. weights [T, rows, cols] with T >= words.size() (rows past the
// words, <eos> and padding, are ignored); objects: per word, the object it names (index into
// masks) or -1; masks: the scene's objects' gold regions [H, W]. Size, colour and shape words
// with object -1 are left out (see above). ShapeError or ValueError naming what does not fit.
std::vector<WordShare> caption_word_shares(const xt::xarray<double>& weights, const data::Tokens& words,
                                           const std::vector<std::int64_t>& objects,
                                           const std::vector<xt::xtensor<bool, 2>>& masks);

// A generated caption's words linked to the scene's objects (above): per word, the object its
// phrase names, or -1.
std::vector<std::int64_t> generated_word_objects(const data::Tokens& words, const data::Scene& scene);

// The shares of one kind of word over the captions measured.
struct KindShare {
  std::size_t words = 0;      // words of the kind measured
  std::size_t captions = 0;   // captions with at least one
  double share = 0.0;         // mean over captions of the caption's mean share
  double chance = 0.0;        // the same of the masks' coverage
  double ratio() const;       // share / chance; NaN with no words
};

class AttentionShareMeter {
 public:
  // One caption's measured words (caption_word_shares).
  void add(const std::vector<WordShare>& caption);
  // A teacher-forced batch: weights [B, T, rows * cols] (the captioner's attention at each
  // tgt_out position, e.g. last_attention() or CaptionerOutput::weights), over the batch's gold
  // captions and masks.
  void add_batch(const data::SceneBatch& batch, const xt::xarray<double>& weights, std::size_t rows);
  // A generated caption (its words without <bos> and <eos>) and its weights [T, rows, cols],
  // T >= words.size(), on `scene`.
  void add_generated(const data::Scene& scene, const data::Tokens& words, const xt::xarray<double>& weights);

  KindShare kind(SceneWordKind kind) const;
  KindShare object_words() const;  // size, colour and shape words together
  std::size_t captions() const { return captions_; }
  // Generated size, colour and shape words left out: they named no object of the scene.
  std::size_t unmatched() const { return unmatched_; }

 private:
  struct Sums {
    std::size_t words = 0, captions = 0;
    double share = 0.0, chance = 0.0;  // sums of per-caption means
  };
  KindShare summary(std::size_t slot) const;
  std::array<Sums, 5> sums_{};  // the four kinds, then object words together
  std::size_t captions_ = 0, unmatched_ = 0;
};

}  // namespace attn::models
