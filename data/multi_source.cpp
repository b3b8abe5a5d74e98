#include "multi_source.hpp"

#include "../core/errors.hpp"

#include <unordered_map>

namespace attn::data {

namespace {

std::unordered_map<std::string, std::size_t> index_of_sources(const std::vector<std::pair<std::string, std::string>>& pairs,
                                                              const char* which) {
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < pairs.size(); ++i)
    if (!index.emplace(pairs[i].first, i).second)
      throw ValueError(std::string("join_translations: the ") + which + " corpus lists the source \"" + pairs[i].first +
                       "\" twice (pairs " + std::to_string(index.at(pairs[i].first)) + " and " + std::to_string(i) + ")");
  return index;
}

}  // namespace

std::vector<TwoTranslations> join_translations(const std::vector<std::pair<std::string, std::string>>& first,
                                               const std::vector<std::pair<std::string, std::string>>& second) {
  index_of_sources(first, "first");
  const auto in_second = index_of_sources(second, "second");
  std::vector<TwoTranslations> out;
  for (const auto& [source, translation] : first) {
    auto it = in_second.find(source);
    if (it != in_second.end()) out.push_back({source, translation, second[it->second].second});
  }
  return out;
}

Tokens pack_sources(const std::vector<Tokens>& sources) {
  if (sources.empty()) throw ValueError("pack_sources: no sources to pack");
  Tokens packed;
  for (std::size_t k = 0; k < sources.size(); ++k) {
    if (sources[k].empty()) throw ValueError("pack_sources: source " + std::to_string(k) + " is empty");
    for (const std::string& token : sources[k])
      if (token == kSeparator)
        throw ValueError("pack_sources: source " + std::to_string(k) + " holds the separator token " + kSeparator);
    if (k > 0) packed.push_back(kSeparator);
    packed.insert(packed.end(), sources[k].begin(), sources[k].end());
  }
  return packed;
}

}  // namespace attn::data
