#include "../helpers.hpp"

#include <xtensor/xview.hpp>

#include <set>

using namespace attn::data;

namespace {

// Reads a caption back into objects: "red square top left , blue circle center".
std::vector<GridObject> read_caption(const Tokens& caption) {
  std::vector<GridObject> objects;
  std::vector<Tokens> phrases(1);
  for (const auto& w : caption) {
    if (w == ",") phrases.emplace_back();
    else phrases.back().push_back(w);
  }
  auto index_of = [](const Tokens& names, const std::string& w) {
    for (std::size_t k = 0; k < names.size(); ++k)
      if (names[k] == w) return k;
    FAIL("unknown word " << w);
    return std::size_t(0);
  };
  for (const Tokens& p : phrases) {
    REQUIRE(p.size() >= 3);
    GridObject o;
    o.colour = index_of(GridWorld::colours(), p[0]);
    o.shape = index_of(GridWorld::shapes(), p[1]);
    const Tokens where(p.begin() + 2, p.end());
    bool found = false;
    for (std::size_t cell = 0; cell < 9; ++cell)
      if (GridWorld::cell_words(cell) == where) o.cell = cell, found = true;
    REQUIRE(found);
    objects.push_back(o);
  }
  return objects;
}

// What a cell holds, read from its features by the nearest noise-free embedding:
// -1 for background, else colour * shapes + shape.
int read_cell(const GridWorld& world, const xt::xarray<double>& features, std::size_t cell) {
  const xt::xarray<double> x = xt::view(features, cell) - xt::view(world.position_embeddings(), cell);
  double best = xt::sum(xt::square(x - world.background_embedding()))();
  int what = -1;
  for (std::size_t c = 0; c < GridWorld::colours().size(); ++c)
    for (std::size_t s = 0; s < GridWorld::shapes().size(); ++s) {
      const double d = xt::sum(xt::square(x - xt::view(world.colour_embeddings(), c) -
                                          xt::view(world.shape_embeddings(), s)))();
      if (d < best) best = d, what = static_cast<int>(c * GridWorld::shapes().size() + s);
    }
  return what;
}

}  // namespace

TEST_CASE("a caption by hand") {
  std::vector<std::int64_t> cells;
  const Tokens caption = GridWorld::caption({{0, 0, 0}, {4, 2, 1}, {7, 3, 2}}, &cells);
  CHECK(join(caption) == "red square top left , blue circle center , yellow triangle bottom center");
  CHECK(cells == std::vector<std::int64_t>{0, 0, 0, 0, -1, 4, 4, 4, -1, 7, 7, 7, 7});
  CHECK(GridWorld::cell_words(5) == Tokens{"middle", "right"});
  CHECK_THROWS_AS(GridWorld::cell_words(9), attn::ValueError);
  CHECK_THROWS_WITH_SUBSTR(GridWorld::caption({{0, 4, 0}}), attn::ValueError, "colour 4");
}

TEST_CASE("captions and features agree with the objects in the grid") {
  GridOptions options;
  options.max_objects = 4;
  const GridWorld world(options);
  const Vocab vocab = GridWorld::caption_vocab();
  attn::Generator gen(21);
  std::set<std::size_t> counts;
  for (const GridExample& e : world.examples(300, gen)) {
    CHECK(e.features.shape() == std::vector<std::size_t>{9, 32});
    counts.insert(e.objects.size());
    CHECK(e.objects.size() >= 1);
    CHECK(e.objects.size() <= 4);
    // The caption names exactly the objects, in reading order.
    CHECK(read_caption(e.caption) == e.objects);
    CHECK_NOTHROW(vocab.encode(e.caption, /*strict=*/true));
    // Every word's gold cell is the cell of the object its phrase describes.
    REQUIRE(e.cells.size() == e.caption.size());
    std::size_t object = 0;
    for (std::size_t w = 0; w < e.caption.size(); ++w) {
      if (e.caption[w] == ",") {
        CHECK(e.cells[w] == -1);
        ++object;
      } else {
        CHECK(e.cells[w] == static_cast<std::int64_t>(e.objects[object].cell));
      }
    }
    // The features show each object where the caption says, and background elsewhere.
    std::vector<int> expected(9, -1);
    for (const auto& o : e.objects) expected[o.cell] = static_cast<int>(o.colour * 3 + o.shape);
    for (std::size_t cell = 0; cell < 9; ++cell) CHECK(read_cell(world, e.features, cell) == expected[cell]);
  }
  CHECK(counts.size() == 4);  // 1, 2, 3 and 4 objects all occur
}

