// An RGB picture shown in a notebook as image/png:
//
//   auto scene = attn::data::render_scene(42);
//   xcpp::display(attn::viz::Image{scene.pixels, 4});  // 64x64 drawn as 256x256
//   attn::viz::Image{scene.pixels}                     // a cell's last value shows the same way
//
// Jupyter's image/png output is the PNG file's bytes in base64 (io/png.hpp encodes them).
// `scale` repeats every pixel scale x scale times in the PNG itself (nearest neighbour): a
// 64x64 scene is too small to see at its size, and a browser would blur it if asked to
// enlarge it. Header-only, as viz/display.hpp, so libattn does not depend on a JSON library.
#pragma once

#include "../core/errors.hpp"
#include "../io/png.hpp"
#include "base64.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace attn::viz {

struct Image {
  xt::xtensor<std::uint8_t, 3> pixels;  // [3, H, W]
  std::size_t scale = 1;                // each pixel drawn as scale x scale (1..32)
};

namespace detail {

// Every pixel repeated scale x scale times.
inline xt::xtensor<std::uint8_t, 3> enlarge(const xt::xtensor<std::uint8_t, 3>& pixels, std::size_t scale) {
  if (scale == 1) return pixels;
  const std::size_t c = pixels.shape()[0], h = pixels.shape()[1], w = pixels.shape()[2];
  xt::xtensor<std::uint8_t, 3> out = xt::xtensor<std::uint8_t, 3>::from_shape({c, h * scale, w * scale});
  for (std::size_t k = 0; k < c; ++k)
    for (std::size_t y = 0; y < h * scale; ++y)
      for (std::size_t x = 0; x < w * scale; ++x) out(k, y, x) = pixels(k, y / scale, x / scale);
  return out;
}

}  // namespace detail

// The PNG file of the picture as shown (enlarged by its scale).
inline std::string image_png(const Image& image) {
  if (image.scale < 1 || image.scale > 32)
    throw ValueError("viz::Image: scale must be 1..32, got " + std::to_string(image.scale));
  return io::encode_png(detail::enlarge(image.pixels, image.scale));
}

inline nlohmann::json mime_bundle_repr(const Image& image) {
  nlohmann::json bundle;
  bundle["image/png"] = base64(image_png(image));
  bundle["text/plain"] = "<RGB picture " + std::to_string(image.pixels.shape()[2]) + "x" +
                         std::to_string(image.pixels.shape()[1]) + ">";
  return bundle;
}

}  // namespace attn::viz
