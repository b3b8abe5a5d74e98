#include "vocab.hpp"

#include "../io/json_file.hpp"
#include "../core/errors.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

namespace attn::data {

const char* const Vocab::pad_token = "<pad>";
const char* const Vocab::bos_token = "<bos>";
const char* const Vocab::eos_token = "<eos>";
const char* const Vocab::unk_token = "<unk>";

Vocab::Vocab() {
  for (const char* special : {pad_token, bos_token, eos_token, unk_token}) add(special);
}

Vocab::Vocab(const std::vector<std::string>& tokens) : Vocab() {
  for (const auto& t : tokens) add(t);
}

Vocab Vocab::build(const std::vector<Tokens>& sentences, std::size_t min_freq, std::size_t max_size) {
  std::map<std::string, std::size_t> counts;  // ordered: ties come out alphabetically
  for (const auto& sentence : sentences)
    for (const auto& t : sentence) ++counts[t];
  std::vector<std::pair<std::string, std::size_t>> kept;
  for (const auto& [token, count] : counts)
    if (count >= min_freq) kept.emplace_back(token, count);
  std::stable_sort(kept.begin(), kept.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (max_size > 0 && kept.size() > max_size) kept.resize(max_size);
  Vocab vocab;
  for (const auto& kv : kept) vocab.add(kv.first);
  return vocab;
}

std::int64_t Vocab::add(const std::string& token) {
  auto found = ids_.find(token);
  if (found != ids_.end()) return found->second;
  const auto new_id = static_cast<std::int64_t>(tokens_.size());
  tokens_.push_back(token);
  ids_.emplace(token, new_id);
  return new_id;
}

std::int64_t Vocab::id(const std::string& token) const {
  auto found = ids_.find(token);
  return found == ids_.end() ? unk_id : found->second;
}

const std::string& Vocab::token(std::int64_t id) const {
  if (id < 0 || id >= static_cast<std::int64_t>(tokens_.size()))
    throw ValueError("Vocab::token: id " + std::to_string(id) + " is out of range for a vocabulary of " +
                     std::to_string(tokens_.size()) + " tokens");
  return tokens_[static_cast<std::size_t>(id)];
}

std::vector<std::int64_t> Vocab::encode(const Tokens& tokens, bool strict) const {
  std::vector<std::int64_t> ids;
  ids.reserve(tokens.size());
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    auto found = ids_.find(tokens[i]);
    if (found == ids_.end() && strict)
      throw ValueError("Vocab::encode: unknown token '" + tokens[i] + "' at position " + std::to_string(i));
    ids.push_back(found == ids_.end() ? unk_id : found->second);
  }
  return ids;
}

Tokens Vocab::decode(const std::vector<std::int64_t>& ids, bool skip_special) const {
  Tokens out;
  for (std::int64_t i : ids) {
    if (skip_special && i == eos_id) break;
    if (skip_special && (i == pad_id || i == bos_id)) continue;
    out.push_back(token(i));
  }
  return out;
}

std::string Vocab::to_json() const { return nlohmann::json{{"tokens", tokens_}}.dump(); }

Vocab Vocab::from_json(const std::string& text) {
  std::vector<std::string> tokens;
  try {
    tokens = io::parse_json(text, "Vocab::from_json").at("tokens").get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    throw IOError(std::string("Vocab::from_json: expected {\"tokens\": [strings]}, got an error: ") + e.what());
  }
  const Vocab specials;
  if (tokens.size() < specials.size() || !std::equal(specials.tokens_.begin(), specials.tokens_.end(), tokens.begin()))
    throw IOError("Vocab::from_json: expected the tokens to start with <pad>, <bos>, <eos>, <unk>");
  Vocab vocab(tokens);
  if (vocab.size() != tokens.size())
    throw IOError("Vocab::from_json: a token appears twice in the list");
  return vocab;
}

Tokens split_whitespace(const std::string& text) {
  Tokens out;
  std::string current;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      if (!current.empty()) out.push_back(std::move(current));
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) out.push_back(std::move(current));
  return out;
}

namespace {
// How many bytes the UTF-8 character starting at text[i] takes: 1 to 4,
// or 0 if the bytes there are not a valid UTF-8 character.
std::size_t utf8_length(const std::string& text, std::size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  const std::size_t n = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2) return 0;  // continuation bytes are 10xxxxxx
  return n;
}
}  // namespace

Tokens split_chars(const std::string& text) {
  Tokens out;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = std::max<std::size_t>(utf8_length(text, i), 1);
    out.push_back(text.substr(i, n));
    i += n;
  }
  return out;
}

bool is_valid_utf8(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_length(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string join(const Tokens& tokens, const std::string& separator) {
  std::string out;
  for (std::size_t i = 0; i < tokens.size(); ++i) out += (i ? separator : "") + tokens[i];
  return out;
}

}  // namespace attn::data
