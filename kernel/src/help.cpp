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
  std::string comment;      // the doc comment above, without the slashes
  std::string declaration;  // up to its ';' or '{'
};

// Declarations of `name` in one header: a class or struct, or a function.
void find_in(const std::string& file, const std::string& name, std::vector<Match>& out) {
  std::vector<std::string> lines = read_lines(file);
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
    size_t first = i;
    if (first > 0 && trim(lines[first - 1]).rfind("template", 0) == 0) --first;
    std::vector<std::string> comment;
    for (size_t k = first; k > 0 && trim(lines[k - 1]).rfind("//", 0) == 0; --k) {
      std::string c = trim(lines[k - 1]).substr(2);
      comment.insert(comment.begin(), c.empty() || c[0] != ' ' ? c : c.substr(1));
    }
    for (const auto& c : comment) m.comment += c + "\n";
    for (size_t k = first; k < lines.size() && k < first + 8; ++k) {
      std::string d = lines[k];
      size_t brace = d.find('{');
      bool done = d.find(';') != std::string::npos || brace != std::string::npos;
      if (brace != std::string::npos) d = d.substr(0, brace);
      m.declaration += trim(d) + (done ? "" : "\n");
      if (done) break;
    }
    out.push_back(m);
    if (out.size() >= 4) return;
  }
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
  std::vector<Match> matches;
  for (const auto& h : headers) {
    find_in(h, name, matches);
    if (matches.size() >= 4) break;
  }
  if (matches.empty()) return page;
  page.found = true;
  const std::string docs = docs_page(root, name);
  std::string html;
  for (const auto& m : matches) {
    const std::string rel = m.file.substr(root.size() + 1);
    page.text += m.declaration + "\n";
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
