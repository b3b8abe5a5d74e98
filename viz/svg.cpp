// SVG documents and the colour scale (see svg.hpp).
#include "svg.hpp"

#include "../core/errors.hpp"

#include <atomic>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <sstream>

#include <unistd.h>

namespace attn::viz {

std::size_t display_width(const std::string& s) {  // UTF-8 code points, not bytes
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string escape_xml(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

void begin_svg(std::ostream& svg, int width, int height, const std::string& title, int title_y) {
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  if (!title.empty())
    svg << "<text x=\"" << width / 2 << "\" y=\"" << title_y << "\" text-anchor=\"middle\" font-size=\"15\">"
        << escape_xml(title) << "</text>\n";
}

std::string viridis(double t) {  // interpolated between 6 stops
  static const double stops[6][3] = {{68, 1, 84},    {65, 68, 135},  {42, 120, 142},
                                     {34, 168, 132}, {122, 209, 81}, {253, 231, 37}};
  if (!(t >= 0)) t = 0;  // also maps NaN to the low end
  t = std::min(t, 1.0) * 5;
  const int i = std::min(static_cast<int>(t), 4);
  const double f = t - i;
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(stops[i][0] + f * (stops[i + 1][0] - stops[i][0])),
                static_cast<int>(stops[i][1] + f * (stops[i + 1][1] - stops[i][1])),
                static_cast<int>(stops[i][2] + f * (stops[i + 1][2] - stops[i][2])));
  return buf;
}

std::string format_number(double v) {
  std::ostringstream os;
  os.precision(3);
  os << v;
  return os.str();
}

std::string colour_bar_svg(int x, int y, int height, double vmin, double vmax) {
  std::ostringstream svg;  // a gradient through the 6 stops of viridis, vmax at the top
  svg << "<defs><linearGradient id=\"attn-viridis\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
  for (int i = 0; i <= 5; ++i) svg << "<stop offset=\"" << i / 5.0 << "\" stop-color=\"" << viridis(i / 5.0) << "\"/>";
  svg << "</linearGradient></defs>\n<rect x=\"" << x << "\" y=\"" << y << "\" width=\"14\" height=\"" << height
      << "\" fill=\"url(#attn-viridis)\" stroke=\"#999\" stroke-width=\"0.5\"/>\n";
  for (int i = 0; i <= 4; ++i) {  // ticks at vmin, 1/4, ..., vmax
    const int ty = y + height - i * height / 4;
    svg << "<line x1=\"" << x + 14 << "\" y1=\"" << ty << "\" x2=\"" << x + 18 << "\" y2=\"" << ty
        << "\" stroke=\"#333\"/><text x=\"" << x + 21 << "\" y=\"" << ty + 4 << "\" font-size=\"11\">"
        << format_number(vmin + i * (vmax - vmin) / 4) << "</text>\n";
  }
  return svg.str();
}

void save_text(const std::string& path, const std::string& text) {
  static std::atomic<unsigned> counter{0};  // unique per process and call: two writers never share a temporary
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw IOError("save_text: cannot write '" + path + "' (does its folder exist?)");
    out << text;
    if (!out) throw IOError("save_text: writing '" + path + "' failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw IOError("save_text: cannot rename onto '" + path + "'");
  }
}

}  // namespace attn::viz
