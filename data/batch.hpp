// Batches: examples turned into padded id matrices a model can eat.
//
// For a translation pair ("le chat", "the cat") in a batch whose longest
// source has 4 tokens and longest target 3:
//
//   src     = [le chat <pad> <pad>]     src_lengths = 2
//   tgt_in  = [<bos> the cat <pad>]     what the decoder reads (teacher forcing)
//   tgt_out = [the cat <eos> <pad>]     what it must predict at each step
//                                       tgt_lengths = 3 (the target + <eos>)
//
// tgt_in is tgt_out shifted right by one, so step t sees y_{t-1} and predicts y_t.
// The loss ignores <pad> (id 0) positions.
#pragma once

#include "../core/random.hpp"
#include "example.hpp"
#include "grid.hpp"
#include "vocab.hpp"

#include <cstddef>
#include <vector>

namespace attn::data {

struct Batch {
  Index src;                              // [B, S] source ids, padded with <pad>
  std::vector<std::size_t> src_lengths;   // real length of each source
  Index tgt_in;                           // [B, T] <bos> y_1 .. y_n, padded
  Index tgt_out;                          // [B, T] y_1 .. y_n <eos>, padded
  std::vector<std::size_t> tgt_lengths;   // n + 1: the tokens of tgt_out that count
  // [B, T]: the gold source position of tgt_out[b, t], -1 where there is none
  // (<eos>, padding, a dash in a date). Shape [0, 0] when the examples have no alignment.
  Index alignment;
  std::vector<std::size_t> indices;       // which examples, as positions in the list given

  std::size_t size() const { return src_lengths.size(); }  // B
  bool has_alignment() const { return alignment.size() > 0; }
};

// One batch of examples[indices[0]], examples[indices[1]], ... Unknown tokens
// become <unk>. ValueError for an empty list, an empty source, or an alignment
// whose length is not the target's.
Batch make_batch(const std::vector<Example>& examples, const std::vector<std::size_t>& indices,
                 const Vocab& src_vocab, const Vocab& tgt_vocab);
Batch make_batch(const std::vector<Example>& examples, const Vocab& src_vocab, const Vocab& tgt_vocab);

struct BatchOptions {
  std::size_t batch_size = 32;
  bool shuffle = true;         // a new order every call (an epoch), drawn from the generator
  // If > 0: sort by length within buckets of sort_buckets * batch_size examples, so
  // that a batch holds sentences of similar length (less padding); batches are
  // then shuffled as wholes.
  std::size_t sort_buckets = 0;
  bool drop_last = false;      // drop the last batch if it is smaller than batch_size
};

// The order: lists of example positions, one per batch. `lengths` are what
// sort_buckets sorts by. Reproducible: the same generator state gives the same order.
std::vector<std::vector<std::size_t>> batch_order(const std::vector<std::size_t>& lengths,
                                                  const BatchOptions& options, Generator& gen);

// One epoch of batches, sorted by source length if options.sort_buckets > 0.
std::vector<Batch> make_batches(const std::vector<Example>& examples, const Vocab& src_vocab,
                                const Vocab& tgt_vocab, const BatchOptions& options, Generator& gen);
std::vector<Batch> make_batches(const std::vector<Example>& examples, const Vocab& src_vocab,
                                const Vocab& tgt_vocab, std::size_t batch_size, bool shuffle, Generator& gen);

// Captioned grids (chapter 4): the "source" is the feature grid itself.
struct GridBatch {
  Tensor features;                        // [B, 9, D]
  Index tgt_in;                           // [B, T] <bos> + caption, padded
  Index tgt_out;                          // [B, T] caption + <eos>, padded
  std::vector<std::size_t> tgt_lengths;   // caption length + 1
  Index cells;                            // [B, T] gold cell of tgt_out[b, t], -1 for none
  std::vector<std::size_t> indices;

  std::size_t size() const { return tgt_lengths.size(); }
};

GridBatch make_grid_batch(const std::vector<GridExample>& examples, const std::vector<std::size_t>& indices,
                          const Vocab& vocab, Dtype dtype = Dtype::Float64);
std::vector<GridBatch> make_grid_batches(const std::vector<GridExample>& examples, const Vocab& vocab,
                                         const BatchOptions& options, Generator& gen,
                                         Dtype dtype = Dtype::Float64);

// Row b of an id matrix, e.g. to decode a model's output: vocab.decode(row_ids(ids, b)).
// (Not named row: xtensor's xt::row would be found for xt arrays.)
std::vector<std::int64_t> row_ids(const Index& ids, std::size_t b);

}  // namespace attn::data