TEST_CASE("the features are embeddings plus noise of the requested size") {
  GridOptions options;
  options.feature_dim = 8;
  options.noise = 0.0;
  const GridWorld world(options);
  attn::Generator gen(0);
  const GridExample e = world.example({{2, 1, 0}}, gen);
  const xt::xarray<double> cell2 = xt::view(world.position_embeddings(), 2) + xt::view(world.colour_embeddings(), 1) +
                                   xt::view(world.shape_embeddings(), 0);
  CHECK(xt::allclose(xt::view(e.features, 2), cell2, 0.0, 1e-15));
  const xt::xarray<double> cell0 = xt::view(world.position_embeddings(), 0) + world.background_embedding();
  CHECK(xt::allclose(xt::view(e.features, 0), cell0, 0.0, 1e-15));
  // With noise, the difference from the clean features has about the requested std.
  options.noise = 0.5;
  options.feature_dim = 400;
  const GridWorld noisy(options);
  const GridExample n = noisy.example({}, gen);
  const xt::xarray<double> diff = n.features - noisy.position_embeddings() - noisy.background_embedding();
  CHECK(xt::sqrt(xt::mean(xt::square(diff)))() == doctest::Approx(0.5).epsilon(0.05));
}

TEST_CASE("the same seeds give the same grids; the embedding seed fixes the world") {
  const GridWorld a, b;
  CHECK(a.colour_embeddings() == b.colour_embeddings());
  GridOptions other;
  other.embedding_seed = 8;
  CHECK(GridWorld(other).colour_embeddings() != a.colour_embeddings());
  attn::Generator g1(5), g2(5), g3(6);
  const auto x1 = a.examples(20, g1), x2 = a.examples(20, g2), x3 = a.examples(20, g3);
  bool all_same = true, any_different = false;
  for (std::size_t i = 0; i < 20; ++i) {
    all_same = all_same && x1[i].caption == x2[i].caption && x1[i].features == x2[i].features;
    any_different = any_different || x1[i].caption != x3[i].caption;
  }
  CHECK(all_same);
  CHECK(any_different);
}

TEST_CASE("no test grid holds the same objects as a training grid") {
  const GridWorld world;
  attn::Generator gen(22);
  const GridSplit split = world.split(1000, 100, gen);
  CHECK(split.train.size() == 1000);
  CHECK(split.test.size() == 100);
  std::set<std::vector<GridObject>> held_out;
  for (const auto& e : split.test) held_out.insert(e.objects);
  CHECK(held_out.size() == 100);
  for (const auto& e : split.train) CHECK(held_out.count(e.objects) == 0);
  // One object: only 9 cells x 12 kinds = 108 grids exist.
  GridOptions one;
  one.max_objects = 1;
  CHECK_THROWS_WITH_SUBSTR(GridWorld(one).split(10, 108, gen), attn::ValueError, "could not draw");
}

TEST_CASE("bad grid options and objects are rejected") {
  GridOptions options;
  options.max_objects = 10;
  CHECK_THROWS_WITH_SUBSTR(GridWorld{options}, attn::ValueError, "max_objects <= 9");
  options = {};
  options.feature_dim = 0;
  CHECK_THROWS_AS(GridWorld{options}, attn::ValueError);
  const GridWorld world;
  attn::Generator gen(0);
  CHECK_THROWS_WITH_SUBSTR(world.example({{3, 0, 0}, {3, 1, 1}}, gen), attn::ValueError, "cell 3");
  CHECK_THROWS_AS(world.example({{9, 0, 0}}, gen), attn::ValueError);
}
