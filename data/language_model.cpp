#include "language_model.hpp"

#include "../core/errors.hpp"

#include <algorithm>

namespace attn::data {

std::vector<Tokens> document_streams(const std::vector<Document>& documents) {
  std::vector<Tokens> streams;
  streams.reserve(documents.size());
  for (const Document& doc : documents) {
    Tokens stream;
    for (const Tokens& sentence : doc.sentences) {
      stream.insert(stream.end(), sentence.begin(), sentence.end());
      stream.push_back(Vocab::eos_token);
    }
    streams.push_back(std::move(stream));
  }
  return streams;
}

std::vector<Tokens> lm_chunks(const std::vector<Tokens>& streams, std::size_t length) {
  if (length == 0) throw ValueError("lm_chunks: length must be at least 1 (predictions per chunk), got 0");
  std::vector<Tokens> chunks;
  for (const Tokens& stream : streams)
    // Chunk k holds tokens k*length .. k*length + length: its first token is the last of chunk k - 1.
    for (std::size_t start = 0; start + 1 < stream.size(); start += length) {
      const std::size_t end = std::min(stream.size(), start + length + 1);
      chunks.emplace_back(stream.begin() + static_cast<long>(start), stream.begin() + static_cast<long>(end));
    }
  return chunks;
}

LMBatch make_lm_batch(const std::vector<Tokens>& chunks, const std::vector<std::size_t>& indices, const Vocab& vocab) {
  if (indices.empty()) throw ValueError("make_lm_batch: no chunk given (an empty batch)");
  std::size_t T = 0;
  for (std::size_t i : indices) {
    if (i >= chunks.size())
      throw ValueError("make_lm_batch: chunk index " + std::to_string(i) + " is out of range (" +
                       std::to_string(chunks.size()) + " chunks)");
    if (chunks[i].size() < 2)
      throw ValueError("make_lm_batch: chunk " + std::to_string(i) + " has " + std::to_string(chunks[i].size()) +
                       " token(s); a chunk needs at least 2 (one word read, one predicted)");
    T = std::max(T, chunks[i].size() - 1);
  }
  const std::size_t B = indices.size();
  LMBatch batch;
  batch.inputs = Index(Shape{B, T}, Vocab::pad_id);   // [B, T]
  batch.targets = Index(Shape{B, T}, Vocab::pad_id);  // [B, T]
  batch.indices = indices;
  for (std::size_t b = 0; b < B; ++b) {
    const std::vector<std::int64_t> ids = vocab.encode(chunks[indices[b]]);
    const std::size_t n = ids.size() - 1;
    for (std::size_t t = 0; t < n; ++t) {
      batch.inputs(b, t) = ids[t];
      batch.targets(b, t) = ids[t + 1];
    }
    batch.lengths.push_back(n);
  }
  return batch;
}

std::vector<LMBatch> make_lm_batches(const std::vector<Tokens>& chunks, const Vocab& vocab,
                                     const BatchOptions& options, Generator& gen) {
  std::vector<std::size_t> lengths;
  lengths.reserve(chunks.size());
  for (const Tokens& c : chunks) lengths.push_back(c.size());
  std::vector<LMBatch> batches;
  for (const std::vector<std::size_t>& indices : batch_order(lengths, options, gen))
    batches.push_back(make_lm_batch(chunks, indices, vocab));
  return batches;
}

}  // namespace attn::data
