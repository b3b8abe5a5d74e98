#include "grid.hpp"

#include "corpus.hpp"  // to_lower
#include "../core/errors.hpp"

#include <xtensor/xview.hpp>

#include <algorithm>
#include <numeric>
#include <set>

namespace attn::data {

namespace {
constexpr std::size_t n_cells = 9;

xt::xarray<double> normal(const Shape& shape, Generator& gen) {
  xt::xarray<double> values = xt::xarray<double>::from_shape(shape);
  for (auto& v : values) v = gen.normal();
  return values;
}
}  // namespace

GridWorld::GridWorld(const GridOptions& options) : options_(options) {
  const std::size_t d = options.feature_dim;
  if (d == 0 || options.noise < 0 || options.min_objects > options.max_objects || options.max_objects > n_cells)
    throw ValueError("GridWorld: expected feature_dim >= 1, noise >= 0 and min_objects <= max_objects <= 9, got " +
                     std::to_string(d) + ", " + std::to_string(options.noise) + ", " +
                     std::to_string(options.min_objects) + ", " + std::to_string(options.max_objects));
  Generator gen(options.embedding_seed);
  position_ = normal({n_cells, d}, gen);
  colour_ = normal({colours().size(), d}, gen);
  shape_ = normal({shapes().size(), d}, gen);
  background_ = normal({d}, gen);
}

const Tokens& GridWorld::colours() {
  static const Tokens names = {"red", "green", "blue", "yellow"};
  return names;
}

const Tokens& GridWorld::shapes() {
  static const Tokens names = {"square", "circle", "triangle"};
  return names;
}

Tokens GridWorld::cell_words(std::size_t cell) {
  if (cell >= n_cells) throw ValueError("GridWorld::cell_words: cell " + std::to_string(cell) + " is not in 0..8");
  if (cell == 4) return {"center"};
  static const char* const rows[] = {"top", "middle", "bottom"};
  static const char* const columns[] = {"left", "center", "right"};
  return {rows[cell / 3], columns[cell % 3]};
}

Tokens GridWorld::caption(const std::vector<GridObject>& objects, std::vector<std::int64_t>* cells) {
  Tokens words;
  std::vector<std::int64_t> gold;
  for (std::size_t i = 0; i < objects.size(); ++i) {
    const GridObject& o = objects[i];
    if (o.colour >= colours().size() || o.shape >= shapes().size())
      throw ValueError("GridWorld::caption: object " + std::to_string(i) + " has colour " + std::to_string(o.colour) +
                       " and shape " + std::to_string(o.shape) + ", expected < " + std::to_string(colours().size()) +
                       " and < " + std::to_string(shapes().size()));
    if (i > 0) {
      words.push_back(",");
      gold.push_back(-1);
    }
    Tokens phrase = {colours()[o.colour], shapes()[o.shape]};  // "red square top left"
    for (auto& w : cell_words(o.cell)) phrase.push_back(w);
    for (auto& w : phrase) {
      words.push_back(w);
      gold.push_back(static_cast<std::int64_t>(o.cell));
    }
  }
  if (cells) *cells = gold;
  return words;
}

Vocab GridWorld::caption_vocab() {
  Vocab v(colours());
  for (const auto& s : shapes()) v.add(s);
  for (std::size_t cell = 0; cell < n_cells; ++cell)
    for (const auto& w : cell_words(cell)) v.add(w);
  v.add(",");
  return v;
}

xt::xarray<double> GridWorld::render(const std::vector<GridObject>& objects, Generator& gen) const {
  const std::size_t d = options_.feature_dim;
  xt::xarray<double> features = position_ + options_.noise * normal({n_cells, d}, gen);  // [9, D]
  std::vector<bool> filled(n_cells, false);
  for (const GridObject& o : objects) {
    if (o.cell >= n_cells || filled[o.cell])
      throw ValueError("GridWorld::render: cell " + std::to_string(o.cell) + " is out of 0..8 or holds two objects");
    filled[o.cell] = true;
    xt::view(features, o.cell) += xt::view(colour_, o.colour) + xt::view(shape_, o.shape);
  }
  for (std::size_t k = 0; k < n_cells; ++k)
    if (!filled[k]) xt::view(features, k) += background_;
  return features;
}

GridExample GridWorld::example(std::vector<GridObject> objects, Generator& gen) const {
  std::sort(objects.begin(), objects.end());
  GridExample e;
  e.caption = caption(objects, &e.cells);  // checks colours and shapes
  e.features = render(objects, gen);
  e.objects = std::move(objects);
  return e;
}

std::vector<GridObject> GridWorld::random_objects(Generator& gen) const {
  const auto count = static_cast<std::size_t>(gen.randint(static_cast<std::int64_t>(options_.min_objects),
                                                          static_cast<std::int64_t>(options_.max_objects) + 1));
  std::vector<std::size_t> cells(n_cells);
  std::iota(cells.begin(), cells.end(), 0);
  for (std::size_t i = 0; i < count; ++i)  // the first `count` steps of a Fisher-Yates shuffle
    std::swap(cells[i], cells[static_cast<std::size_t>(gen.randint(static_cast<std::int64_t>(i), n_cells))]);
  std::vector<GridObject> objects;
  for (std::size_t i = 0; i < count; ++i)
    objects.push_back({cells[i], static_cast<std::size_t>(gen.randint(0, static_cast<std::int64_t>(colours().size()))),
                       static_cast<std::size_t>(gen.randint(0, static_cast<std::int64_t>(shapes().size())))});
  std::sort(objects.begin(), objects.end());
  return objects;
}

GridExample GridWorld::sample(Generator& gen) const { return example(random_objects(gen), gen); }

std::vector<GridExample> GridWorld::examples(std::size_t n, Generator& gen) const {
  std::vector<GridExample> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(sample(gen));
  return out;
}

GridSplit GridWorld::split(std::size_t n_train, std::size_t n_test, Generator& gen) const {
  // Rejection sampling, bounded so that an impossible request fails instead of hanging.
  const std::size_t max_tries = 1000 * (n_train + n_test) + 100000;
  std::size_t tries = 0;
  auto draw = [&] {
    if (++tries > max_tries)
      throw ValueError("GridWorld::split: could not draw " + std::to_string(n_test) +
                       " distinct test grids plus a training set; allow more objects per grid");
    return random_objects(gen);
  };
  GridSplit split;
  std::set<std::vector<GridObject>> held_out;
  while (held_out.size() < n_test) {
    auto objects = draw();
    if (held_out.insert(objects).second) split.test.push_back(example(objects, gen));
  }
  while (split.train.size() < n_train) {
    auto objects = draw();
    if (!held_out.count(objects)) split.train.push_back(example(objects, gen));
  }
  return split;
}

std::vector<GridObject> parse_scene(const std::string& text) {
  std::string spaced;
  for (char ch : text) spaced += ch == ',' ? std::string(" , ") : std::string(1, ch);
  const Tokens words = split_whitespace(to_lower(spaced));
  const auto& colours = GridWorld::colours();
  const auto& shapes = GridWorld::shapes();
  const std::string help =
      " (a scene is written as a caption: COLOUR SHAPE PLACE[, ...], colours: red green blue yellow, shapes: "
      "square circle triangle, places: top left, top center, ..., center, ..., bottom right)";
  std::vector<GridObject> objects;
  std::size_t i = 0;
  while (i < words.size()) {
    GridObject o;
    const auto colour = std::find(colours.begin(), colours.end(), words[i]);
    if (colour == colours.end()) throw ValueError("scene: '" + words[i] + "' is not a colour" + help);
    if (++i == words.size()) throw ValueError("scene: a shape must follow '" + words[i - 1] + "'" + help);
    const auto shape = std::find(shapes.begin(), shapes.end(), words[i]);
    if (shape == shapes.end()) throw ValueError("scene: '" + words[i] + "' is not a shape" + help);
    Tokens place;
    for (++i; i < words.size() && words[i] != ","; ++i) place.push_back(words[i]);
    if (i < words.size()) ++i;  // the ","
    o.colour = static_cast<std::size_t>(colour - colours.begin());
    o.shape = static_cast<std::size_t>(shape - shapes.begin());
    o.cell = 9;
    for (std::size_t cell = 0; cell < 9; ++cell)
      if (GridWorld::cell_words(cell) == place) o.cell = cell;
    if (o.cell == 9) throw ValueError("scene: '" + join(place, " ") + "' is not a place in the grid" + help);
    for (const auto& other : objects)
      if (other.cell == o.cell) throw ValueError("scene: two objects at '" + join(place, " ") + "'");
    objects.push_back(o);
  }
  if (objects.empty()) throw ValueError("scene: empty" + help);
  std::sort(objects.begin(), objects.end());
  return objects;
}

}  // namespace attn::data
