#include "extended_source.hpp"

#include "../core/errors.hpp"

#include <algorithm>

namespace attn::models {

std::vector<std::int64_t> ExtendedSource::encode(const data::Tokens& tokens, const data::Vocab& tgt_vocab) const {
  std::vector<std::int64_t> ids;
  for (const std::string& t : tokens) {
    if (tgt_vocab.contains(t)) {
      ids.push_back(tgt_vocab.id(t));
      continue;
    }
    const auto it = std::find(extra.begin(), extra.end(), t);
    ids.push_back(it == extra.end() ? data::Vocab::unk_id : std::int64_t(tgt_vocab.size() + (it - extra.begin())));
  }
  return ids;
}

std::vector<std::int64_t> ExtendedSource::encode(const data::Tokens& tokens, const data::Vocab& tgt_vocab,
                                                 std::size_t row) const {
  if (copy_ids.dimension() != 2 || row >= copy_ids.shape()[0])
    throw ValueError("ExtendedSource::encode: row " + std::to_string(row) + " is outside the batch of " +
                     std::to_string(copy_ids.dimension() == 2 ? copy_ids.shape()[0] : 0) + " sources");
  std::vector<std::int64_t> ids = encode(tokens, tgt_vocab);
  for (std::int64_t& id : ids) {
    if (id < std::int64_t(tgt_vocab.size())) continue;
    bool held = false;  // by this row's source
    for (std::size_t j = 0; j < copy_ids.shape()[1] && !held; ++j) held = copy_ids(row, j) == id;
    if (!held) id = data::Vocab::unk_id;
  }
  return ids;
}

data::Tokens ExtendedSource::decode(const std::vector<std::int64_t>& ids, const data::Vocab& tgt_vocab) const {
  data::Tokens tokens;
  for (std::int64_t id : ids) {
    if (id == data::Vocab::eos_id) break;
    if (id >= std::int64_t(tgt_vocab.size()) && std::size_t(id) < extended_vocab)
      tokens.push_back(extra[std::size_t(id) - tgt_vocab.size()]);
    else if (!data::Vocab::is_special(id))
      tokens.push_back(tgt_vocab.token(id));
  }
  return tokens;
}

ExtendedSource extend_source(const std::vector<data::Tokens>& sources, const data::Vocab& tgt_vocab) {
  ExtendedSource e;
  std::size_t S = 0;
  for (const auto& s : sources) S = std::max(S, s.size());
  e.copy_ids = xt::zeros<std::int64_t>({sources.size(), S});  // <pad> = 0
  for (std::size_t b = 0; b < sources.size(); ++b)
    for (std::size_t j = 0; j < sources[b].size(); ++j) {
      const std::string& t = sources[b][j];
      if (tgt_vocab.contains(t)) {
        e.copy_ids(b, j) = tgt_vocab.id(t);
        continue;
      }
      auto it = std::find(e.extra.begin(), e.extra.end(), t);
      if (it == e.extra.end()) it = e.extra.insert(e.extra.end(), t);
      e.copy_ids(b, j) = std::int64_t(tgt_vocab.size() + (it - e.extra.begin()));
    }
  e.extended_vocab = tgt_vocab.size() + e.extra.size();
  return e;
}

ExtendedBatch extended_batch(const data::Batch& batch, const std::vector<data::Example>& examples,
                           const data::Vocab& tgt_vocab) {
  std::vector<data::Tokens> sources;
  for (std::size_t i : batch.indices) {
    if (i >= examples.size())
      throw ValueError("extended_batch: the batch holds example " + std::to_string(i) + " of " +
                       std::to_string(examples.size()));
    sources.push_back(examples[i].src);
  }
  ExtendedBatch out;
  out.source = extend_source(sources, tgt_vocab);
  if (out.source.copy_ids.shape() != batch.src.shape())
    throw ShapeError("extended_batch: the examples' sources do not fit the batch's source " +
                     shape_str(Shape(batch.src.shape().begin(), batch.src.shape().end())) + " (not made from these examples?)");
  out.tgt_in = xt::zeros<std::int64_t>(batch.tgt_in.shape());
  out.tgt_out = xt::zeros<std::int64_t>(batch.tgt_out.shape());
  const std::size_t T = batch.tgt_in.shape()[1];
  for (std::size_t b = 0; b < batch.indices.size(); ++b) {
    const std::vector<std::int64_t> ids = out.source.encode(examples[batch.indices[b]].tgt, tgt_vocab, b);
    if (ids.size() + 1 > T)
      throw ShapeError("extended_batch: example " + std::to_string(batch.indices[b]) + " has " +
                       std::to_string(ids.size()) + " target tokens, more than the batch holds");
    out.tgt_in(b, 0) = data::Vocab::bos_id;
    for (std::size_t t = 0; t < ids.size(); ++t) out.tgt_in(b, t + 1) = out.tgt_out(b, t) = ids[t];
    out.tgt_out(b, ids.size()) = data::Vocab::eos_id;
  }
  return out;
}

namespace copying {

Index clamp_to_vocab(const Index& ids, std::size_t V) {
  Index out = ids;
  for (auto& id : out)
    if (id < 0 || std::size_t(id) >= V) id = data::Vocab::unk_id;
  return out;
}

Index default_map(std::size_t src_vocab, std::size_t tgt_vocab) {
  return clamp_to_vocab(xt::arange<std::int64_t>(std::int64_t(src_vocab)), tgt_vocab);
}

Index map_from(const data::Vocab& src_vocab, const data::Vocab& tgt_vocab, std::size_t model_src_vocab,
               std::size_t model_tgt_vocab, const char* op) {
  if (src_vocab.size() != model_src_vocab || tgt_vocab.size() != model_tgt_vocab)
    throw ValueError(std::string(op) + ": expected vocabularies of " + std::to_string(model_src_vocab) + " and " +
                     std::to_string(model_tgt_vocab) + " tokens, got " + std::to_string(src_vocab.size()) + " and " +
                     std::to_string(tgt_vocab.size()));
  Index map = xt::zeros<std::int64_t>({src_vocab.size()});
  for (std::size_t i = 0; i < src_vocab.size(); ++i) map(i) = tgt_vocab.id(src_vocab.token(std::int64_t(i)));
  return map;
}

Index map_source(const Index& src, const Index& map, const char* op) {
  Index ids = xt::zeros<std::int64_t>(src.shape());  // source ids -> target ids, <pad> stays 0
  for (std::size_t i = 0; i < src.size(); ++i) {
    const std::int64_t s = src.flat(i);
    if (s < 0 || std::size_t(s) >= map.size())
      throw ValueError(std::string(op) + ": source id " + std::to_string(s) + " is outside the vocabulary of " +
                       std::to_string(map.size()));
    ids.flat(i) = map(std::size_t(s));
  }
  return ids;
}

void check_extended(const Index& src, const ExtendedSource& extended, const char* op) {
  if (extended.copy_ids.shape() != src.shape())
    throw ShapeError(std::string(op) + ": expected extended copy_ids of the source's shape " +
                     shape_str(Shape(src.shape().begin(), src.shape().end())) + ", got " +
                     shape_str(Shape(extended.copy_ids.shape().begin(), extended.copy_ids.shape().end())));
  for (std::int64_t id : extended.copy_ids)
    if (id < 0 || std::size_t(id) >= extended.extended_vocab)
      throw ValueError(std::string(op) + ": copy id " + std::to_string(id) + " is outside the extended vocabulary 0.." +
                       std::to_string(extended.extended_vocab - 1));
}

}  // namespace copying

}  // namespace attn::models
