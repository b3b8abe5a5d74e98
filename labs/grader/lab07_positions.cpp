// The checks of lab07_positions.hpp (compiled into libattn_labs, which the notebook kernel loads).
#include "labs/grader/lab07_positions.hpp"

#include "labs/grader/grader.hpp"

namespace lab {
namespace positions {

namespace hint {
inline const char* encoding =
    "positions start at 0; dims 2i and 2i + 1 are a pair, interleaved (not two halves): sin on the even dim, "
    "cos on the odd one, both at the frequency 1 / 10000^(2i / d_model), with i the pair's index; an odd d_model "
    "ends with a lone sine in its last dim";
inline const char* add = "x [B, T, D] + encoding(T, D) [T, D]: broadcasting adds it to every sequence of the batch";
}  // namespace hint

Result grade(const Positions& m, std::ostream& os) {
  Grader grader(7, "sinusoidal positional encoding", os);
  Reference ref("lab07_positions");
  grader.check("encoding(6, 8) vs PyTorch", hint::encoding, [&] {
    attn::no_grad guard;
    expect_close("encoding(6, 8)", ref.array("short", "pe"), m.encoding(6, 8), "T 6, d_model 8", 1e-10, 1e-12);
  });
  grader.check("encoding(1000, 4), positions up to 999, vs PyTorch", hint::encoding, [&] {
    attn::no_grad guard;
    expect_close("encoding(1000, 4)", ref.array("long", "pe"), m.encoding(1000, 4), "T 1000, d_model 4", 1e-8, 1e-9);
  });
  grader.check("encoding, random T and d_model (odd ones too) vs nn::SinusoidalPositionalEncoding", hint::encoding, [&] {
    Random rng(7000);
    for (int trial = 0; trial < 10; ++trial) {
      std::size_t T = rng.integer(1, 20), d = 2 * rng.integer(1, 8) - trial % 2;  // odd on odd trials
      attn::no_grad guard;
      attn::nn::SinusoidalPositionalEncoding pe(d, T);
      expect_close("encoding(" + std::to_string(T) + ", " + std::to_string(d) + ")", pe.encoding(T).data<double>(),
                   m.encoding(T, d), "T " + std::to_string(T) + ", d_model " + std::to_string(d), 1e-10, 1e-12);
    }
  });
  grader.check("add_positions, random shapes vs nn::SinusoidalPositionalEncoding", hint::add, [&] {
    Random rng(7100);
    for (int trial = 0; trial < 8; ++trial) {
      std::size_t B = rng.integer(1, 3), T = rng.integer(1, 6), d = 2 * rng.integer(1, 4);
      Tensor x(rng.array({B, T, d}));
      attn::no_grad guard;
      attn::nn::SinusoidalPositionalEncoding pe(d, T);
      expect_close("add_positions(x)", pe(x).data<double>(), m.add_positions(x), "x " + shape_str(x.shape()), 1e-10,
                   1e-12);
    }
  });
  grader.check("gradcheck of add_positions, random shapes", hint::add, [&] {
    Random rng(7200);
    for (int trial = 0; trial < 4; ++trial) {
      Tensor x(rng.array({rng.integer(1, 3), rng.integer(1, 5), 2 * rng.integer(1, 3)}), true);
      expect_gradients("add_positions", [&](const std::vector<Tensor>& in) { return m.add_positions(in[0]); }, {x},
                       {"x"});
    }
  });
  return grader.finish();
}

}  // namespace positions
}  // namespace lab
