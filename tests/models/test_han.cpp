// The document classifiers of chapter 18 (models/han.hpp, models/document_baselines.hpp):
// PyTorch's values for each (tools/reference/han.py), gradcheck, padding that changes nothing,
// flattening, the attention kept, learning a task only attention can solve, bad input.
#include "../helpers.hpp"
#include "../reference.hpp"

#include "models/document_baselines.hpp"
#include "models/han.hpp"
#include "nn/loss.hpp"
#include "nn/optim.hpp"

#include <xtensor/xview.hpp>

using attn::Index;
using attn::Tensor;
using Inputs = std::vector<Tensor>;
namespace models = attn::models;

namespace {

// The batch tools/reference/han.py ran: [B, S, W] = [2, 3, 4], sentences of 4, 1, 3 words, and
// a second document of one sentence of 3 words.
struct TinyDocuments {
  Index words;
  std::vector<std::size_t> sentence_counts, word_counts;
  TinyDocuments() {
    test::Reference ref("han");
    words = xt::cast<std::int64_t>(ref.array("han", "words"));
    for (double n : ref.array("han", "sentence_counts")) sentence_counts.push_back(static_cast<std::size_t>(n));
    for (double n : ref.array("han", "word_counts")) word_counts.push_back(static_cast<std::size_t>(n));
  }
};

models::HANConfig han_config() {
  models::HANConfig c;
  c.vocab = 11, c.classes = 3, c.embed_dim = 3, c.hidden_dim = 2, c.attention_dim = 4;
  return c;
}
models::FlatAttentionConfig flat_config() {
  models::FlatAttentionConfig c;
  c.vocab = 11, c.classes = 3, c.embed_dim = 3, c.hidden_dim = 2, c.attention_dim = 4;
  return c;
}
models::BagOfWordsConfig bow_config() {
  models::BagOfWordsConfig c;
  c.vocab = 11, c.classes = 3, c.embed_dim = 3;
  return c;
}

void check_against_reference(models::DocumentClassifier& model, const std::string& name) {
  test::Reference ref("han");
  for (auto& [param, p] : model.state()) *p = ref.tensor(name, param, /*requires_grad=*/true);
  TinyDocuments d;
  Tensor logits = model.forward(d.words, d.sentence_counts, d.word_counts);
  CHECK(test::allclose(logits, ref.tensor(name, "logits"), 1e-13));
  if (ref.has(name, "attention_words"))
    CHECK(test::allclose(model.last_attention().at("words"), ref.tensor(name, "attention_words"), 1e-13));
  if (ref.has(name, "attention_sentences"))
    CHECK(test::allclose(model.last_attention().at("sentences"), ref.tensor(name, "attention_sentences"), 1e-13));
  attn::sum(logits * ref.tensor(name, "r")).backward();
  for (const auto& [param, p] : model.named_parameters()) {
    INFO("grad of " << param);
    CHECK(test::allclose(p.grad(), ref.tensor(name, "grad_" + param), 1e-13));
  }
}

}  // namespace

TEST_CASE("HierarchicalAttentionNetwork equals the same model in PyTorch: logits, both attentions, every gradient") {
  models::HierarchicalAttentionNetwork model(han_config());
  check_against_reference(model, "han");
}

TEST_CASE("FlatAttentionClassifier equals the same model in PyTorch") {
  models::FlatAttentionClassifier model(flat_config());
  check_against_reference(model, "flat");
}

TEST_CASE("BagOfWordsClassifier equals the same model in PyTorch") {
  models::BagOfWordsClassifier model(bow_config());
  check_against_reference(model, "bow");
}

TEST_CASE("HierarchicalAttentionNetwork: gradcheck of the loss over every parameter") {
  attn::manual_seed(1);
  models::HierarchicalAttentionNetwork model(han_config());
  TinyDocuments d;
  const Index labels = {2, 0};
  CHECK_GRADCHECK([&](const Inputs&) { return attn::nn::cross_entropy(model.forward(d.words, d.sentence_counts, d.word_counts), labels); },
                  test::with_parameters(model, {}));
}

