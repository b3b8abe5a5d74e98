#include "help.hpp"

#include <algorithm>
#include <cctype>
#include <dirent.h>
#include <fstream>
#include <regex>
#include <sstream>
#include <sys/stat.h>
#include <vector>

namespace kernel {

namespace {

bool is_dir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void list_files(const std::string& dir, const std::string& ext, std::vector<std::string>& out) {
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) names.push_back(e->d_name);
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    if (n[0] == '.') continue;
    std::string p = dir + "/" + n;
    if (is_dir(p))
      list_files(p, ext, out);
    else if (n.size() > ext.size() && n.compare(n.size() - ext.size(), ext.size(), ext) == 0)
      out.push_back(p);
  }
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(f, l);) lines.push_back(l);
  return lines;
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a);
}

std::string url_encode(const std::string& s) {
  std::string out;
  const char* hex = "0123456789ABCDEF";
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '_' || c == '-' || c == '.') out += static_cast<char>(c);
    else out += std::string("%") + hex[c >> 4] + hex[c & 15];
  }
  return out;
}

struct Match {
  std::string file;
  std::string ns;           // the enclosing namespaces, "attn::fused"
  std::string comment;      // the doc comment above (or after, on its line), without the slashes
  std::string declaration;  // up to its ';' or '{'
};

// A comment line that only divides a header into sections (`// ---- softmax (...) ----`):
// a heading for the header's reader, not the function's documentation.
bool is_divider(const std::string& comment) {
  return comment.size() >= 4 && (comment.compare(0, 4, "----") == 0 || comment.compare(0, 4, "====") == 0);
}

// The namespaces open at the start of each line, from `namespace a {` and braces (comments and
// strings aside, which attn's headers keep free of braces that matter).
std::vector<std::string> namespaces_by_line(const std::vector<std::string>& lines) {
  static const std::regex ns_re("^\\s*(inline\\s+)?namespace\\s+([\\w:]+)\\s*\\{");
  std::vector<std::string> out;
  std::vector<std::pair<std::string, int>> open;  // name, brace depth inside it
  int depth = 0;
  for (const auto& raw : lines) {
    std::string joined;
    for (const auto& n : open) joined += (joined.empty() ? "" : "::") + n.first;
    out.push_back(joined);
    const std::string line = raw.substr(0, raw.find("//"));
    std::smatch m;
    const bool opens = std::regex_search(line, m, ns_re);
    bool named = false;
    for (char c : line) {
      if (c == '{') {
        ++depth;
        if (opens && !named) open.emplace_back(m[2].str(), depth), named = true;
      } else if (c == '}') {
        if (!open.empty() && open.back().second == depth) open.pop_back();
        --depth;
      }
    }
  }
  return out;
}

// Declarations of `name` in one header: a class or struct, or a function.
void find_in(const std::string& file, const std::string& name, std::vector<Match>& out) {
  std::vector<std::string> lines = read_lines(file);
  if (std::none_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(name) != std::string::npos; }))
    return;
  const std::vector<std::string> namespaces = namespaces_by_line(lines);
  const std::regex type_re("^\\s*(template\\s*<.*>\\s*)?(struct|class)\\s+(\\w+\\s+)?" + name + "\\b[^;]*$");
  const std::regex fn_re("^\\s*(template\\s*<.*>\\s*)?(inline\\s+|static\\s+|constexpr\\s+)*[\\w:<>,\\s*&]*[\\w>*&]\\s+[*&]*" +
                         name + "\\s*\\(");
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    std::string t = trim(l);
    if (t.rfind("//", 0) == 0 || t.rfind("return", 0) == 0 || t.rfind("#", 0) == 0) continue;
    if (!std::regex_search(l, type_re) && !std::regex_search(l, fn_re)) continue;
    Match m;
    m.file = file;
    m.ns = namespaces[i];
    size_t first = i;
    if (first > 0 && trim(lines[first - 1]).rfind("template", 0) == 0) --first;
    std::vector<std::string> comment;
    for (size_t k = first; k > 0 && trim(lines[k - 1]).rfind("//", 0) == 0; --k) {
      std::string c = trim(lines[k - 1]).substr(2);
      c = c.empty() || c[0] != ' ' ? c : c.substr(1);
      if (is_divider(c)) break;
      comment.insert(comment.begin(), c);
    }
    for (const auto& c : comment) m.comment += c + "\n";
    for (size_t k = first; k < lines.size() && k < first + 8; ++k) {
      std::string d = lines[k];
      size_t brace = d.find('{');
      size_t semi = d.find(';');
      bool done = semi != std::string::npos || brace != std::string::npos;
      if (semi != std::string::npos && brace == std::string::npos) {  // `Tensor f(...);  // what it does`
        const size_t note = d.find("//", semi);
        if (note != std::string::npos) m.comment += trim(d.substr(note + 2)) + "\n";
        d = d.substr(0, semi + 1);
      }
      if (brace != std::string::npos) d = d.substr(0, brace);
      m.declaration += trim(d) + (done ? "" : "\n");
      if (done) break;
    }
    out.push_back(m);
  }
}

// The backend's and the helpers' namespaces: not what a learner calls.
bool internal_namespace(const std::string& ns) {
  for (const char* inner : {"fused", "detail", "kernels", "backend", "profiler", "internal"})
    if (("::" + ns + "::").find(std::string("::") + inner + "::") != std::string::npos) return true;
  return false;
}

