#include "../helpers.hpp"

#include <fstream>
#include <sstream>

namespace viz = attn::viz;

TEST_CASE("heatmap_svg draws one cell per value, escaped labels and a colour bar") {
  xt::xarray<double> w = {{0.9, 0.1, 0.0}, {0.2, 0.3, 0.5}};
  const std::string svg = viz::heatmap_svg(w, {"a", "b"}, {"<bos>", "x", "y"}, {"weights"});
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("&lt;bos&gt;") != std::string::npos);
  CHECK(svg.find("<bos>") == std::string::npos);
  CHECK(svg.find("weights") != std::string::npos);
  std::size_t cells = 0;
  for (std::size_t at = svg.find("<title>"); at != std::string::npos; at = svg.find("<title>", at + 1)) ++cells;
  CHECK(cells == 6);
  CHECK(svg.find("#fde725") != std::string::npos);  // the colour bar reaches the top colour
}

TEST_CASE("heatmap label counts must match the values") {
  xt::xarray<double> w = {{0.5, 0.5}};
  CHECK_THROWS_WITH_SUBSTR(viz::heatmap_svg(w, {"a", "b"}, {"x", "y"}), attn::ShapeError, "1 row and 2 column");
  CHECK_THROWS_AS(viz::terminal_heatmap(xt::xarray<double>{1.0, 2.0}, {"a"}, {"x"}), attn::ShapeError);
}

TEST_CASE("line_plot_svg draws every series with a legend and axes") {
  viz::Series loss{"train loss", {1, 2, 3, 4}, {2.0, 1.0, 0.5, 0.25}};
  viz::Series acc{"test", {1, 2, 3, 4}, {0.1, 0.5, 0.8, 0.9}};
  viz::LinePlotOptions o;
  o.title = "loss";
  o.x_label = "step";
  const std::string svg = viz::line_plot_svg({loss, acc}, o);
  CHECK(svg.find("<polyline") != std::string::npos);
  CHECK(svg.find("train loss") != std::string::npos);
  CHECK(svg.find(">step<") != std::string::npos);
  CHECK_THROWS_AS(viz::line_plot_svg({viz::Series{"bad", {1, 2}, {1}}}), attn::ShapeError);
  CHECK(viz::line_plot_svg({}).find("<svg") != std::string::npos);  // empty axes, no crash
}

TEST_CASE("line_plot_svg labels whole-number ticks in full: a step axis reads 1000, not 1e+03") {
  const std::string svg = viz::line_plot_svg({viz::Series{"loss", {0, 500, 1000}, {3.0, 1.5, 0.25}}});
  CHECK(svg.find(">1000</text>") != std::string::npos);
  CHECK(svg.find("e+0") == std::string::npos);
  CHECK(svg.find(">0.5</text>") != std::string::npos);  // fractions keep 3 significant digits
}

TEST_CASE("terminal_heatmap shades from blank to full block") {
  xt::xarray<double> w = {{1.0, 0.0}, {0.0, 1.0}};
  const std::string text = viz::terminal_heatmap(w, {"y1", "y2"}, {"a", "b"});
  std::istringstream lines(text);
  std::string header, rule, row1, row2;
  std::getline(lines, header), std::getline(lines, rule), std::getline(lines, row1), std::getline(lines, row2);
  CHECK(header.find("a") != std::string::npos);
  CHECK(row1.find("y1") == 0);
  CHECK(row1.find("\u2588") < row1.find("  "));  // the full block comes before the blank cell
  CHECK(row2.find("\u2588") != std::string::npos);
}

