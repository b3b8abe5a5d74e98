// A document's attention drawn on its words (see attention_text.hpp).
#include "attention_text.hpp"

#include "svg.hpp"
#include "../core/errors.hpp"

#include <xtensor/xarray.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace attn::viz {

namespace {

constexpr int kCharWidth = 8;   // monospace at font-size 13: every word's box is as wide as its letters
constexpr int kLine = 22;       // pixels per line of text
constexpr int kBar = 60;        // the sentence bar's full length, for a weight of 1
constexpr int kTextLeft = 20 + kBar + 50;

}  // namespace

std::string attention_text_svg(const std::vector<std::vector<std::string>>& sentences,
                               const xt::xarray<double>& sentence_weights, const xt::xarray<double>& word_weights,
                               const AttentionTextOptions& o) {
  const std::size_t S = sentences.size();
  std::size_t longest = 0;
  for (const auto& s : sentences) longest = std::max(longest, s.size());
  if (sentence_weights.dimension() != 1 || sentence_weights.shape()[0] != S || word_weights.dimension() != 2 ||
      word_weights.shape()[0] != S || word_weights.shape()[1] < longest)
    throw ShapeError("attention_text_svg: expected sentence_weights [" + std::to_string(S) + "] and word_weights [" +
                     std::to_string(S) + ", >= " + std::to_string(longest) + "] for " + std::to_string(S) +
                     " sentences, got " + shape_str(Shape(sentence_weights.shape().begin(), sentence_weights.shape().end())) +
                     " and " + shape_str(Shape(word_weights.shape().begin(), word_weights.shape().end())));
  // sqrt(p_s) p_w of every word, shaded against the largest of the document (the paper's section 3.6).
  double top = 0;
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t w = 0; w < sentences[s].size(); ++w)
      top = std::max(top, std::sqrt(std::max(0.0, sentence_weights(s))) * word_weights(s, w));
  const int title_h = o.title.empty() ? 10 : 36;
  std::ostringstream body;
  int y = title_h, widest = kTextLeft;
  for (std::size_t s = 0; s < S; ++s) {
    const double ws = sentence_weights(s);
    body << "<rect x=\"20\" y=\"" << y + 4 << "\" width=\"" << std::max(1, int(kBar * ws + 0.5)) << "\" height=\""
         << kLine - 8 << "\" fill=\"#c0392b\"><title>sentence " << s + 1 << ": " << format_number(ws)
         << "</title></rect>\n";
    if (o.show_weights) {
      // Two decimals keep the label inside its margin (the exact weight is the bar's <title>).
      char label[16];
      if (ws < 0.005) std::snprintf(label, sizeof label, "<.01");
      else std::snprintf(label, sizeof label, "%.2f", ws);
      body << "<text x=\"" << 20 + kBar + 6 << "\" y=\"" << y + 15 << "\" font-size=\"11\" fill=\"#444\">"
           << escape_xml(label) << "</text>\n";
    }
    int x = kTextLeft;
    for (std::size_t w = 0; w < sentences[s].size(); ++w) {
      const std::string& word = sentences[s][w];
      const int width = kCharWidth * static_cast<int>(display_width(word)) + 6;
      if (x > kTextLeft && x + width > o.max_width) {  // wrap
        x = kTextLeft;
        y += kLine;
      }
      const double shade = top > 0 ? std::sqrt(std::max(0.0, ws)) * word_weights(s, w) / top : 0.0;
      body << "<rect x=\"" << x << "\" y=\"" << y + 2 << "\" width=\"" << width << "\" height=\"" << kLine - 4
           << "\" fill=\"#2e86de\" fill-opacity=\"" << format_number(0.85 * shade) << "\"><title>"
           << escape_xml(word) << ": " << format_number(word_weights(s, w)) << "</title></rect>\n"
           << "<text x=\"" << x + 3 << "\" y=\"" << y + 15 << "\">" << escape_xml(word) << "</text>\n";
      x += width + 2;
      widest = std::max(widest, x);
    }
    y += kLine + 4;
  }
  const int width = std::max({widest + 20, 9 * static_cast<int>(display_width(o.title)) + 20, 300});
  std::ostringstream svg;
  begin_svg(svg, width, y + 10, o.title);
  svg << "<g font-family=\"monospace\" font-size=\"13\">\n" << body.str() << "</g>\n</svg>\n";
  return svg.str();
}

}  // namespace attn::viz