TEST_CASE("Document classifiers: more padding (sentences, words, ids under it) changes nothing") {
  attn::manual_seed(2);
  models::HierarchicalAttentionNetwork han(han_config());
  models::FlatAttentionClassifier flat(flat_config());
  models::BagOfWordsClassifier bow(bow_config());
  TinyDocuments d;
  // The same documents in [2, 4, 6], with other ids where the padding is, even ids no vocabulary has.
  Index wide = xt::full_like(Index(xt::zeros<std::int64_t>({2, 4, 6})), 999);
  xt::view(wide, xt::all(), xt::range(0, 3), xt::range(0, 4)) = d.words;
  std::vector<std::size_t> counts(8, 0);
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t s = 0; s < 3; ++s) counts[b * 4 + s] = d.word_counts[b * 3 + s];
  for (models::DocumentClassifier* m : std::vector<models::DocumentClassifier*>{&han, &flat, &bow}) {
    INFO(m->type_name());
    const Tensor narrow = m->forward(d.words, d.sentence_counts, d.word_counts);
    const Tensor padded = m->forward(wide, d.sentence_counts, counts);
    CHECK(test::allclose(narrow, padded, 1e-14));
  }
  const Tensor a = han.last_attention().at("words");  // [2, 4, 6]
  CHECK(a.shape() == attn::Shape{2, 4, 6});
  CHECK(xt::sum(xt::view(a.to_array(), 1, xt::range(1, 4), xt::all()))() == 0.0);  // padded sentences
  CHECK(xt::sum(xt::view(a.to_array(), 0, 1, xt::range(1, 6)))() == 0.0);          // padded words
  CHECK(std::abs(xt::sum(xt::view(a.to_array(), 0, 2, xt::all()))() - 1.0) < 1e-14);
}

TEST_CASE("HierarchicalAttentionNetwork::sentence_vectors: s_i per sentence, zeros for the missing ones") {
  attn::manual_seed(5);
  models::HierarchicalAttentionNetwork model(han_config());
  TinyDocuments d;
  const xt::xarray<double> s = model.sentence_vectors(d.words, d.sentence_counts, d.word_counts).to_array();
  CHECK(s.shape() == std::vector<std::size_t>{2, 3, 4});  // [B, S, 2H]
  CHECK(xt::sum(xt::abs(xt::view(s, 1, xt::range(1, 3), xt::all())))() == 0.0);
  CHECK(xt::sum(xt::abs(xt::view(s, 0, 2, xt::all())))() > 0.0);
  CHECK(model.last_attention().count("words") == 1);
  CHECK(model.last_attention().count("sentences") == 0);
}

TEST_CASE("flatten_documents: the words one after another, <pad> after") {
  TinyDocuments d;
  std::vector<std::size_t> lengths;
  const Index flat = models::flatten_documents(d.words, d.sentence_counts, d.word_counts, lengths);
  CHECK(lengths == std::vector<std::size_t>{8, 3});
  CHECK(flat == Index{{4, 7, 2, 9, 5, 8, 10, 6}, {7, 1, 4, 0, 0, 0, 0, 0}});
}

// Class 1 when some sentence starts with word 5 AND ends with word 6, else class 0: the word level
// must see both ends of a sentence, the sentence level must find that sentence. Even documents are
// positive; a negative one may hold sentences with one of the two marks only.
struct PlantedTask {
  static constexpr std::size_t B = 64, S = 4, W = 5;
  Index words = xt::zeros<std::int64_t>({B, S, W});
  std::vector<std::size_t> sentence_counts = std::vector<std::size_t>(B), word_counts = std::vector<std::size_t>(B * S, 0);
  Index labels = xt::zeros<std::int64_t>({B});
  std::vector<std::size_t> planted = std::vector<std::size_t>(B);  // the marked sentence of a positive document

  explicit PlantedTask(attn::Generator& gen) {
    for (std::size_t b = 0; b < B; ++b) {
      sentence_counts[b] = 1 + gen.randint(0, S);
      const bool positive = b % 2 == 0;
      planted[b] = gen.randint(0, sentence_counts[b]);
      for (std::size_t s = 0; s < sentence_counts[b]; ++s) {
        const std::size_t n = 2 + gen.randint(0, W - 1);
        word_counts[b * S + s] = n;
        for (std::size_t w = 0; w < n; ++w) words(b, s, w) = 7 + gen.randint(0, 4);
        if (positive ? s == planted[b] : gen.uniform() < 0.5) {
          const bool first = gen.uniform() < 0.5;
          if (positive || first) words(b, s, 0) = 5;
          if (positive || !first) words(b, s, n - 1) = 6;
        }
      }
      labels(b) = positive ? 1 : 0;
    }
  }
};