TEST_CASE("terminal_heatmap shows whole words: columns as wide as their word, wrapped past max_width") {
  xt::xarray<double> w = {{1.0, 0.0, 0.0}, {0.0, 0.5, 0.5}};
  const std::string text = viz::terminal_heatmap(w, {"aucun", "fichier"}, {"no", "such", "directory"});
  std::istringstream lines(text);
  std::string header, rule, row1;
  std::getline(lines, header), std::getline(lines, rule), std::getline(lines, row1);
  CHECK(header == "        \u2502no such directory ");  // one header line: every word whole
  CHECK(row1 == "  aucun \u2502\u2588\u2588                ");
  // 30 columns of 12-letter words cannot fit in 100 characters: the words wrap, none is cut.
  std::vector<std::string> words;
  for (int i = 0; i < 30; ++i) words.push_back("abcdefghij" + std::to_string(10 + i));
  const std::string wide = viz::terminal_heatmap(xt::zeros<double>({std::size_t(1), std::size_t(30)}), {"x"}, words, 120);
  std::istringstream wide_lines(wide);
  std::vector<std::string> all;
  for (std::string line; std::getline(wide_lines, line);) all.push_back(line);
  const std::size_t rule_line = all.size() - 2;  // the rule sits between the headers and the one row
  CHECK(all[rule_line].find("\u253c") != std::string::npos);
  CHECK(rule_line == 6);  // columns of 3 would need 123 characters: 12 letters in pieces of 2, six header lines
  for (const auto& line : all) {
    std::size_t chars = 0;
    for (unsigned char c : line) chars += (c & 0xC0) != 0x80;
    CHECK(chars <= 120);
  }
  // Reading the header lines column by column gives each word back whole.
  std::string first;
  for (std::size_t k = 0; k < rule_line; ++k) first += all[k].substr(all[k].find("\u2502") + 3, 2);
  CHECK(first == "abcdefghij10");
}

TEST_CASE("save_text writes the file and reports a bad path") {
  viz::save_text("test_plot_out.svg", "<svg/>");
  std::ifstream in("test_plot_out.svg");
  std::string s;
  std::getline(in, s);
  CHECK(s == "<svg/>");
  std::remove("test_plot_out.svg");
  CHECK_THROWS_WITH_SUBSTR(viz::save_text("/no/such/dir/x.svg", "x"), attn::IOError, "/no/such/dir/x.svg");
}

TEST_CASE("spectrogram_svg: one cell per frame and band, the lowest band at the bottom") {
  xt::xarray<double> f = {{0.0, 1.0}, {2.0, 3.0}, {4.0, 5.0}};  // [T = 3, n_mels = 2]
  viz::SpectrogramOptions o;
  const std::string svg = viz::spectrogram_svg(f, o);
  const std::string map = svg.substr(0, svg.find("<defs>"));  // the cells come before the colour bar
  std::size_t cells = 0;
  for (std::size_t at = map.find("<rect x="); at != std::string::npos; at = map.find("<rect x=", at + 1)) ++cells;
  CHECK(cells == 6);
  // A colour bar from the smallest value to the largest says what a colour is worth.
  REQUIRE(svg.find("fill=\"url(#attn-viridis)\"") != std::string::npos);
  CHECK(svg.find("font-size=\"11\">0</text>") != std::string::npos);
  CHECK(svg.find("font-size=\"11\">5</text>") != std::string::npos);
  // The smallest value is dark, the largest yellow; band 0 of frame 0 sits below band 1.
  CHECK(svg.find("y=\"13\" width=\"3\" height=\"3\" fill=\"#440154\"") != std::string::npos);
  CHECK(svg.find("x=\"56\" y=\"10\" width=\"3\" height=\"3\" fill=\"#fde725\"") != std::string::npos);
  CHECK_THROWS_WITH_SUBSTR(viz::spectrogram_svg(xt::xarray<double>{1.0, 2.0}), attn::ShapeError,
                           "spectrogram_svg: expected features [T, n_mels]");
}

