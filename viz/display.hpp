// Rich display in Jupyter (xeus-cling / xeus-cpp): xcpp::display(x) looks up
// mime_bundle_repr(x) and shows what it returns. Header-only, so libattn does
// not depend on a JSON library; notebooks include it through attn_notebook.hpp.
//
//   xcpp::display(x);                              // a Tensor as an HTML table
//   xcpp::display(attn::viz::Svg{heatmap_svg(...)}); // any SVG picture
#pragma once

#include "../core/tensor.hpp"
#include "base64.hpp"
#include "plot.hpp"

#include <nlohmann/json.hpp>
#include <xtensor/xio.hpp>

#include <sstream>
#include <string>

namespace attn {

namespace detail {
inline std::string html_cells(const xt::xarray<double>& a) {
  std::ostringstream os;
  os.precision(4);
  const bool matrix = a.dimension() == 2;
  const std::size_t rows = matrix ? a.shape()[0] : 1, cols = matrix ? a.shape()[1] : a.size();
  os << "<table style=\"border-collapse:collapse;font-family:monospace\">";
  for (std::size_t r = 0; r < rows; ++r) {
    os << "<tr>";
    for (std::size_t c = 0; c < cols; ++c)
      os << "<td style=\"border:1px solid #ccc;padding:2px 6px;text-align:right\">" << a.flat(r * cols + c) << "</td>";
    os << "</tr>";
  }
  os << "</table>";
  return os.str();
}
}  // namespace detail

// A tensor as HTML: shape, dtype and how it was made, its values as a table
// (1-d and 2-d; text for more dims) and the gradient when there is one.
inline nlohmann::json mime_bundle_repr(const Tensor& t) {
  std::ostringstream text;
  text << t;
  nlohmann::json bundle;
  bundle["text/plain"] = text.str();
  if (!t.defined()) return bundle;
  std::ostringstream html;
  html << "<div><b>Tensor</b> shape " << shape_str(t.shape()) << ", " << dtype_name(t.dtype());
  if (t.requires_grad()) html << ", requires_grad";
  if (!t.is_leaf()) html << ", made by <code>" << t.op() << "</code>";
  html << "</div>";
  auto values = [](const Tensor& x) {
    if (x.dim() <= 2 && x.numel() <= 400) return detail::html_cells(x.to_array());
    std::ostringstream pre;
    pre << "<pre>" << x.to_array() << "</pre>";
    return pre.str();
  };
  html << values(t);
  Tensor g = t.grad();
  if (g.defined()) html << "<div>grad</div>" << values(g);
  bundle["text/html"] = html.str();
  return bundle;
}

namespace viz {

// An SVG picture for xcpp::display.
struct Svg {
  std::string text;
};

// The explorer (viz/explorer.hpp) as one self-contained HTML output.
inline nlohmann::json mime_bundle_repr(const Explorer& explorer) {
  nlohmann::json bundle;
  bundle["text/html"] = explorer_html(explorer);
  bundle["text/plain"] = "<attention explorer: " + explorer.title + ">";
  return bundle;
}

// The picture as HTML: an <img> whose source is the SVG as a data URI, and a script that puts the
// SVG itself in its place. Where scripts run (a trusted notebook, an exported page) the picture is
// inline, so its <title> tooltips show on hover; where they do not (an untrusted notebook, e.g. a
// fresh clone opened in Jupyter), the sanitiser strips the script and an inline <svg>, but keeps
// the <img>, so the picture still shows. An image/svg+xml output would show there as its text/plain.
// The script swaps every such <img> still on the page, so it needs no id and an output is the same
// bytes at every run.
inline std::string svg_html(const std::string& svg) {
  return "<img data-attn-svg=\"1\" alt=\"figure\" style=\"max-width:100%\" src=\"" + svg_data_uri(svg) +
         "\"><script>document.querySelectorAll(\"img[data-attn-svg]\").forEach(function(i){"
         "var b=atob(i.src.slice(i.src.indexOf(\",\")+1)),u=new Uint8Array(b.length);"
         "for(var k=0;k<b.length;++k)u[k]=b.charCodeAt(k);var d=document.createElement(\"div\");"
         "d.innerHTML=new TextDecoder().decode(u);if(d.firstElementChild)i.replaceWith(d.firstElementChild);});"
         "</script>";
}

inline nlohmann::json mime_bundle_repr(const Svg& svg) {
  nlohmann::json bundle;
  bundle["text/html"] = svg_html(svg.text);
  bundle["text/plain"] = "<svg picture>";
  return bundle;
}

}  // namespace viz
}  // namespace attn
