// Byte-pair encoding (Sennrich, Haddow & Birch 2016, "Neural Machine Translation of Rare
// Words with Subword Units"): words split into subwords, so that no word is unknown.
//
//   Bpe bpe = Bpe::learn(sentences, 2000);          // 2,000 merges from tokenized text
//   bpe.encode({"unreadable", "file"});             // {"un@@", "read@@", "able", "file"}
//   Bpe::decode({"un@@", "read@@", "able", "file"}) // {"unreadable", "file"}
//
// Learning starts from every word as its characters plus an end-of-word mark "</w>",
// counted with the word's frequency, then repeats `merges` times: count every pair of
// adjacent symbols over all words, merge the most frequent pair everywhere into one
// new symbol. Frequent words end up as one symbol, rare ones as a few frequent pieces.
// Encoding a word applies the learned merges in the order they were learned.
//
// Subwords are written as subword-nmt writes them: every piece of a word but its last
// ends with "@@", so decoding joins a piece ending with "@@" to the next one.
#pragma once

#include "example.hpp"

#include <cstddef>
#include <map>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace attn::data {

class Bpe {
 public:
  using Pair = std::pair<std::string, std::string>;
  static constexpr const char* end_of_word = "</w>";
  static constexpr const char* continuation = "@@";

  Bpe() = default;  // no merges: every word becomes its characters
  explicit Bpe(std::vector<Pair> merges);

  // Learns up to `merges` merges from the words of `sentences`. It stops early when no
  // pair occurs at least `min_frequency` times. Ties go to the pair first in string
  // order, so the merges are reproducible.
  // `on_merge(k)`, if given, is called after the k-th merge is learned (a command's progress line).
  static Bpe learn(const std::vector<Tokens>& sentences, std::size_t merges, std::size_t min_frequency = 2,
                   const std::function<void(std::size_t)>& on_merge = {});

  // Words -> subwords ("@@" on every piece but a word's last). A word that already
  // ends with "@@" would read as a piece on decoding: ValueError naming it.
  Tokens encode(const Tokens& words) const;
  // Subwords -> words: a piece ending with "@@" is joined to the next one.
  static Tokens decode(const Tokens& subwords);

  const std::vector<Pair>& merges() const { return merges_; }

  // As text: a header line "#attn bpe 1", then one merge per line, "a b".
  std::string to_text() const;
  // Throws IOError naming `where` and the line when `text` is not such a file.
  static Bpe from_text(const std::string& text, const std::string& where = "bpe codes");

  bool operator==(const Bpe& other) const { return merges_ == other.merges_; }

 private:
  Tokens encode_word(const std::string& word) const;

  std::vector<Pair> merges_;
  std::map<Pair, std::size_t> rank_;  // merge -> its position in merges_
};

}  // namespace attn::data
