// Text for a language model: each document read as one stream of words, every sentence ended by
// <eos> (as the Penn Treebank and WikiText mark line ends), cut into chunks that a model reads
// left to right, predicting each next word.
//
//   std::vector<Tokens> streams = document_streams(corpus.documents);   // chapter 18's manual pages
//   std::vector<Tokens> chunks = lm_chunks(streams, 64);   // 65 tokens each: 64 inputs, 64 targets
//   Vocab v = Vocab::build(chunks, 3);
//   for (const LMBatch& b : make_lm_batches(chunks, v, {32, true}, gen)) ...  // b.inputs, b.targets [B, T]
//
// A chunk of n + 1 tokens gives n predictions: inputs are its first n tokens, targets its last n
// (targets(b, t) == inputs(b, t + 1)). Chunks of one stream overlap by one token, so that every
// word of the stream but the first is a target exactly once. Each chunk is read from a fresh
// state: a model sees no word of a chunk before it.
#pragma once

#include "../core/random.hpp"
#include "batch.hpp"
#include "documents.hpp"
#include "example.hpp"
#include "vocab.hpp"

#include <cstddef>
#include <vector>

namespace attn::data {

// Every document's sentences joined into one stream, each sentence followed by "<eos>":
// {{"a", "b"}, {"c"}} -> {"a", "b", "<eos>", "c", "<eos>"}. One stream per document, in order.
std::vector<Tokens> document_streams(const std::vector<Document>& documents);

// Each stream cut into chunks of length + 1 tokens, consecutive chunks sharing one token: a stream
// of n tokens gives ceil((n - 1) / length) chunks, the last one possibly shorter (at least 2 tokens). A
// stream of fewer than 2 tokens gives none. ValueError if length is 0.
std::vector<Tokens> lm_chunks(const std::vector<Tokens>& streams, std::size_t length);

// A padded batch of chunks: inputs [B, T] and targets [B, T], T the most predictions of a chunk in
// the batch; both <pad> (id 0) after a chunk's end, so a loss that ignores <pad> targets counts
// exactly sum(lengths) predictions.
struct LMBatch {
  Index inputs;                       // [B, T] word ids of the words read
  Index targets;                      // [B, T] the next word after each (<pad> after the end)
  std::vector<std::size_t> lengths;   // [B] predictions in each chunk (its tokens - 1)
  std::vector<std::size_t> indices;   // which chunks, as positions in the list given

  std::size_t size() const { return lengths.size(); }  // B
};

// One batch of chunks[indices[0]], chunks[indices[1]], ...; unknown words become <unk>.
// ValueError for an empty list, an index out of range, or a chunk of fewer than 2 tokens.
LMBatch make_lm_batch(const std::vector<Tokens>& chunks, const std::vector<std::size_t>& indices, const Vocab& vocab);

// One epoch of batches in batch_order() (batch.hpp), sorted by length within buckets when
// options.sort_buckets > 0.
std::vector<LMBatch> make_lm_batches(const std::vector<Tokens>& chunks, const Vocab& vocab,
                                     const BatchOptions& options, Generator& gen);

}  // namespace attn::data