TEST_CASE("HierarchicalAttentionNetwork learns a task that needs both levels of attention") {
  attn::manual_seed(3);
  attn::Generator gen(7), other(8);
  const PlantedTask train(gen), held_out(other);
  const std::size_t B = PlantedTask::B;
  models::HANConfig c;
  c.vocab = 11, c.classes = 2, c.embed_dim = 8, c.hidden_dim = 8, c.attention_dim = 8;
  models::HierarchicalAttentionNetwork model(c);
  attn::nn::Adam opt(model.parameters(), 0.03);
  double loss = 0.0;
  for (int step = 0; step < 150; ++step) {
    opt.zero_grad();
    Tensor l = attn::nn::cross_entropy(model.forward(train.words, train.sentence_counts, train.word_counts), train.labels);
    l.backward();
    opt.step();
    loss = l.item();
  }
  CHECK(loss < 0.05);
  // Documents it never saw: right on nearly all, and the sentence attention on the planted sentence.
  const Index predicted = attn::argmax(model.forward(held_out.words, held_out.sentence_counts, held_out.word_counts), 1);
  const std::size_t right = xt::sum(xt::equal(predicted, held_out.labels))();
  CHECK(right >= B * 9 / 10);
  const xt::xarray<double> a = model.last_attention().at("sentences").to_array();  // [B, S]
  std::size_t found = 0, positives = 0;
  for (std::size_t b = 0; b < B; b += 2) {  // the positive documents
    ++positives;
    std::size_t top = 0;
    for (std::size_t s = 1; s < held_out.sentence_counts[b]; ++s)
      if (a(b, s) > a(b, top)) top = s;
    found += top == held_out.planted[b];
  }
  MESSAGE("held out: " << right << " of " << B << " right; the planted sentence most attended in " << found << " of "
                       << positives << " positive documents");
  CHECK(found >= positives * 8 / 10);
}

TEST_CASE("Document classifiers: bad batches and configs name the model and what is wrong") {
  attn::manual_seed(4);
  models::HierarchicalAttentionNetwork model(han_config());
  TinyDocuments d;
  CHECK_THROWS_WITH_SUBSTR(model.forward(Index{{1, 2}}, {1}, {2}), attn::ShapeError,
                           "HierarchicalAttentionNetwork: expected words [B, S, W], got shape [1, 2]");
  CHECK_THROWS_WITH_SUBSTR(model.forward(d.words, {3}, d.word_counts), attn::ShapeError, "1 sentence counts for 2 documents");
  CHECK_THROWS_WITH_SUBSTR(model.forward(d.words, {3, 4}, d.word_counts), attn::ValueError,
                           "document 1 has 4 sentences, expected 1..3");
  CHECK_THROWS_WITH_SUBSTR(model.forward(d.words, d.sentence_counts, {4, 1, 3, 3, 1, 0}), attn::ValueError,
                           "padded sentence 1 of document 1 has 1 words, expected 0");
  CHECK_THROWS_WITH_SUBSTR(model.forward(d.words, d.sentence_counts, {4, 0, 3, 3, 0, 0}), attn::ValueError,
                           "sentence 1 of document 0 has 0 words, expected 1..4");
  models::HANConfig one_class = han_config();
  one_class.classes = 1;
  CHECK_THROWS_WITH_SUBSTR(models::HierarchicalAttentionNetwork{one_class}, attn::ValueError, "classes at least 2");
  models::FlatAttentionClassifier flat(flat_config());
  CHECK_THROWS_WITH_SUBSTR(flat.forward(d.words, {3}, d.word_counts), attn::ShapeError,
                           "FlatAttentionClassifier: 1 sentence counts for 2 documents");
  models::BagOfWordsConfig no_embedding = bow_config();
  no_embedding.embed_dim = 0;
  CHECK_THROWS_WITH_SUBSTR(models::BagOfWordsClassifier{no_embedding}, attn::ValueError,
                           "BagOfWordsClassifier: vocab and embed_dim must be positive and classes at least 2, got vocab 11, classes 3, embed_dim 0");
}