// The docs page that explains `name`: docs/ops/<name>.md, else the first docs
// page that mentions `name(` in code.
std::string docs_page(const std::string& root, const std::string& name) {
  std::vector<std::string> pages;
  list_files(root + "/docs/ops", ".md", pages);
  for (const auto& p : pages)
    if (p.size() > name.size() + 3 && p.compare(p.size() - name.size() - 3, std::string::npos, name + ".md") == 0)
      return p;
  for (const auto& p : pages) {
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    const std::string text = s.str();
    if (text.find("`" + name + "(") != std::string::npos || text.find("attn::" + name + "(") != std::string::npos)
      return p;
  }
  return "";
}

}  // namespace

std::vector<std::string> attn_names(const std::string& root) {
  std::vector<std::string> headers;
  for (const char* dir : {"core", "nn", "models", "viz"}) list_files(root + "/" + dir, ".hpp", headers);
  const std::regex decl_re("^\\s*(template\\s*<.*>\\s*)?(struct|class|using)\\s+([A-Za-z_]\\w*)|"
                           "^\\s*(inline\\s+|static\\s+|constexpr\\s+)*[\\w:<>,*&]+[*&]?\\s+[*&]?([A-Za-z_]\\w*)\\s*\\(");
  std::vector<std::string> names;
  for (const auto& h : headers)
    for (const auto& line : read_lines(h)) {
      std::smatch m;
      if (trim(line).rfind("//", 0) == 0 || !std::regex_search(line, m, decl_re)) continue;
      std::string n = m[3].matched ? m[3].str() : m[5].str();
      if (n.empty() || n == "operator" || n == "return") continue;
      names.push_back(n);
    }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::string name_at(const std::string& code, size_t cursor) {
  auto is_name = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':'; };
  cursor = std::min(cursor, code.size());
  size_t begin = cursor, end = cursor;
  while (begin > 0 && is_name(code[begin - 1])) --begin;
  while (end < code.size() && is_name(code[end])) ++end;
  std::string name = code.substr(begin, end - begin);
  while (!name.empty() && name.back() == ':') name.pop_back();
  while (!name.empty() && name.front() == ':') name.erase(0, 1);
  return name;
}

std::string called_name_at(const std::string& code, size_t cursor) {
  cursor = std::min(cursor, code.size());
  int depth = 0;
  for (size_t i = cursor; i-- > 0;) {
    if (code[i] == ')') ++depth;
    else if (code[i] == '(' && depth > 0) --depth;
    else if (code[i] == '(') {
      size_t end = i;
      while (end > 0 && std::isspace(static_cast<unsigned char>(code[end - 1]))) --end;
      return end > 0 ? name_at(code, end) : "";
    } else if (code[i] == ';' || code[i] == '{' || code[i] == '}') break;
  }
  return "";
}

HelpPage help_for(const std::string& qualified, const std::string& root) {
  HelpPage page;
  if (qualified.empty()) return page;
  if (qualified.rfind("std::", 0) == 0) {
    const std::string url = "https://en.cppreference.com/mwiki/index.php?title=Special:Search&search=" +
                            url_encode(qualified);
    page.found = true;
    page.text = qualified + ": a standard library name, see cppreference:\n" + url + "\n";
    page.html = "<p><code>" + html_escape(qualified) + "</code>: a standard library name, see <a href=\"" + url +
                "\" target=\"_blank\">cppreference</a>.</p>";
    return page;
  }
  size_t colon = qualified.rfind("::");
  const std::string name = colon == std::string::npos ? qualified : qualified.substr(colon + 2);
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return page;

  std::vector<std::string> headers;
  for (const char* dir : {"core", "nn", "models", "viz"}) list_files(root + "/" + dir, ".hpp", headers);
  std::vector<Match> found;
  for (const auto& h : headers) find_in(h, name, found);
  // The name's own namespace first (attn for an unqualified name), alone when it has any; else
  // the public declarations before the backend's.
  const std::string wanted = colon == std::string::npos ? "attn" : qualified.substr(0, colon);
  std::vector<Match> matches;
  for (const auto& m : found)
    if (m.ns == wanted || m.ns == "attn::" + wanted) matches.push_back(m);
  if (matches.empty()) {
    matches = found;
    std::stable_sort(matches.begin(), matches.end(), [](const Match& a, const Match& b) {
      return !internal_namespace(a.ns) && internal_namespace(b.ns);
    });
  }
  if (matches.size() > 6) matches.resize(6);
  if (matches.empty()) return page;
  page.found = true;
  const std::string docs = docs_page(root, name);
  std::string html;
  for (const auto& m : matches) {
    const std::string rel = m.file.substr(root.size() + 1);
    page.text += (m.ns.empty() ? "" : "namespace " + m.ns + ": ") + m.declaration + "\n";
    if (!m.comment.empty()) page.text += m.comment;
    page.text += "  (" + rel + ")\n\n";
    html += "<pre>" + html_escape(m.declaration) + "</pre>";
    if (!m.comment.empty()) html += "<p>" + html_escape(m.comment) + "</p>";
    html += "<p><small>" + html_escape(rel) + "</small></p>";
  }
  if (!docs.empty()) {
    const std::string rel = docs.substr(root.size() + 1);
    page.text += "Docs: " + rel + " (" + docs + ")\n";
    html += "<p>Docs: <a href=\"file://" + html_escape(docs) + "\">" + html_escape(rel) + "</a></p>";
  }
  page.html = html;
  return page;
}

}  // namespace kernel
