#include "bpe.hpp"

#include "../core/errors.hpp"
#include "vocab.hpp"

#include <cstdint>
#include <set>
#include <sstream>
#include <tuple>

namespace attn::data {

namespace {

// A word as symbols: its characters, then the end-of-word mark.
Tokens initial_symbols(const std::string& word) {
  Tokens symbols = split_chars(word);
  symbols.emplace_back(Bpe::end_of_word);
  return symbols;
}

// Every occurrence of (a, b), left to right, replaced by the one symbol a + b.
Tokens merge_pair(const Tokens& symbols, const Bpe::Pair& pair) {
  Tokens out;
  out.reserve(symbols.size());
  for (std::size_t i = 0; i < symbols.size(); ++i) {
    if (i + 1 < symbols.size() && symbols[i] == pair.first && symbols[i + 1] == pair.second) {
      out.push_back(symbols[i] + symbols[i + 1]);
      ++i;
    } else {
      out.push_back(symbols[i]);
    }
  }
  return out;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

Bpe::Bpe(std::vector<Pair> merges) : merges_(std::move(merges)) {
  for (std::size_t i = 0; i < merges_.size(); ++i) rank_.emplace(merges_[i], i);  // a repeat keeps its first rank
}

Bpe Bpe::learn(const std::vector<Tokens>& sentences, std::size_t merges, std::size_t min_frequency,
              const std::function<void(std::size_t)>& on_merge) {
  // The distinct words with their counts; each word a list of symbols.
  std::map<std::string, std::int64_t> frequency;
  for (const Tokens& sentence : sentences)
    for (const std::string& word : sentence) ++frequency[word];
  std::vector<Tokens> words;
  std::vector<std::int64_t> counts;
  for (const auto& [word, count] : frequency) {
    words.push_back(initial_symbols(word));
    counts.push_back(count);
  }

  // How often each adjacent pair occurs (weighted by the word counts), which words hold
  // it, and the pairs ordered by count (highest first, then string order) to find the best.
  std::map<Pair, std::int64_t> pair_count;
  std::map<Pair, std::set<std::size_t>> holders;
  using Entry = std::tuple<std::int64_t, Pair>;  // (-count, pair): std::set's first is the best
  std::set<Entry> by_count;
  auto change = [&](const Pair& pair, std::int64_t delta) {
    std::int64_t& c = pair_count[pair];
    if (c > 0) by_count.erase({-c, pair});
    c += delta;
    if (c > 0) by_count.insert({-c, pair});
  };
  auto add_word = [&](std::size_t w, std::int64_t sign) {
    for (std::size_t i = 0; i + 1 < words[w].size(); ++i) {
      Pair pair{words[w][i], words[w][i + 1]};
      change(pair, sign * counts[w]);
      if (sign > 0) holders[pair].insert(w);
    }
  };
  for (std::size_t w = 0; w < words.size(); ++w) add_word(w, +1);

  std::vector<Pair> learned;
  while (learned.size() < merges && !by_count.empty()) {
    const auto [negative_count, best] = *by_count.begin();
    if (-negative_count < static_cast<std::int64_t>(min_frequency)) break;
    learned.push_back(best);
    // Only the words that hold the pair change: take their old pairs out, put the new ones in.
    const std::set<std::size_t> affected = holders[best];
    for (std::size_t w : affected) {
      add_word(w, -1);
      words[w] = merge_pair(words[w], best);
      add_word(w, +1);
    }
    holders.erase(best);
    if (on_merge) on_merge(learned.size());
  }
  return Bpe(std::move(learned));
}

Tokens Bpe::encode_word(const std::string& word) const {
  Tokens symbols = initial_symbols(word);
  // Apply the earliest-learned merge present in the word, until none applies.
  while (symbols.size() > 1) {
    std::size_t best_rank = merges_.size();
    Pair best;
    for (std::size_t i = 0; i + 1 < symbols.size(); ++i) {
      auto it = rank_.find({symbols[i], symbols[i + 1]});
      if (it != rank_.end() && it->second < best_rank) {
        best_rank = it->second;
        best = it->first;
      }
    }
    if (best_rank == merges_.size()) break;
    symbols = merge_pair(symbols, best);
  }
  // The end-of-word mark goes; every piece but the last says that the word goes on.
  const std::string eow = end_of_word;
  if (symbols.back() == eow) symbols.pop_back();
  else symbols.back().resize(symbols.back().size() - eow.size());
  for (std::size_t i = 0; i + 1 < symbols.size(); ++i) symbols[i] += continuation;
  return symbols;
}

Tokens Bpe::encode(const Tokens& words) const {
  Tokens out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i].empty()) throw ValueError("Bpe::encode: word " + std::to_string(i) + " is empty");
    if (ends_with(words[i], continuation))
      throw ValueError("Bpe::encode: word " + std::to_string(i) + " '" + words[i] + "' ends with '" +
                       continuation + "', which marks a piece of a word; it would be joined to the next word");
    for (std::string& piece : encode_word(words[i])) out.push_back(std::move(piece));
  }
  return out;
}

Tokens Bpe::decode(const Tokens& subwords) {
  Tokens out;
  std::string word;
  bool open = false;  // the last piece ended with "@@": the next one continues it
  for (const std::string& piece : subwords) {
    if (ends_with(piece, continuation)) {
      word += piece.substr(0, piece.size() - 2);
      open = true;
    } else {
      out.push_back(word + piece);
      word.clear();
      open = false;
    }
  }
  if (open) out.push_back(word);  // a model may stop in the middle of a word
  return out;
}

std::string Bpe::to_text() const {
  std::string text = "#attn bpe 1\n";
  for (const auto& [a, b] : merges_) text += a + " " + b + "\n";
  return text;
}

Bpe Bpe::from_text(const std::string& text, const std::string& where) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != "#attn bpe 1")
    throw IOError(where + ":1: expected the header '#attn bpe 1' of a file written by attn bpe learn");
  std::vector<Pair> merges;
  for (std::size_t number = 2; std::getline(in, line); ++number) {
    const std::size_t space = line.find(' ');
    if (space == std::string::npos || space == 0 || space + 1 == line.size() ||
        line.find(' ', space + 1) != std::string::npos)
      throw IOError(where + ":" + std::to_string(number) + ": expected two symbols separated by one space, got '" +
                    line + "'");
    merges.emplace_back(line.substr(0, space), line.substr(space + 1));
  }
  return Bpe(std::move(merges));
}

}  // namespace attn::data
