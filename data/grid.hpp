// Captioned feature grids for chapter 4 (Show, Attend and Tell) without a CNN.
//
// An "image" is a 3x3 grid of D-dim feature vectors, as if a trained CNN had
// looked at it. Cell k (row k / 3, column k % 3) holds either an object, a
// coloured shape, or background; its feature vector is
//     position[k] + colour[c] + shape[s] + noise      (an object)
//     position[k] + background + noise                (empty)
// with fixed random embeddings drawn from `embedding_seed`: the position part
// lets a model tell where the cell it attends to is. The caption names what
// stands where, in reading order:
//
//     "red square top left , blue circle center"
//
// and every caption word has a gold cell, the one it describes (-1 for ",").
#pragma once

#include "../core/random.hpp"
#include "vocab.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attn::data {

struct GridOptions {
  std::size_t feature_dim = 32;       // D
  double noise = 0.1;                 // std of the Gaussian noise on every feature
  std::size_t min_objects = 1;        // objects per grid, drawn uniformly
  std::size_t max_objects = 3;        // (at most 9)
  std::uint64_t embedding_seed = 7;   // fixes the embeddings: the same "CNN" for train and test
};

struct GridObject {
  std::size_t cell = 0;    // 0..8, reading order
  std::size_t colour = 0;  // index into GridWorld::colours()
  std::size_t shape = 0;   // index into GridWorld::shapes()
  bool operator==(const GridObject& o) const { return cell == o.cell && colour == o.colour && shape == o.shape; }
  bool operator<(const GridObject& o) const { return cell != o.cell ? cell < o.cell : colour != o.colour ? colour < o.colour : shape < o.shape; }
};

struct GridExample {
  xt::xarray<double> features;       // [9, D]
  std::vector<GridObject> objects;   // sorted by cell
  Tokens caption;
  std::vector<std::int64_t> cells;   // the gold cell of each caption word, -1 for ","
};

struct GridSplit {
  std::vector<GridExample> train;
  std::vector<GridExample> test;
};

class GridWorld {
 public:
  explicit GridWorld(const GridOptions& options = {});

  static const Tokens& colours();  // red green blue yellow
  static const Tokens& shapes();   // square circle triangle
  // Where a cell is, in words: {"top", "left"}, ..., {"center"}, ..., {"bottom", "right"}.
  static Tokens cell_words(std::size_t cell);
  // The caption of a set of objects (sorted by cell), and the gold cell of each word.
  static Tokens caption(const std::vector<GridObject>& objects, std::vector<std::int64_t>* cells = nullptr);
  // Every word a caption can use.
  static Vocab caption_vocab();

  // The features [9, D] of a grid holding `objects`, with fresh noise.
  xt::xarray<double> render(const std::vector<GridObject>& objects, Generator& gen) const;
  GridExample example(std::vector<GridObject> objects, Generator& gen) const;
  GridExample sample(Generator& gen) const;  // random objects
  std::vector<GridExample> examples(std::size_t n, Generator& gen) const;
  // No test grid has the same objects as a training grid.
  GridSplit split(std::size_t n_train, std::size_t n_test, Generator& gen) const;

  const GridOptions& options() const { return options_; }
  // The noise-free embeddings, e.g. to check what a cell holds.
  const xt::xarray<double>& position_embeddings() const { return position_; }  // [9, D]
  const xt::xarray<double>& colour_embeddings() const { return colour_; }      // [colours, D]
  const xt::xarray<double>& shape_embeddings() const { return shape_; }        // [shapes, D]
  const xt::xarray<double>& background_embedding() const { return background_; }  // [D]

 private:
  std::vector<GridObject> random_objects(Generator& gen) const;
  GridOptions options_;
  xt::xarray<double> position_, colour_, shape_, background_;
};

// "red square top left , blue circle center" -> the objects it places, sorted;
// ValueError naming the word that does not fit (colours, shapes and cells are listed).
std::vector<GridObject> parse_scene(const std::string& text);

}  // namespace attn::data
