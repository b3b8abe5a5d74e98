// The checks of lab06_heads.hpp (compiled into libattn_labs, which the notebook kernel loads).
#include "labs/grader/lab06_heads.hpp"

#include "labs/grader/grader.hpp"

namespace lab {
namespace heads {

namespace hint {
inline const char* split =
    "reshape [B, T, H * d] to [B, T, H, d] (each head takes d consecutive features), then transpose(1, 2) "
    "to [B, H, T, d]; a reshape straight to [B, H, T, d] mixes time steps into heads";
inline const char* merge =
    "transpose(1, 2) back to [B, T, H, d] before the reshape to [B, T, H * d]; a reshape alone mixes heads "
    "into time steps";
inline const char* round_trip = "merge_heads(split_heads(x, H)) must give x back: the two are inverses";
inline const char* bad =
    "H * d features must split evenly: split_heads of 6 features into 4 heads has to throw (attn::reshape "
    "does), not drop or invent features";
}  // namespace hint

Result grade(const Heads& m, std::ostream& os) {
  Grader grader(6, "multi-head split and merge", os);
  Reference ref("lab06_heads");

  grader.check("split_heads vs PyTorch's view + transpose (x [2, 3, 8], 2 heads)", hint::split, [&] {
    attn::no_grad guard;
    expect_close("split_heads(x, 2)", ref.array("split", "y"), m.split_heads(ref.tensor("split", "x"), 2),
                 "x [2, 3, 8], heads 2", 0, 0);
  });
  grader.check("merge_heads vs PyTorch's transpose + reshape (x [2, 2, 3, 4])", hint::merge, [&] {
    attn::no_grad guard;
    expect_close("merge_heads(x)", ref.array("merge", "y"), m.merge_heads(ref.tensor("merge", "x")),
                 "x [2, 2, 3, 4]", 0, 0);
  });
  auto random_cases = [](std::uint64_t seed, const std::function<void(Random&, std::size_t, std::size_t, std::size_t,
                                                                     std::size_t)>& body) {
    Random rng(seed);
    for (int trial = 0; trial < 10; ++trial)
      body(rng, rng.integer(1, 3), rng.integer(1, 4), rng.integer(1, 4), rng.integer(1, 3));
  };
  grader.check("split_heads, random shapes (one head, d of 1 included) vs attn::split_heads", hint::split, [&] {
    random_cases(6000, [&](Random& rng, std::size_t B, std::size_t T, std::size_t H, std::size_t d) {
      Tensor x(rng.array({B, T, H * d}));
      attn::no_grad guard;
      expect_close("split_heads(x, " + std::to_string(H) + ")", attn::split_heads(x, H).data<double>(),
                   m.split_heads(x, H), "x " + shape_str(x.shape()) + ", heads " + std::to_string(H), 0, 0);
    });
  });
  grader.check("merge_heads, random shapes vs attn::merge_heads", hint::merge, [&] {
    random_cases(6100, [&](Random& rng, std::size_t B, std::size_t T, std::size_t H, std::size_t d) {
      Tensor x(rng.array({B, H, T, d}));
      attn::no_grad guard;
      expect_close("merge_heads(x)", attn::merge_heads(x).data<double>(), m.merge_heads(x), "x " + shape_str(x.shape()),
                   0, 0);
    });
  });
  grader.check("merge_heads(split_heads(x)) == x, random shapes", hint::round_trip, [&] {
    random_cases(6200, [&](Random& rng, std::size_t B, std::size_t T, std::size_t H, std::size_t d) {
      Array x = rng.array({B, T, H * d});
      attn::no_grad guard;
      expect_close("merge_heads(split_heads(x, " + std::to_string(H) + "))", x, m.merge_heads(m.split_heads(Tensor(x), H)),
                   "x " + shape_str(Shape(x.shape().begin(), x.shape().end())), 0, 0);
    });
  });
  grader.check("gradcheck of split and merge, random shapes", hint::split, [&] {
    random_cases(6300, [&](Random& rng, std::size_t B, std::size_t T, std::size_t H, std::size_t d) {
      Tensor x(rng.array({B, T, H * d}), true), y(rng.array({B, H, T, d}), true);
      expect_gradients("split_heads", [&](const std::vector<Tensor>& in) { return m.split_heads(in[0], H); }, {x}, {"x"});
      expect_gradients("merge_heads", [&](const std::vector<Tensor>& in) { return m.merge_heads(in[0]); }, {y}, {"x"});
    });
  });
  grader.check("split_heads of 6 features into 4 heads throws", hint::bad, [&] {
    Tensor x = attn::zeros({1, 2, 6});
    Tensor y;
    try {
      y = m.split_heads(x, 4);
    } catch (const NotImplemented&) {
      throw;
    } catch (const std::exception&) {
      return;  // what we want
    }
    throw Mismatch("split_heads(x [1, 2, 6], 4) returned a tensor of shape " + shape_str(y.shape()) +
                   " instead of throwing");
  });
  return grader.finish();
}

}  // namespace heads
}  // namespace lab
