// The pages and notebooks hold no control characters: a LaTeX "\tanh" or "\bar"
// written through a string that interpreted "\t" and "\b" becomes TAB and BACKSPACE
// bytes, which no renderer shows. Markdown files are read as they are; notebooks
// are parsed, and every cell's source and text output checked (JSON escapes
// would hide the bytes in the file itself).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// "line L: byte 0xNN" for the first control character other than '\n', or "".
std::string first_control(const std::string& text) {
  std::size_t line = 1;
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '\n') ++line;
    else if (c < 0x20 || c == 0x7f) {
      std::ostringstream ss;
      ss << "line " << line << ": byte 0x" << std::hex << int(c);
      return ss.str();
    }
  }
  return "";
}

// A notebook field is a string or a list of lines.
std::string joined(const nlohmann::json& field) {
  if (field.is_string()) return field.get<std::string>();
  std::string text;
  for (const auto& line : field) text += line.get<std::string>();
  return text;
}

}  // namespace

TEST_CASE("no page in docs/ holds a control character other than a newline") {
  const fs::path docs = fs::path(ATTN_SOURCE_DIR) / "docs";
  std::size_t checked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(docs)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".md") continue;
    CAPTURE(entry.path().string());
    CHECK(first_control(read_all(entry.path())) == "");
    ++checked;
  }
  CHECK(checked >= 10);  // the chapters at least: the walk found the pages
}

TEST_CASE("no notebook cell (source or text output) holds a control character other than a newline") {
  const fs::path notebooks = fs::path(ATTN_SOURCE_DIR) / "notebooks";
  std::size_t checked = 0;
  for (const auto& entry : fs::directory_iterator(notebooks)) {
    if (entry.path().extension() != ".ipynb") continue;
    const auto nb = nlohmann::json::parse(read_all(entry.path()));
    std::size_t index = 0;
    for (const auto& cell : nb.at("cells")) {
      const std::string source = joined(cell.at("source"));
      CAPTURE(entry.path().filename().string());
      CAPTURE(index);
      CHECK(first_control(source) == "");
      if (cell.contains("outputs"))
        for (const auto& out : cell.at("outputs"))
          if (out.contains("text")) CHECK(first_control(joined(out.at("text"))) == "");
      ++index;
    }
    ++checked;
  }
  CHECK(checked >= 10);
}
