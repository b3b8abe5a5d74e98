// Documents for classification with a hierarchical attention network (Yang et al. 2016):
// each document a list of sentences, each sentence a list of words, and one label. The
// corpus is the pinned Debian manual pages (tools/pinned_manpages.py), one JSON object a
// line, the label the page's section:
//
//   {"package": "manpages-dev", "page": "open.2", "section": "2", "paragraphs": ["The open() ...", "..."]}
//
//   DocumentCorpus c = load_documents("manpages.jsonl", {/*max_sentences=*/30, /*max_words=*/40});
//   c.classes == {"1", "2", "3", "5", "8"}, c.documents[0].sentences[0] == {"each", "manual", "page", ...}
//   DocumentSplit s = stratified_split(c.documents, 0.2, gen);
//   Vocab v = Vocab::build(document_sentences(s.train), 2);
//   for (const DocumentBatch& b : make_document_batches(s.train, v, {16, true, 4}, gen)) ...  // b.words [B, S, W]
//
// Sentences are cut from paragraphs by split_sentences(), words by split_words() (corpus.hpp).
// A malformed line (not JSON, a key missing or of the wrong type) throws an IOError naming
// the file and the line number; blank lines are skipped; a document left without a sentence
// is skipped and counted.
#pragma once

#include "../core/random.hpp"
#include "batch.hpp"
#include "example.hpp"
#include "vocab.hpp"

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace attn::data {

struct DocumentOptions {
  // A batch is padded to [B, the most sentences, the longest sentence]: set both caps for a model
  // (chapter 18 reads 20 and 40), since a few manual pages run to a thousand sentences.
  std::size_t max_sentences = 0;  // keep the first N sentences of a document (0: all)
  std::size_t max_words = 0;      // cut each sentence to its first N words (0: all)
  bool lowercase = true;          // before tokenizing (to_lower: ASCII and Latin-1 letters)
};

struct Document {
  std::string name;               // "open.2" (the page)
  std::string package;            // "manpages-dev"
  std::int64_t label = 0;         // index into DocumentCorpus::classes
  std::vector<Tokens> sentences;  // tokenized, after the cuts; none is empty
  std::size_t words() const;      // total tokens
};

struct DocumentCorpus {
  // The labels' names in id order: the sections of the documents kept, sorted ("1", "2", "3", "5", "8").
  std::vector<std::string> classes;
  std::vector<Document> documents;   // in file order
  std::size_t lines = 0;             // lines in the file
  std::size_t skipped = 0;           // documents without a sentence (empty paragraphs), not kept
};

// One paragraph -> its sentences (raw text, trimmed). A sentence ends after '.', '!' or '?'
// (a run of them, then any closing quotes or parentheses) followed by whitespace and then an
// uppercase letter, a digit or an opening quote or parenthesis:
//   split_sentences("See open(2) for details. The file e.g. foo.c is 3.5 kB. Done!")
//     == {"See open(2) for details.", "The file e.g. foo.c is 3.5 kB.", "Done!"}
// Not after the abbreviations e.g., i.e., etc., cf., vs., Dr. and No.; never inside "3.5" or
// "foo.c" (no whitespace follows). A newline ends a sentence only when the line does
// ("... done.\nthen"), otherwise it reads as a space. Empty sentences are dropped.
std::vector<std::string> split_sentences(const std::string& paragraph);

// Reads a stream; `name` is what error messages call it.
DocumentCorpus read_documents(std::istream& in, const std::string& name, const DocumentOptions& options = {});
// Reads a file; IOError if it cannot be opened.
DocumentCorpus load_documents(const std::string& path, const DocumentOptions& options = {});

// A split whose two sides never share a document.
struct DocumentSplit {
  std::vector<Document> train, test;
};

// A seeded split that keeps each class's share: in every class of n documents,
// round(test_fraction * n) go to test, chosen by the generator, but at least 1 and at most
// n - 1 when n >= 2 (each side sees the class); a class of one document stays in train.
// Both sides keep the order of `documents`. ValueError if test_fraction is not in (0, 1).
DocumentSplit stratified_split(const std::vector<Document>& documents, double test_fraction, Generator& gen);

// A padded batch for a hierarchical model: words [B, S, W], S the most sentences of a
// document in the batch, W the longest sentence. Padding is <pad> (id 0) everywhere: the
// end of a short sentence, and whole sentences after a document's last.
struct DocumentBatch {
  Index words;                               // [B, S, W] word ids (Vocab ids, <pad> = 0)
  std::vector<std::size_t> sentence_counts;  // [B] sentences in each document (>= 1)
  std::vector<std::size_t> word_counts;      // [B * S] words of each sentence, row-major (b * S + s); 0 for a padded sentence
  Index labels;                              // [B]
  std::vector<std::size_t> indices;          // which documents, as positions in the list given

  std::size_t size() const { return sentence_counts.size(); }  // B
};

// One batch of documents[indices[0]], documents[indices[1]], ... Unknown words become <unk>.
// ValueError for an empty list, an index out of range, or a document without a sentence
// (or with an empty one), naming it.
DocumentBatch make_document_batch(const std::vector<Document>& documents, const std::vector<std::size_t>& indices,
                                  const Vocab& vocab);

// One epoch of batches in batch_order() (batch.hpp); with options.sort_buckets > 0 a batch
// holds documents of similar padded size, sentences x longest sentence (less padding).
// A batch is padded to its most sentences and its longest sentence, so one very long page
// makes the whole batch large: read a corpus with max_sentences and max_words for a model.
std::vector<DocumentBatch> make_document_batches(const std::vector<Document>& documents, const Vocab& vocab,
                                                 const BatchOptions& options, Generator& gen);

// All sentences of all documents, in order, e.g. for Vocab::build.
std::vector<Tokens> document_sentences(const std::vector<Document>& documents);

}  // namespace attn::data