TEST_CASE("alignment_over_spectrogram_svg draws each state over its frames, cut at the last frame") {
  xt::xarray<double> f = xt::zeros<double>({5, 2});          // 5 frames
  xt::xarray<double> w = {{1.0, 0.0, 0.0}, {0.0, 0.25, 0.75}};  // 2 characters over 3 states of 2 frames
  const std::string svg = viz::alignment_over_spectrogram_svg(f, w, {"a", " "}, 2);
  CHECK(svg.find("<title>a / state 0: 1</title>") != std::string::npos);
  // Two colour bars: the spectrogram's values and the weights from 0 to 1.
  std::size_t bars = 0;
  for (std::size_t at = svg.find("url(#attn-viridis)"); at != std::string::npos; at = svg.find("url(#attn-viridis)", at + 1))
    ++bars;
  CHECK(bars == 2);
  CHECK(svg.find("font-size=\"11\">0.75</text>") != std::string::npos);
  CHECK(svg.find("\u2423") != std::string::npos);  // the space is labelled
  // State 2 covers frame 4 only: one frame wide, at x = left + 4 frames.
  CHECK(svg.find("x=\"62\" y=\"38\" width=\"3\" height=\"14\"") != std::string::npos);
  CHECK_THROWS_WITH_SUBSTR(viz::alignment_over_spectrogram_svg(f, w, {"a", " "}, 1), attn::ShapeError,
                           "3 states of 1 frames do not cover the 5 frames");
  CHECK_THROWS_WITH_SUBSTR(viz::alignment_over_spectrogram_svg(f, w, {"a"}, 2), attn::ShapeError, "L = 1 row labels");
}

TEST_CASE("attention_text_svg: a bar per sentence, each word shaded by sqrt(p_s) p_w against the document's largest") {
  const std::vector<std::vector<std::string>> sentences = {{"open", "a", "<file>"}, {"see", "also"}};
  xt::xarray<double> sentence_weights = {0.75, 0.25};
  xt::xarray<double> word_weights = {{0.5, 0.125, 0.375}, {0.5, 0.5, 0.0}};  // W = 3 >= the longest sentence
  const std::string svg = viz::attention_text_svg(sentences, sentence_weights, word_weights, {"open(2)"});
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("&lt;file&gt;: 0.375") != std::string::npos);  // escaped, with its weight on hover
  CHECK(svg.find("fill-opacity=\"0.85\"><title>open") != std::string::npos);  // the document's strongest word
  CHECK(svg.find("fill-opacity=\"0.212\"><title>a: 0.125") != std::string::npos);  // 0.85 * 0.125 / 0.5, 3 digits
  // sqrt(0.25) 0.5 against sqrt(0.75) 0.5: a word as heavy in a lighter sentence is paler, 0.85 / sqrt(3).
  CHECK(svg.find("fill-opacity=\"0.491\"><title>see: 0.5") != std::string::npos);
  CHECK(svg.find("width=\"45\" height=\"14\" fill=\"#c0392b\"><title>sentence 1: 0.75") != std::string::npos);
  CHECK(svg.find("fill=\"#444\">0.75</text>") != std::string::npos);  // the label: two decimals, within its margin
  const std::string faint = viz::attention_text_svg(sentences, xt::xarray<double>{0.999649, 0.000351}, word_weights);
  CHECK(faint.find("fill=\"#444\">1.00</text>") != std::string::npos);
  CHECK(faint.find("fill=\"#444\">&lt;.01</text>") != std::string::npos);
  CHECK_THROWS_WITH_SUBSTR(viz::attention_text_svg(sentences, sentence_weights, xt::xarray<double>({{1.0, 0.0}, {1.0, 0.0}})),
                           attn::ShapeError, "attention_text_svg: expected sentence_weights [2] and word_weights [2, >= 3]");
  // A long sentence wraps: more lines than sentences make a taller picture.
  const std::vector<std::vector<std::string>> one_long = {std::vector<std::string>(40, "word")};
  viz::AttentionTextOptions narrow;
  narrow.max_width = 300;
  const std::string wrapped = viz::attention_text_svg(one_long, xt::xarray<double>{1.0},
                                                      xt::xarray<double>(xt::ones<double>({1, 40})), narrow);
  // 40 words of 38 pixels, 4 to a line from x = 130 to 300: 10 lines of 22 pixels, then the sentence's gap.
  CHECK(wrapped.find("y=\"" + std::to_string(10 + 22 * 9 + 2) + "\"") != std::string::npos);  // the tenth line
  CHECK(wrapped.find("y=\"" + std::to_string(10 + 22 * 10 + 2) + "\"") == std::string::npos);  // no eleventh
}
