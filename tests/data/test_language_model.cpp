// Text for a language model (data/language_model.hpp): documents as streams, chunks that overlap by
// one token, batches whose targets are the inputs shifted by one, bad input.
#include "../helpers.hpp"

#include "data/language_model.hpp"

using attn::Index;
using attn::data::Tokens;
namespace data = attn::data;

TEST_CASE("document_streams: sentences joined, each ended by <eos>") {
  data::Document d;
  d.sentences = {{"a", "b"}, {"c"}};
  data::Document e;
  e.sentences = {{"d"}};
  const std::vector<Tokens> s = data::document_streams({d, e});
  REQUIRE(s.size() == 2);
  CHECK(s[0] == Tokens{"a", "b", "<eos>", "c", "<eos>"});
  CHECK(s[1] == Tokens{"d", "<eos>"});
}

TEST_CASE("lm_chunks: length + 1 tokens, one shared between neighbours, every token but the first a target once") {
  const Tokens stream = {"t0", "t1", "t2", "t3", "t4", "t5", "t6"};
  const std::vector<Tokens> c = data::lm_chunks({stream, {"alone"}, {"x", "y"}}, 3);
  REQUIRE(c.size() == 3);
  CHECK(c[0] == Tokens{"t0", "t1", "t2", "t3"});
  CHECK(c[1] == Tokens{"t3", "t4", "t5", "t6"});
  CHECK(c[2] == Tokens{"x", "y"});  // a stream of one token gives none
  // ceil((n - 1) / length) chunks, the last one shorter; predictions add up to n - 1.
  for (std::size_t n = 2; n < 12; ++n)
    for (std::size_t length = 1; length < 6; ++length) {
      Tokens s;
      for (std::size_t i = 0; i < n; ++i) s.push_back("w" + std::to_string(i));
      const std::vector<Tokens> chunks = data::lm_chunks({s}, length);
      CHECK(chunks.size() == (n - 1 + length - 1) / length);
      std::size_t predictions = 0;
      for (const Tokens& k : chunks) {
        CHECK(k.size() >= 2);
        CHECK(k.size() <= length + 1);
        predictions += k.size() - 1;
      }
      CHECK(predictions == n - 1);
    }
  CHECK_THROWS_WITH_SUBSTR(data::lm_chunks({stream}, 0), attn::ValueError, "lm_chunks: length must be at least 1");
}

TEST_CASE("make_lm_batch: targets are the inputs shifted by one, <pad> after each chunk's end") {
  const data::Vocab v = data::Vocab::build({{"a", "b", "c"}});
  const std::vector<Tokens> chunks = {{"a", "b", "c", "a"}, {"c", "zzz"}};
  const data::LMBatch b = data::make_lm_batch(chunks, {1, 0}, v);
  const std::int64_t a = v.id("a"), bb = v.id("b"), c = v.id("c");
  CHECK(b.inputs == Index{{c, 0, 0}, {a, bb, c}});
  CHECK(b.targets == Index{{data::Vocab::unk_id, 0, 0}, {bb, c, a}});
  CHECK(b.lengths == std::vector<std::size_t>{1, 3});
  CHECK(b.indices == std::vector<std::size_t>{1, 0});
  CHECK(b.size() == 2);
  CHECK_THROWS_WITH_SUBSTR(data::make_lm_batch(chunks, {}, v), attn::ValueError, "no chunk given");
  CHECK_THROWS_WITH_SUBSTR(data::make_lm_batch(chunks, {2}, v), attn::ValueError, "chunk index 2 is out of range (2 chunks)");
  CHECK_THROWS_WITH_SUBSTR(data::make_lm_batch({{"a"}}, {0}, v), attn::ValueError, "chunk 0 has 1 token(s)");
}

TEST_CASE("make_lm_batches: every chunk once per epoch, reproducible from the generator") {
  const data::Vocab v = data::Vocab::build({{"a", "b"}});
  std::vector<Tokens> chunks;
  for (std::size_t i = 0; i < 7; ++i) chunks.push_back(Tokens(2 + i % 3, "a"));
  attn::Generator g1(3), g2(3);
  const auto one = data::make_lm_batches(chunks, v, {3, true}, g1);
  const auto two = data::make_lm_batches(chunks, v, {3, true}, g2);
  REQUIRE(one.size() == 3);
  std::vector<int> seen(7, 0);
  for (std::size_t k = 0; k < one.size(); ++k) {
    CHECK(one[k].indices == two[k].indices);
    for (std::size_t i : one[k].indices) ++seen[i];
  }
  CHECK(seen == std::vector<int>(7, 1));
}
