// What the copying models share (chapter 12's conv-copy, chapter 21's CopyNet): a batch's source
// tokens in an extended vocabulary, so that a model can write a source token the target vocabulary
// lacks, and the map from source ids to target ids that copying uses without it.
//
//   ExtendedSource ext = extend_source(source_tokens, tgt_vocab);  // ids V, V + 1, ...: the batch's new tokens
//   Tensor logp = model.forward_extended(src, lengths, tgt_in, ext);  // log p [B, T, V + n]
//   ext.decode(ids, tgt_vocab)                                        // an extended id back to its token
#pragma once

#include "../data/batch.hpp"
#include "../data/vocab.hpp"
#include "seq2seq.hpp"

#include <string>
#include <vector>

namespace attn::models {

// A batch's sources in the extended vocabulary: target ids for tokens the target
// vocabulary has, tgt_vocab.size() + k for the k-th new one (in order of first
// appearance), <pad> after each sentence's end.
struct ExtendedSource {
  Index copy_ids;                  // [B, S]
  std::vector<std::string> extra;  // the source-only tokens: extra[k] has id V + k
  std::size_t extended_vocab = 0;  // V + extra.size()
  // Target tokens in the extended vocabulary (<unk> if neither has it). A token that only another
  // sentence of the batch holds still gets its extended id: use the overload with the row for targets.
  std::vector<std::int64_t> encode(const data::Tokens& tokens, const data::Vocab& tgt_vocab) const;
  // The same for the target of sentence `row`: an extended id only for a token that sentence's source
  // holds (the only ones it can copy), <unk> otherwise, as the paper's UNK.
  std::vector<std::int64_t> encode(const data::Tokens& tokens, const data::Vocab& tgt_vocab, std::size_t row) const;
  // Back to tokens (specials dropped, stops at <eos>).
  data::Tokens decode(const std::vector<std::int64_t>& ids, const data::Vocab& tgt_vocab) const;
};
ExtendedSource extend_source(const std::vector<data::Tokens>& sources, const data::Vocab& tgt_vocab);

// A batch for a copying model: its sources in the extended vocabulary, and its targets written with
// those ids, so that a target word the vocabulary lacks but its own source holds is its source copy's
// id (the loss then counts it in full), and <unk> otherwise.
struct ExtendedBatch {
  ExtendedSource source;
  Index tgt_in;   // [B, T] <bos> y_1 .. y_n, padded (the shape of batch.tgt_in)
  Index tgt_out;  // [B, T] y_1 .. y_n <eos>, padded
};
// `batch` made from examples[batch.indices[i]] (data::make_batch, make_batches).
ExtendedBatch extended_batch(const data::Batch& batch, const std::vector<data::Example>& examples,
                           const data::Vocab& tgt_vocab);

// A model that copies source tokens: its forward()/step() copy a source token as its target id (or
// <unk>), through a map set from the two vocabularies; forward_extended()/start_extended() copy over a
// batch's extended vocabulary. The command line uses it to give a model both vocabularies.
class CopyingModel {
 public:
  virtual ~CopyingModel() = default;
  // Source id -> target id for copying in forward()/step() (<unk> where the target lacks the token).
  virtual void set_copy_map(const data::Vocab& src_vocab, const data::Vocab& tgt_vocab) = 0;
  // log p(y) [B, T, extended_vocab]; tgt_in may hold extended ids (the decoder reads them as <unk>).
  virtual Tensor forward_extended(const Index& src, const std::vector<std::size_t>& src_lengths, const Index& tgt_in,
                                  const ExtendedSource& extended) = 0;
  // The state for step(), which then returns log p over the batch's extended vocabulary.
  virtual DecoderState start_extended(const Index& src, const std::vector<std::size_t>& src_lengths,
                                      const ExtendedSource& extended) = 0;
  // False for a model built with its copying off (chapter 12's conv, CopyNet with copy = false).
  virtual bool copies() const = 0;
};

namespace copying {

// The identity map of `src_vocab` ids, with ids >= tgt_vocab read as <unk>: the map until set_copy_map().
Index default_map(std::size_t src_vocab, std::size_t tgt_vocab);
// The map from the two vocabularies: source id i -> the target id of the same token (<unk> if none).
// `op` names the caller; ValueError unless the sizes are the model's.
Index map_from(const data::Vocab& src_vocab, const data::Vocab& tgt_vocab, std::size_t model_src_vocab,
               std::size_t model_tgt_vocab, const char* op);
// src [B, S] through the map (<pad> stays 0); ValueError for an id outside it.
Index map_source(const Index& src, const Index& map, const char* op);
// Ids the target embedding has: extended ids (>= V) are read as <unk>.
Index clamp_to_vocab(const Index& ids, std::size_t V);
// ShapeError unless extended.copy_ids has the source's shape; ValueError for an id outside extended_vocab.
void check_extended(const Index& src, const ExtendedSource& extended, const char* op);

}  // namespace copying

}  // namespace attn::models
