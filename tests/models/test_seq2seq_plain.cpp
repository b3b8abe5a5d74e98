// Chapter 1's encoder-decoder without attention: gradients end to end, step()
// against forward(), padding, float32, bad inputs.
#include "tiny.hpp"

#include "models/seq2seq_plain.hpp"

using attn::Index;
using attn::Tensor;
using attn::models::PlainSeq2Seq;
using attn::models::PlainSeq2SeqConfig;

namespace {

PlainSeq2SeqConfig tiny_config() {
  PlainSeq2SeqConfig c;
  c.src_vocab = c.tgt_vocab = 5;
  c.embed_dim = 3;
  c.hidden_dim = 4;
  return c;
}

}  // namespace

TEST_CASE("PlainSeq2Seq: parameters and shapes") {
  attn::manual_seed(1);
  PlainSeq2Seq model(tiny_config());
  std::vector<std::string> names;
  for (auto& [name, p] : model.named_parameters()) names.push_back(name);
  CHECK(names.front() == "src_embed.weight");
  CHECK(std::find(names.begin(), names.end(), "decoder.weight_ih_l0") != names.end());
  CHECK(model.decoder.weights[0].weight_ih.shape() == attn::Shape{16, 3 + 4});  // input [y_{t-1}; c]
  test::TinyBatch batch;
  CHECK(model.forward(batch.src, batch.src_lengths, batch.tgt_in).shape() == attn::Shape{2, 3, 5});
  CHECK(model.last_attention().empty());
  CHECK(model.main_attention().empty());
}

TEST_CASE("PlainSeq2Seq: gradcheck over every parameter") {
  attn::manual_seed(2);
  PlainSeq2Seq model(tiny_config());
  CHECK(test::gradcheck_parameters(model, test::TinyBatch()) == model.parameters().size());
}

TEST_CASE("PlainSeq2Seq: step() with a teacher-forced prefix gives forward()'s logits") {
  attn::manual_seed(3);
  PlainSeq2Seq model(tiny_config());
  CHECK(test::max_step_forward_difference(model, test::TinyBatch()) < 1e-10);
}

TEST_CASE("PlainSeq2Seq: padding of the source changes nothing") {
  attn::manual_seed(4);
  PlainSeq2Seq model(tiny_config());
  test::TinyBatch a, b;
  b.src(1, 2) = 3;  // past the length of sentence 1
  b.src(1, 3) = 4;
  CHECK(test::allclose(model.forward(a.src, a.src_lengths, a.tgt_in), model.forward(b.src, b.src_lengths, b.tgt_in),
                       0.0));
  // ...and a shorter sentence gets the same logits alone as in the batch.
  Index alone = {{4, 3}};
  Tensor logits = model.forward(alone, {2}, Index{{1, 4, 2}});
  CHECK(test::allclose(logits, attn::narrow(model.forward(a.src, a.src_lengths, a.tgt_in), 0, 1, 1), 1e-12));
}

TEST_CASE("PlainSeq2Seq: float32") {
  attn::manual_seed(5);
  PlainSeq2Seq model(tiny_config());
  test::TinyBatch batch;
  Tensor reference = model.forward(batch.src, batch.src_lengths, batch.tgt_in);
  model.to(attn::Dtype::Float32);
  Tensor logits = model.forward(batch.src, batch.src_lengths, batch.tgt_in);
  CHECK(logits.dtype() == attn::Dtype::Float32);
  CHECK(test::allclose(logits, reference, 1e-5));
  CHECK(test::max_step_forward_difference(model, batch) < 1e-5);
}

TEST_CASE("PlainSeq2Seq: bad inputs") {
  attn::manual_seed(6);
  PlainSeq2Seq model(tiny_config());
  test::TinyBatch batch;
  CHECK_THROWS_WITH_SUBSTR(model.forward(batch.src, {4}, batch.tgt_in), attn::ShapeError, "source lengths");
  CHECK_THROWS_WITH_SUBSTR(model.forward(batch.src, {5, 2}, batch.tgt_in), attn::ValueError, "not in 1..4");
  CHECK_THROWS_WITH_SUBSTR(model.forward(batch.src, {0, 2}, batch.tgt_in), attn::ValueError, "not in 1..4");
  CHECK_THROWS_WITH_SUBSTR(model.forward(batch.src, batch.src_lengths, Index{{1, 3}}), attn::ShapeError, "tgt_in");
  const Index flat = xt::ones<std::int64_t>({3});  // [3]: no batch dim
  CHECK_THROWS_WITH_SUBSTR(model.forward(flat, {3}, batch.tgt_in), attn::ShapeError, "src [B, S]");
  auto state = model.start(batch.src, batch.src_lengths);
  const Index one_row = xt::ones<std::int64_t>({1, 1});  // [1, 1] for a batch of 2
  CHECK_THROWS_WITH_SUBSTR(model.step(state, one_row), attn::ShapeError, "prefix [2, t]");
  PlainSeq2SeqConfig bad = tiny_config();
  bad.hidden_dim = 0;
  CHECK_THROWS_WITH_SUBSTR(PlainSeq2Seq{bad}, attn::ValueError, "hidden_dim");
}
