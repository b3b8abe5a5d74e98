#include "../helpers.hpp"

#include <algorithm>
#include <set>

using namespace attn::data;

namespace {
// Every target token is the source token its alignment points at.
void check_alignment(const Example& e) {
  REQUIRE(e.alignment.size() == e.tgt.size());
  for (std::size_t t = 0; t < e.tgt.size(); ++t) {
    REQUIRE(e.alignment[t] >= 0);
    REQUIRE(e.alignment[t] < static_cast<std::int64_t>(e.src.size()));
    CHECK(e.tgt[t] == e.src[static_cast<std::size_t>(e.alignment[t])]);
  }
}
bool is_permutation_of_positions(const std::vector<std::int64_t>& alignment) {
  std::vector<std::int64_t> sorted = alignment;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<std::int64_t>(i)) return false;
  return true;
}
}  // namespace

TEST_CASE("the gold examples of copy, reverse and sort, by hand") {
  const Tokens src = {"3", "1", "4", "1", "5"};
  const Example c = copy_example(src);
  CHECK(c.tgt == src);
  CHECK(c.alignment == std::vector<std::int64_t>{0, 1, 2, 3, 4});
  const Example r = reverse_example(src);
  CHECK(r.tgt == Tokens{"5", "1", "4", "1", "3"});
  CHECK(r.alignment == std::vector<std::int64_t>{4, 3, 2, 1, 0});
  const Example s = sort_example(src);
  CHECK(s.tgt == Tokens{"1", "1", "3", "4", "5"});
  CHECK(s.alignment == std::vector<std::int64_t>{1, 3, 0, 2, 4});  // equal 1s keep their order
  // Numbers sort as numbers, not as strings: 10 comes after 9.
  CHECK(sort_example({"10", "9", "0"}).tgt == Tokens{"0", "9", "10"});
  CHECK_THROWS_WITH_SUBSTR(sort_example({"3", "x"}), attn::ValueError, "'x'");
  CHECK(make_example(SequenceTask::reverse, src).tgt == r.tgt);
}

TEST_CASE("task names round trip") {
  for (auto task : {SequenceTask::copy, SequenceTask::reverse, SequenceTask::sort})
    CHECK(sequence_task_from_name(task_name(task)) == task);
  CHECK_THROWS_WITH_SUBSTR(sequence_task_from_name("shuffle"), attn::ValueError, "'shuffle'");
}

TEST_CASE("random examples are correct and respect the options") {
  SequenceTaskOptions options;
  options.vocab_size = 7;
  options.min_length = 3;
  options.max_length = 12;
  attn::Generator gen(5);
  const Vocab vocab = task_vocab(options.vocab_size);
  CHECK(vocab.size() == 4 + 7);
  CHECK(vocab.id("0") == 4);
  CHECK(vocab.id("6") == 10);
  std::set<std::size_t> lengths;
  for (auto task : {SequenceTask::copy, SequenceTask::reverse, SequenceTask::sort}) {
    for (const Example& e : sequence_task(task, 300, options, gen)) {
      lengths.insert(e.src.size());
      CHECK(e.src.size() >= 3);
      CHECK(e.src.size() <= 12);
      CHECK(e.tgt.size() == e.src.size());
      CHECK_NOTHROW(vocab.encode(e.src, /*strict=*/true));  // only the task's symbols
      check_alignment(e);
      CHECK(is_permutation_of_positions(e.alignment));
      if (task == SequenceTask::copy) CHECK(e.tgt == e.src);
      if (task == SequenceTask::reverse) CHECK(e.tgt == Tokens(e.src.rbegin(), e.src.rend()));
      if (task == SequenceTask::sort) {
        auto number = [](const std::string& s) { return std::stoi(s); };
        CHECK(std::is_sorted(e.tgt.begin(), e.tgt.end(),
                             [&](const std::string& a, const std::string& b) { return number(a) < number(b); }));
        CHECK(std::is_permutation(e.tgt.begin(), e.tgt.end(), e.src.begin()));
      }
    }
  }
  CHECK(lengths.size() == 10);  // every length from 3 to 12 occurs
  CHECK(copy_task(2, options, gen).size() == 2);
  CHECK(sort_task(3, options, gen).size() == 3);
}

TEST_CASE("a fixed length gives every example that length") {
  SequenceTaskOptions options;
  options.min_length = options.max_length = 25;
  attn::Generator gen(1);
  for (const Example& e : sort_task(20, options, gen)) CHECK(e.src.size() == 25);
}

TEST_CASE("tasks are reproducible from the seed and differ across seeds") {
  SequenceTaskOptions options;
  attn::Generator a(42), b(42), c(43);
  const auto xa = reverse_task(50, options, a), xb = reverse_task(50, options, b), xc = reverse_task(50, options, c);
  CHECK(sources(xa) == sources(xb));
  CHECK(targets(xa) == targets(xb));
  CHECK(sources(xa) != sources(xc));
}

TEST_CASE("train and test share no source") {
  SequenceTaskOptions options;
  options.vocab_size = 4;
  options.min_length = 2;
  options.max_length = 4;  // 16 + 64 + 256 = 336 possible sources
  attn::Generator gen(3);
  const Split split = sequence_split(SequenceTask::sort, 2000, 100, options, gen);
  CHECK(split.train.size() == 2000);
  CHECK(split.test.size() == 100);
  std::set<Tokens> test_sources;
  for (const auto& e : split.test) test_sources.insert(e.src);
  CHECK(test_sources.size() == 100);  // distinct
  for (const auto& e : split.train) CHECK(test_sources.count(e.src) == 0);
  for (const auto& e : split.test) check_alignment(e);
  // 336 sources cannot give 336 test examples and a training set as well.
  CHECK_THROWS_WITH_SUBSTR(sequence_split(SequenceTask::copy, 10, 336, options, gen), attn::ValueError, "336 distinct");
  CHECK_NOTHROW(sequence_split(SequenceTask::copy, 0, 336, options, gen));
}

TEST_CASE("bad options are rejected") {
  attn::Generator gen(0);
  SequenceTaskOptions options;
  options.min_length = 5;
  options.max_length = 4;
  CHECK_THROWS_WITH_SUBSTR(copy_task(1, options, gen), attn::ValueError, "min_length <= max_length");
  options = {};
  options.vocab_size = 0;
  CHECK_THROWS_AS(copy_task(1, options, gen), attn::ValueError);
  options = {};
  options.min_length = 0;
  CHECK_THROWS_AS(sequence_split(SequenceTask::copy, 1, 1, options, gen), attn::ValueError);
}
