// Vocab: the two-way map between tokens and the integer ids a model sees.
//
//   Vocab v = Vocab::build({split_whitespace("the cat sat"), split_whitespace("the dog")});
//   v.encode({"the", "dog"});      // {4, 6}
//   v.encode({"the", "bird"});     // {4, 3}: "bird" is unknown, so <unk>
//   v.decode({1, 4, 6, 2, 0, 0});  // {"the", "dog"}: specials dropped, stops at <eos>
//
// The first four ids are always the special tokens:
//   0 <pad>  fills the end of shorter sentences in a batch (the loss ignores it)
//   1 <bos>  "begin of sentence": the <start> token the decoder is fed first
//   2 <eos>  "end of sentence": the decoder emits it to say it is done
//   3 <unk>  stands for any token the vocabulary does not know
#pragma once

#include "example.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace attn::data {

class Vocab {
 public:
  static constexpr std::int64_t pad_id = 0;
  static constexpr std::int64_t bos_id = 1;
  static constexpr std::int64_t eos_id = 2;
  static constexpr std::int64_t unk_id = 3;
  static const char* const pad_token;  // "<pad>"
  static const char* const bos_token;  // "<bos>"
  static const char* const eos_token;  // "<eos>"
  static const char* const unk_token;  // "<unk>"

  Vocab();  // the four special tokens only
  // The specials, then `tokens` in the order given (repeats are ignored).
  explicit Vocab(const std::vector<std::string>& tokens);

  // From tokenized sentences: every token seen at least `min_freq` times,
  // most frequent first (ties in alphabetical order, so the ids are reproducible),
  // at most `max_size` of them besides the specials (0: no limit). Every other
  // token will read as <unk>.
  static Vocab build(const std::vector<Tokens>& sentences, std::size_t min_freq = 1, std::size_t max_size = 0);

  std::int64_t add(const std::string& token);  // its id (a new one if unseen)
  std::size_t size() const { return tokens_.size(); }
  bool contains(const std::string& token) const { return ids_.count(token) > 0; }
  static bool is_special(std::int64_t id) { return id >= 0 && id <= unk_id; }

  // token -> id (unk_id if unknown); id -> token (ValueError if out of range).
  std::int64_t id(const std::string& token) const;
  const std::string& token(std::int64_t id) const;
  const std::vector<std::string>& tokens() const { return tokens_; }

  // Tokens -> ids. Unknown tokens become unk_id, or, when `strict`, throw a
  // ValueError that names the first unknown token and its position.
  std::vector<std::int64_t> encode(const Tokens& tokens, bool strict = false) const;
  // Ids -> tokens. With `skip_special`, <pad> and <bos> are dropped and
  // decoding stops at the first <eos>, which turns a model's output into a sentence.
  Tokens decode(const std::vector<std::int64_t>& ids, bool skip_special = true) const;

  // The tokens in id order as a JSON document, {"tokens": ["<pad>", ...]},
  // so a checkpoint can store the vocabulary next to the weights.
  std::string to_json() const;
  // Throws IOError if `text` is not such a document.
  static Vocab from_json(const std::string& text);

  bool operator==(const Vocab& other) const { return tokens_ == other.tokens_; }
  bool operator!=(const Vocab& other) const { return !(*this == other); }

 private:
  std::vector<std::string> tokens_;                     // id -> token
  std::unordered_map<std::string, std::int64_t> ids_;  // token -> id
};

// Tokenizers. Both keep every character: join them back with join().
// split_whitespace("Va  !\n") == {"Va", "!"}     (runs of spaces, tabs, newlines)
Tokens split_whitespace(const std::string& text);
// split_chars("été 1") == {"é", "t", "é", " ", "1"}: one token per UTF-8
// character (a byte that is not valid UTF-8 becomes a token of its own).
Tokens split_chars(const std::string& text);
// True if `text` is well-formed UTF-8 (the corpus loader checks each line).
bool is_valid_utf8(const std::string& text);
// join({"a", "b"}, " ") == "a b"; join(split_chars(s), "") == s.
std::string join(const Tokens& tokens, const std::string& separator = " ");

}  // namespace attn::data
