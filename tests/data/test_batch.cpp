#include "../helpers.hpp"

#include <xtensor/xview.hpp>

#include <set>

using namespace attn::data;
using attn::Index;

namespace {
std::vector<std::int64_t> ids(std::initializer_list<std::int64_t> v) { return v; }

std::vector<Example> pairs() {
  return {{split_whitespace("le chat"), split_whitespace("the cat"), {}},
          {split_whitespace("un chien noir mange"), split_whitespace("a black dog eats"), {}},
          {split_whitespace("il pleut"), split_whitespace("it rains"), {}}};
}

// How many <pad> a list of batches carries in its sources.
std::size_t padding(const std::vector<Batch>& batches) {
  std::size_t n = 0;
  for (const auto& b : batches)
    for (std::size_t len : b.src_lengths) n += b.src.shape(1) - len;
  return n;
}
}  // namespace

TEST_CASE("a batch by hand: padding, <bos>, <eos> and lengths") {
  const auto examples = pairs();
  const Vocab src = Vocab::build(sources(examples)), tgt = Vocab::build(targets(examples));
  const Batch b = make_batch(examples, {0, 1}, src, tgt);
  CHECK(b.size() == 2);
  CHECK(b.src.shape() == std::vector<std::size_t>{2, 4});
  CHECK(b.src_lengths == std::vector<std::size_t>{2, 4});
  CHECK(row_ids(b.src, 0) == ids({src.id("le"), src.id("chat"), 0, 0}));
  CHECK(row_ids(b.src, 1) == src.encode(examples[1].src));
  CHECK(b.tgt_in.shape() == std::vector<std::size_t>{2, 5});  // longest target + 1
  CHECK(row_ids(b.tgt_in, 0) == ids({Vocab::bos_id, tgt.id("the"), tgt.id("cat"), 0, 0}));
  CHECK(row_ids(b.tgt_out, 0) == ids({tgt.id("the"), tgt.id("cat"), Vocab::eos_id, 0, 0}));
  CHECK(row_ids(b.tgt_out, 1).back() == Vocab::eos_id);
  CHECK(b.tgt_lengths == std::vector<std::size_t>{3, 5});
  CHECK(tgt.decode(row_ids(b.tgt_out, 1)) == examples[1].tgt);
  CHECK(tgt.decode(row_ids(b.tgt_in, 1)) == examples[1].tgt);
  CHECK_FALSE(b.has_alignment());
  CHECK(b.indices == std::vector<std::size_t>{0, 1});
  CHECK(make_batch(examples, src, tgt).size() == 3);
  // tgt_in is tgt_out shifted right by one: step t reads y_{t-1} and predicts y_t.
  for (std::size_t r = 0; r < b.size(); ++r)
    for (std::size_t t = 1; t < b.tgt_lengths[r]; ++t) CHECK(b.tgt_in(r, t) == b.tgt_out(r, t - 1));
}

TEST_CASE("unknown tokens become <unk> in a batch") {
  const auto examples = pairs();
  const Vocab small({"le"});
  const Batch b = make_batch(examples, {0}, small, small);
  CHECK(row_ids(b.src, 0) == ids({4, Vocab::unk_id}));
  CHECK(row_ids(b.tgt_out, 0) == ids({Vocab::unk_id, Vocab::unk_id, Vocab::eos_id}));
}

TEST_CASE("gold alignments are batched with -1 at <eos> and padding") {
  const std::vector<Example> examples = {reverse_example({"3", "1", "4"}), reverse_example({"5", "9"})};
  const Vocab vocab = task_vocab(10);
  const Batch b = make_batch(examples, vocab, vocab);
  REQUIRE(b.has_alignment());
  CHECK(b.alignment.shape() == std::vector<std::size_t>{2, 4});
  CHECK(row_ids(b.alignment, 0) == ids({2, 1, 0, -1}));
  CHECK(row_ids(b.alignment, 1) == ids({1, 0, -1, -1}));
  // The source token at the gold position is the target token.
  for (std::size_t r = 0; r < 2; ++r)
    for (std::size_t t = 0; t < 4; ++t)
      if (b.alignment(r, t) >= 0) CHECK(b.src(r, static_cast<std::size_t>(b.alignment(r, t))) == b.tgt_out(r, t));
  // Dates: the dashes align with nothing.
  const Batch d = make_batch({date_example({2021, 3, 3}, "%Y.%m.%d")}, date_source_vocab(), date_target_vocab());
  CHECK(row_ids(d.alignment, 0) == ids({0, 1, 2, 3, -1, 5, 6, -1, 8, 9, -1}));
}

TEST_CASE("bad batches are rejected") {
  const auto examples = pairs();
  const Vocab v = Vocab::build(sources(examples));
  CHECK_THROWS_WITH_SUBSTR(make_batch(examples, {}, v, v), attn::ValueError, "at least one example");
  CHECK_THROWS_WITH_SUBSTR(make_batch(examples, {0, 3}, v, v), attn::ValueError, "index 3 is out of range for 3");
  CHECK_THROWS_WITH_SUBSTR(make_batch({{{}, {"a"}, {}}}, v, v), attn::ValueError, "empty source");
  // One example has an alignment of the wrong length.
  std::vector<Example> bad = {reverse_example({"1", "2"}), {{"1", "2"}, {"2", "1"}, {0}}};
  CHECK_THROWS_WITH_SUBSTR(make_batch(bad, v, v), attn::ValueError, "1 alignment entries for 2 target tokens");
  attn::Generator gen(0);
  CHECK_THROWS_WITH_SUBSTR(make_batches(examples, v, v, 0, true, gen), attn::ValueError, "batch_size >= 1");
  CHECK_THROWS_AS(row_ids(Index({1, 2}), 0), attn::ShapeError);
}

