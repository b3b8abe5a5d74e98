#include "history.hpp"

#include <algorithm>
#include <set>

namespace kernel {

bool glob_match(const std::string& pattern, const std::string& text) {
  size_t p = 0, t = 0, star = std::string::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p, ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;  // try the star as empty first; widen it on a mismatch
      resume = t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

void History::record(int line, const std::string& input) { entries_.push_back({line, input, std::nullopt}); }

void History::set_output(int line, const std::string& output) {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it)
    if (it->line == line) {
      it->output = output;
      return;
    }
}

nl::json History::item(const Entry& e, bool output) const {
  if (!output) return nl::json::array({session, e.line, e.input});
  return nl::json::array({session, e.line, nl::json::array({e.input, e.output ? nl::json(*e.output) : nl::json()})});
}

nl::json History::get_tail_impl(int n, bool, bool output) const {
  nl::json items = nl::json::array();
  const size_t count = std::min(entries_.size(), static_cast<size_t>(std::max(n, 0)));
  for (size_t k = entries_.size() - count; k < entries_.size(); ++k) items.push_back(item(entries_[k], output));
  return {{"status", "ok"}, {"history", items}};
}

nl::json History::get_range_impl(int session_asked, int start, int stop, bool, bool output) const {
  nl::json items = nl::json::array();
  if (session_asked == 0 || session_asked == session)
    for (const auto& e : entries_)
      if (e.line >= start && e.line < stop) items.push_back(item(e, output));  // stop is exclusive, as in IPython
  return {{"status", "ok"}, {"history", items}};
}

nl::json History::search_impl(const std::string& pattern, bool, bool output, int n, bool unique) const {
  // The n most recent matches, oldest first; with unique, each input once (its most recent run).
  std::vector<const Entry*> found;
  std::set<std::string> seen;
  for (auto it = entries_.rbegin(); it != entries_.rend() && found.size() < static_cast<size_t>(std::max(n, 0));
       ++it) {
    if (!glob_match(pattern, it->input)) continue;
    if (unique && !seen.insert(it->input).second) continue;
    found.push_back(&*it);
  }
  nl::json items = nl::json::array();
  for (auto it = found.rbegin(); it != found.rend(); ++it) items.push_back(item(**it, output));
  return {{"status", "ok"}, {"history", items}};
}

}  // namespace kernel
