#include "batch.hpp"

#include "../core/errors.hpp"

#include <xtensor/xview.hpp>

#include <algorithm>
#include <numeric>

namespace attn::data {

namespace {

// Fisher-Yates with the attn generator, so an order depends only on the seed
// (std::shuffle's algorithm differs between standard libraries).
template <class T>
void shuffle(std::vector<T>& items, Generator& gen) {
  for (std::size_t i = items.size(); i > 1; --i)
    std::swap(items[i - 1], items[static_cast<std::size_t>(gen.randint(0, static_cast<std::int64_t>(i)))]);
}

// tgt_in, tgt_out, their lengths and the gold positions ([B, T], T = longest target + 1).
struct Targets {
  Index in, out, gold;
  std::vector<std::size_t> lengths;
};

Targets encode_targets(const char* op, const std::vector<const Tokens*>& targets,
                       const std::vector<const std::vector<std::int64_t>*>& golds, const Vocab& vocab) {
  std::size_t longest = 0;
  for (const Tokens* t : targets) longest = std::max(longest, t->size());
  const std::size_t B = targets.size(), T = longest + 1;
  Targets out{Index(Shape{B, T}, Vocab::pad_id), Index(Shape{B, T}, Vocab::pad_id),
              golds.empty() ? Index(Shape{0, 0}) : Index(Shape{B, T}, -1), {}};
  for (std::size_t b = 0; b < B; ++b) {
    const std::vector<std::int64_t> ids = vocab.encode(*targets[b]);
    out.in(b, 0) = Vocab::bos_id;  // <bos> y_1 .. y_n
    for (std::size_t t = 0; t < ids.size(); ++t) {
      out.in(b, t + 1) = ids[t];
      out.out(b, t) = ids[t];      // y_1 .. y_n <eos>
    }
    out.out(b, ids.size()) = Vocab::eos_id;
    out.lengths.push_back(ids.size() + 1);
    if (golds.empty()) continue;
    if (golds[b]->size() != ids.size())
      throw ValueError(std::string(op) + ": example " + std::to_string(b) + " of the batch has " +
                       std::to_string(golds[b]->size()) + " alignment entries for " + std::to_string(ids.size()) +
                       " target tokens");
    for (std::size_t t = 0; t < ids.size(); ++t) out.gold(b, t) = (*golds[b])[t];
  }
  return out;
}

void check_indices(const char* op, const std::vector<std::size_t>& indices, std::size_t n) {
  if (indices.empty()) throw ValueError(std::string(op) + ": expected at least one example, got none");
  for (std::size_t i : indices)
    if (i >= n)
      throw ValueError(std::string(op) + ": index " + std::to_string(i) + " is out of range for " +
                       std::to_string(n) + " examples");
}

}  // namespace

Batch make_batch(const std::vector<Example>& examples, const std::vector<std::size_t>& indices,
                 const Vocab& src_vocab, const Vocab& tgt_vocab) {
  check_indices("make_batch", indices, examples.size());
  Batch batch;
  batch.indices = indices;
  std::size_t S = 0;
  bool aligned = false;
  for (std::size_t i : indices) {
    if (examples[i].src.empty()) throw ValueError("make_batch: example " + std::to_string(i) + " has an empty source");
    S = std::max(S, examples[i].src.size());
    aligned = aligned || !examples[i].alignment.empty();
  }
  batch.src = Index(Shape{indices.size(), S}, Vocab::pad_id);  // [B, S]
  std::vector<const Tokens*> targets;
  std::vector<const std::vector<std::int64_t>*> golds;
  for (std::size_t b = 0; b < indices.size(); ++b) {
    const Example& e = examples[indices[b]];
    const std::vector<std::int64_t> ids = src_vocab.encode(e.src);
    std::copy(ids.begin(), ids.end(), xt::view(batch.src, b).begin());
    batch.src_lengths.push_back(ids.size());
    targets.push_back(&e.tgt);
    if (aligned) golds.push_back(&e.alignment);
  }
  Targets t = encode_targets("make_batch", targets, golds, tgt_vocab);
  batch.tgt_in = std::move(t.in);
  batch.tgt_out = std::move(t.out);
  batch.tgt_lengths = std::move(t.lengths);
  batch.alignment = std::move(t.gold);
  return batch;
}

Batch make_batch(const std::vector<Example>& examples, const Vocab& src_vocab, const Vocab& tgt_vocab) {
  std::vector<std::size_t> all(examples.size());
  std::iota(all.begin(), all.end(), 0);
  return make_batch(examples, all, src_vocab, tgt_vocab);
}

std::vector<std::vector<std::size_t>> batch_order(const std::vector<std::size_t>& lengths,
                                                  const BatchOptions& options, Generator& gen) {
  if (options.batch_size == 0) throw ValueError("batch_order: expected batch_size >= 1, got 0");
  std::vector<std::size_t> order(lengths.size());
  std::iota(order.begin(), order.end(), 0);
  if (options.shuffle) shuffle(order, gen);
  if (options.sort_buckets > 0) {
    // Stable: equal lengths keep their (shuffled) order.
    const std::size_t bucket = options.sort_buckets * options.batch_size;
    for (std::size_t first = 0; first < order.size(); first += bucket)
      std::stable_sort(order.begin() + first, order.begin() + std::min(first + bucket, order.size()),
                       [&](std::size_t a, std::size_t b) { return lengths[a] < lengths[b]; });
  }
  std::vector<std::vector<std::size_t>> batches;
  for (std::size_t first = 0; first < order.size(); first += options.batch_size)
    batches.emplace_back(order.begin() + first, order.begin() + std::min(first + options.batch_size, order.size()));
  if (options.drop_last && !batches.empty() && batches.back().size() < options.batch_size) batches.pop_back();
  if (options.shuffle && options.sort_buckets > 0) shuffle(batches, gen);  // or every epoch starts short
  return batches;
}

std::vector<Batch> make_batches(const std::vector<Example>& examples, const Vocab& src_vocab,
                                const Vocab& tgt_vocab, const BatchOptions& options, Generator& gen) {
  std::vector<std::size_t> lengths;
  for (const auto& e : examples) lengths.push_back(e.src.size());
  std::vector<Batch> batches;
  for (const auto& indices : batch_order(lengths, options, gen))
    batches.push_back(make_batch(examples, indices, src_vocab, tgt_vocab));
  return batches;
}

std::vector<Batch> make_batches(const std::vector<Example>& examples, const Vocab& src_vocab,
                                const Vocab& tgt_vocab, std::size_t batch_size, bool shuffle, Generator& gen) {
  BatchOptions options;
  options.batch_size = batch_size;
  options.shuffle = shuffle;
  return make_batches(examples, src_vocab, tgt_vocab, options, gen);
}

GridBatch make_grid_batch(const std::vector<GridExample>& examples, const std::vector<std::size_t>& indices,
                          const Vocab& vocab, Dtype dtype) {
  check_indices("make_grid_batch", indices, examples.size());
  const auto& first = examples[indices[0]].features.shape();
  const Shape grid(first.begin(), first.end());  // [9, D]
  if (grid.size() != 2)
    throw ShapeError("make_grid_batch: expected features [cells, D], got " + shape_str(grid));
  xt::xarray<double> features = xt::zeros<double>({indices.size(), grid.at(0), grid.at(1)});  // [B, 9, D]
  std::vector<const Tokens*> captions;
  std::vector<const std::vector<std::int64_t>*> cells;
  for (std::size_t b = 0; b < indices.size(); ++b) {
    const GridExample& e = examples[indices[b]];
    if (Shape(e.features.shape().begin(), e.features.shape().end()) != grid)
      throw ShapeError("make_grid_batch: expected every grid to be " + shape_str(grid) + ", got " +
                       shape_str(Shape(e.features.shape().begin(), e.features.shape().end())) + " for example " +
                       std::to_string(indices[b]));
    xt::view(features, b) = e.features;
    captions.push_back(&e.caption);
    cells.push_back(&e.cells);
  }
  Targets t = encode_targets("make_grid_batch", captions, cells, vocab);
  return {tensor(features, false, dtype), std::move(t.in), std::move(t.out), std::move(t.lengths),
          std::move(t.gold), indices};
}

std::vector<GridBatch> make_grid_batches(const std::vector<GridExample>& examples, const Vocab& vocab,
                                         const BatchOptions& options, Generator& gen, Dtype dtype) {
  std::vector<std::size_t> lengths;
  for (const auto& e : examples) lengths.push_back(e.caption.size());
  std::vector<GridBatch> batches;
  for (const auto& indices : batch_order(lengths, options, gen))
    batches.push_back(make_grid_batch(examples, indices, vocab, dtype));
  return batches;
}

std::vector<std::int64_t> row_ids(const Index& ids, std::size_t b) {
  if (ids.dimension() != 2 || b >= ids.shape(0))
    throw ShapeError("row_ids: expected a 2-d id matrix with more than " + std::to_string(b) + " rows, got " +
                     shape_str(Shape(ids.shape().begin(), ids.shape().end())));
  auto r = xt::view(ids, b);
  return {r.begin(), r.end()};
}

}  // namespace attn::data