TEST_CASE("an epoch covers every example once; the last batch may be short") {
  attn::Generator gen(1);
  const auto examples = copy_task(103, {}, gen);
  const Vocab v = task_vocab(10);
  const auto batches = make_batches(examples, v, v, 10, true, gen);
  REQUIRE(batches.size() == 11);
  std::multiset<std::size_t> seen;
  for (std::size_t k = 0; k < batches.size(); ++k) {
    CHECK(batches[k].size() == (k < 10 ? 10u : 3u));
    for (std::size_t r = 0; r < batches[k].size(); ++r) {
      const std::size_t i = batches[k].indices[r];
      seen.insert(i);
      CHECK(batches[k].src_lengths[r] == examples[i].src.size());
      CHECK(v.decode(row_ids(batches[k].tgt_out, r)) == examples[i].tgt);
    }
  }
  CHECK(seen.size() == 103);
  CHECK(std::set<std::size_t>(seen.begin(), seen.end()).size() == 103);
  BatchOptions drop;
  drop.batch_size = 10;
  drop.drop_last = true;
  CHECK(make_batches(examples, v, v, drop, gen).size() == 10);
}

TEST_CASE("shuffling is reproducible from the seed and differs across seeds and epochs") {
  attn::Generator data(2);
  const auto examples = sort_task(50, {}, data);
  const Vocab v = task_vocab(10);
  auto order = [&](attn::Generator& gen) {
    std::vector<std::size_t> o;
    for (const auto& b : make_batches(examples, v, v, 8, true, gen)) o.insert(o.end(), b.indices.begin(), b.indices.end());
    return o;
  };
  attn::Generator a(7), b(7), c(8);
  const auto first = order(a);
  CHECK(first == order(b));
  CHECK(first != order(c));
  CHECK(first != order(a));  // the next epoch comes in another order
  std::vector<std::size_t> identity(50);
  std::iota(identity.begin(), identity.end(), 0);
  CHECK(first != identity);
  attn::Generator d(7);
  std::vector<std::size_t> plain;
  for (const auto& batch : make_batches(examples, v, v, 8, false, d))
    plain.insert(plain.end(), batch.indices.begin(), batch.indices.end());
  CHECK(plain == identity);  // no shuffle: the given order
}

TEST_CASE("sorting within buckets groups similar lengths and cuts padding") {
  attn::Generator gen(3);
  SequenceTaskOptions lengths;
  lengths.min_length = 1;
  lengths.max_length = 30;
  const auto examples = reverse_task(640, lengths, gen);
  const Vocab v = task_vocab(10);
  BatchOptions plain, sorted;
  plain.batch_size = sorted.batch_size = 16;
  sorted.sort_buckets = 10;
  const auto a = make_batches(examples, v, v, plain, gen), b = make_batches(examples, v, v, sorted, gen);
  CHECK(a.size() == 40);
  CHECK(b.size() == 40);
  MESSAGE("padding without sorting " << padding(a) << ", sorted in buckets of 10 batches " << padding(b));
  CHECK(padding(b) * 4 < padding(a));
  // Without shuffling and one bucket for everything, batches come shortest first.
  sorted.shuffle = false;
  sorted.sort_buckets = 100;
  const auto c = make_batches(examples, v, v, sorted, gen);
  for (std::size_t k = 1; k < c.size(); ++k)
    CHECK(*std::min_element(c[k].src_lengths.begin(), c[k].src_lengths.end()) >=
          *std::max_element(c[k - 1].src_lengths.begin(), c[k - 1].src_lengths.end()));
  // Sorted batching is reproducible too.
  sorted = {};
  sorted.sort_buckets = 4;
  attn::Generator g1(9), g2(9);
  const auto x = make_batches(examples, v, v, sorted, g1), y = make_batches(examples, v, v, sorted, g2);
  for (std::size_t k = 0; k < x.size(); ++k) CHECK(x[k].indices == y[k].indices);
}

TEST_CASE("grid batches stack features and captions") {
  GridOptions options;
  options.feature_dim = 6;
  const GridWorld world(options);
  attn::Generator gen(4);
  const auto examples = world.examples(7, gen);
  const Vocab vocab = GridWorld::caption_vocab();
  BatchOptions batching;
  batching.batch_size = 4;
  const auto batches = make_grid_batches(examples, vocab, batching, gen);
  REQUIRE(batches.size() == 2);
  const GridBatch& b = batches[0];
  CHECK(b.features.shape() == attn::Shape{4, 9, 6});
  CHECK(b.features.dtype() == attn::Dtype::Float64);
  for (std::size_t r = 0; r < b.size(); ++r) {
    const GridExample& e = examples[b.indices[r]];
    CHECK(xt::view(b.features.data<double>(), r) == e.features);
    CHECK(vocab.decode(row_ids(b.tgt_out, r)) == e.caption);
    CHECK(b.tgt_in(r, 0) == Vocab::bos_id);
    CHECK(b.tgt_lengths[r] == e.caption.size() + 1);
    for (std::size_t t = 0; t < e.caption.size(); ++t) CHECK(b.cells(r, t) == e.cells[t]);
    CHECK(b.cells(r, e.caption.size()) == -1);  // <eos>
  }
  const GridBatch f = make_grid_batch(examples, {0, 1}, vocab, attn::Dtype::Float32);
  CHECK(f.features.dtype() == attn::Dtype::Float32);
  GridExample odd = examples[0];
  odd.features = xt::zeros<double>({9, 5});
  CHECK_THROWS_WITH_SUBSTR(make_grid_batch({examples[0], odd}, {0, 1}, vocab), attn::ShapeError, "[9, 6]");
}
