// The checks of lab18_copynet.hpp (compiled into libattn_labs, which the notebook kernel loads).
#include "labs/grader/lab18_copynet.hpp"

#include "labs/grader/grader.hpp"

#include <cmath>

namespace lab {
namespace copynet {

namespace hint {
inline const char* joint =
    "ONE softmax over [psi_g ; psi_c of the real source positions]: the generate and the copy modes share the "
    "normaliser Z; then p(y) = p_g(y) for y < V, plus the copy weight of every real position j whose copy_ids is y "
    "(a word in the vocabulary and the source gets both, a word held twice both copies, a source-only id its copies "
    "alone)";
inline const char* sums_to_one =
    "the V + S' weights of one softmax sum to 1 (S' the real positions), and every weight lands on one id of the "
    "extended vocabulary: p sums to 1, no weight lost, none counted twice";
inline const char* large =
    "a softmax of scores near 1000 overflows exp (near -1e12, underflows it) unless it subtracts the maximum first: "
    "attn::softmax does";
inline const char* far =
    "block the padding with -1e30 (nn::kBlockedScore): any finite fill above the real scores takes the weight";
inline const char* gradients =
    "build p from psi_g and psi_c with attn's ops (masked_fill, concat, softmax, narrow, zeros, matmul with "
    "one_hot(copy_ids, E), +), nothing copied through an array: autograd then finds the backward";
inline const char* wrong_values =
    "the gradient of a wrong function is wrong too: the checks of its values name the mistake; fix those first";
inline const char* random_shapes =
    "B is psi_g.size(0), V psi_g.size(-1), S psi_c.size(-1), E the extended_vocab argument (E = V when the batch "
    "has no source-only word); positions j >= lengths[b] are padding";
}  // namespace hint

// ---- the joint distribution, right and with the usual mistakes, computed here on arrays ----

enum class J {
  right, two_softmaxes, padding_copied, padding_zero, last_wins, copy_oov_only, copy_replaces_generate, by_position,
  extended_as_unk
};

inline Array joint_of(const Array& psi_g, const Array& psi_c, const Index& ids, const std::vector<std::size_t>& lengths,
                      std::size_t E, J v) {
  const std::size_t B = psi_g.shape()[0], V = psi_g.shape()[1], S = psi_c.shape()[1];
  Array p = xt::zeros<double>({B, E});
  for (std::size_t b = 0; b < B; ++b) {
    // The slots taking part in the softmax: the V generate ones, then the copy positions.
    std::vector<double> z;
    std::vector<std::size_t> pos;
    for (std::size_t k = 0; k < V; ++k) z.push_back(psi_g(b, k));
    for (std::size_t j = 0; j < S; ++j) {
      bool real = j < lengths[b];
      if (!real && v != J::padding_copied && v != J::padding_zero) continue;
      z.push_back(!real && v == J::padding_zero ? 0.0 : psi_c(b, j));
      pos.push_back(j);
    }
    auto softmax_of = [](const std::vector<double>& x, std::size_t from, std::size_t to) {
      double m = -INFINITY, total = 0.0;
      for (std::size_t i = from; i < to; ++i) m = std::max(m, x[i]);
      std::vector<double> out(x.size(), 0.0);
      for (std::size_t i = from; i < to; ++i) total += out[i] = std::exp(x[i] - m);
      for (std::size_t i = from; i < to; ++i) out[i] /= total;
      return out;
    };
    std::vector<double> w = softmax_of(z, 0, z.size());
    if (v == J::two_softmaxes) {  // each mode normalised on its own
      std::vector<double> g = softmax_of(z, 0, V), c = softmax_of(z, V, z.size());
      for (std::size_t i = 0; i < z.size(); ++i) w[i] = i < V ? g[i] : c[i];
    }
    std::vector<bool> in_source(E, false);
    for (std::size_t k = 0; k < pos.size(); ++k) in_source[std::size_t(ids(b, pos[k]))] = true;
    for (std::size_t k = 0; k < V; ++k)
      if (!(v == J::copy_replaces_generate && in_source[k])) p(b, k) = w[k];
    Array copies = xt::zeros<double>({E});
    for (std::size_t k = 0; k < pos.size(); ++k) {
      const std::size_t j = pos[k];
      std::size_t id = std::size_t(ids(b, j));
      double c = w[V + k];
      if (v == J::extended_as_unk && id >= V) id = 3;
      if (v == J::by_position) {
        if (j < E) copies(j) += c;
      } else if (v == J::last_wins) {
        copies(id) = c;
      } else if (v == J::copy_oov_only) {
        if (id >= V) copies(id) += c;
      } else {
        copies(id) += c;
      }
    }
    for (std::size_t k = 0; k < E; ++k) p(b, k) += copies(k);
  }
  return p;
}

inline std::string diagnose(const Array& psi_g, const Array& psi_c, const Index& ids,
                            const std::vector<std::size_t>& lengths, std::size_t E, const Array& got) {
  const std::vector<std::pair<J, const char*>> mistakes = {
      {J::two_softmaxes,
       "two softmaxes, one per mode: CopyNet's generate and copy scores share ONE softmax, one normaliser Z, so that "
       "the two modes compete"},
      {J::padding_copied,
       "the padding's copy scores left in the softmax: the positions j >= lengths[b] are blocked (-1e30) before it"},
      {J::padding_zero,
       "the padding's copy scores set to 0 and kept in the softmax: block them with -1e30, so that they take no "
       "weight"},
      {J::last_wins,
       "a word the source holds twice gets one position's weight (overwritten): add every position's weight to its "
       "word (scatter-add)"},
      {J::copy_oov_only,
       "only source-only words copied: a word both in the vocabulary and the source gets both its generate weight "
       "and its copy weights"},
      {J::copy_replaces_generate,
       "a vocabulary word that the source holds gets its copy weights alone: it gets both, p_g(y) + its copies"},
      {J::by_position,
       "position j's copy weight added to id j (the position) instead of to the word it holds, copy_ids(b, j)"},
      {J::extended_as_unk,
       "source-only words copied as <unk> (id 3): they get their extended ids V .. E-1, as copy_ids gives them"}};
  for (const auto& [v, what] : mistakes) {
    try {
      expect_close("", joint_of(psi_g, psi_c, ids, lengths, E, v), got, "", 1e-9, 1e-12);
      return std::string("; your values are what this mistake gives: ") + what;
    } catch (const Mismatch&) {
    }
  }
  return "";
}

struct Inputs {
  Array psi_g, psi_c;
  Index ids;
  std::vector<std::size_t> lengths;
  std::size_t E = 0;
  std::string describe() const {
    std::string l;
    for (std::size_t n : lengths) l += (l.empty() ? "" : ", ") + std::to_string(n);
    return "psi_g " + shape_str(Shape(psi_g.shape().begin(), psi_g.shape().end())) + ", psi_c " +
           shape_str(Shape(psi_c.shape().begin(), psi_c.shape().end())) + ", lengths [" + l + "], E " +
           std::to_string(E);
  }
};

// Random inputs: B 1..3, V 4..8, S 1..6, E V..V+3; source words drawn from the last 3 vocabulary ids and
// the source-only ones, so that they repeat; padding after each row's length (at least 1).
inline Inputs random_inputs(Random& rng) {
  Inputs in;
  const std::size_t B = rng.integer(1, 3), V = rng.integer(4, 8), S = rng.integer(1, 6);
  in.E = V + rng.integer(0, 3);
  in.psi_g = rng.array({B, V}, -3.0, 3.0);
  in.psi_c = rng.array({B, S}, -3.0, 3.0);
  in.ids = Index::from_shape({B, S});
  for (std::size_t b = 0; b < B; ++b) {
    in.lengths.push_back(rng.integer(1, S));
    for (std::size_t j = 0; j < S; ++j)
      in.ids(b, j) = j < in.lengths[b] ? std::int64_t(rng.integer(V - 3, in.E - 1)) : 0;
  }
  // A source-only id somewhere when E > V, whatever the draw.
  if (in.E > V) in.ids(0, 0) = std::int64_t(V);
  return in;
}

Result grade(const CopyNet& m, std::ostream& os) {
  Grader grader(18, "CopyNet's joint generate/copy distribution", os);
  Reference ref("lab18_copynet");
  auto fixed = [&](const std::string& c, std::size_t E) {
    return Inputs{ref.array(c, "psi_g"), ref.array(c, "psi_c"), ids_of(ref.array(c, "copy_ids")),
                  lengths_of(ref.array(c, "lengths")), E};
  };
  auto call = [&](const Inputs& in) {
    attn::no_grad guard;
    return m.joint(Tensor(in.psi_g), Tensor(in.psi_c), in.ids, in.lengths, in.E);
  };
  auto fixed_joint = [&](const std::string& c, std::size_t E) {
    Inputs in = fixed(c, E);
    Tensor got = call(in);
    try {
      expect_close("p", ref.array(c, "p"), got, in.describe(), 1e-10, 1e-12);
    } catch (const Mismatch& e) {
      throw Mismatch(e.what() + diagnose(in.psi_g, in.psi_c, in.ids, in.lengths, in.E, array_of(got, "p")));
    }
  };
  grader.check("joint vs PyTorch (V 8, S 5, E 11: a vocabulary word held twice, source-only words, one held twice, "
               "a padded row)",
               hint::joint, [&] { fixed_joint("joint", 11); });
  // A mistake named on random inputs only when the learner's output on the fixed inputs is that same mistake:
  // on small random shapes (one row, few positions) unrelated bugs can give a mistake's values.
  auto confirm = [&](const std::string& named) -> std::string {
    if (named.empty()) return named;
    try {
      Inputs in = fixed("joint", 11);
      Array got = array_of(call(in), "p");
      return diagnose(in.psi_g, in.psi_c, in.ids, in.lengths, in.E, got) == named ? named : "";
    } catch (const std::exception&) {
      return "";
    }
  };
  grader.check("joint: every row of p sums to 1 (random B, V, S, E, lengths)", hint::sums_to_one, [&] {
    Random rng(18100);
    for (int trial = 0; trial < 12; ++trial) {
      Inputs in = random_inputs(rng);
      Array p = array_of(call(in), "p");
      if (p.dimension() != 2 || p.shape()[0] != in.psi_g.shape()[0] || p.shape()[1] != in.E)
        throw Mismatch("p has shape " + shape_str(Shape(p.shape().begin(), p.shape().end())) + ", expected [" +
                           std::to_string(in.psi_g.shape()[0]) + ", " + std::to_string(in.E) + "] (inputs: " +
                           in.describe() + ")",
                       hint::random_shapes);
      for (std::size_t b = 0; b < p.shape()[0]; ++b) {
        double total = 0.0;
        for (std::size_t k = 0; k < p.shape()[1]; ++k) total += p(b, k);
        if (!(std::abs(total - 1.0) <= 1e-10))
          throw Mismatch("row " + std::to_string(b) + " of p sums to " + num_str(total) + ", expected 1 (inputs: " +
                         in.describe() + ")" + confirm(diagnose(in.psi_g, in.psi_c, in.ids, in.lengths, in.E, p)));
      }
    }
  });
  grader.check("joint with scores near 1000 vs PyTorch (V 6, S 4, E 8)", hint::large, [&] {
    try {
      fixed_joint("large", 8);
    } catch (const Mismatch& e) {
      bool right_at_ordinary = true;
      try {
        fixed_joint("joint", 11);
      } catch (const std::exception&) {
        right_at_ordinary = false;
      }
      throw at_extreme(e, all_finite(array_of(call(fixed("large", 8)), "p")), right_at_ordinary, hint::large,
                       hint::joint);
    }
  });
  grader.check("joint with psi_g and psi_c near -1e12 and a padded row vs PyTorch (V 6, S 4, E 8)", hint::far, [&] {
    // No usual mistake named here: with the real scores near -1e12 any fill above them (0 among them) gives
    // the padding all the weight, whatever its value, so a -100 fill would match "set to 0".
    Inputs in = fixed("far", 8);
    try {
      expect_close("p", ref.array("far", "p"), call(in), in.describe(), 1e-10, 1e-12);
    } catch (const Mismatch& e) {
      try {
        fixed_joint("joint", 11);
      } catch (const std::exception&) {
        throw Mismatch(e.what() + std::string("; wrong at ordinary scores too: the check of those names the mistake"),
                       hint::joint);
      }
      if (!all_finite(array_of(call(in), "p")))
        throw Mismatch(e.what() + std::string("; not finite: exp of scores near -1e12 rounds to 0, and 0/0 follows"),
                       hint::large);
      throw Mismatch(e.what() + std::string("; right at ordinary scores, wrong where the real scores lie near -1e12"),
                     hint::far);
    }
  });
  grader.check("joint: gradients of psi_g and psi_c vs PyTorch (of sum(p * r))", hint::gradients, [&] {
    Inputs in = fixed("joint", 11);
    std::vector<Tensor> a = {Tensor(in.psi_g, true), Tensor(in.psi_c, true)};
    Tensor p = m.joint(a[0], a[1], in.ids, in.lengths, in.E);
    if (!p.requires_grad())
      throw Mismatch("joint(...) does not require grad: it was not built from psi_g and psi_c with attn's ops");
    attn::sum(p * ref.tensor("joint", "r")).backward();
    const char* names[] = {"psi_g", "psi_c"};
    for (std::size_t i = 0; i < 2; ++i) {
      try {
        expect_grad_defined(a[i], names[i], hint::gradients);
        expect_close(std::string("the gradient of ") + names[i], ref.array("joint", std::string("grad_") + names[i]),
                     a[i].grad(), in.describe(), 1e-9, 1e-11);
      } catch (const Mismatch& e) {
        try {
          expect_close("", ref.array("joint", "p"), p, "", 1e-10, 1e-12);
        } catch (const Mismatch&) {
          throw Mismatch(e.what() + std::string("; p's values are wrong too"), hint::wrong_values);
        }
        throw;
      }
    }
  });
  grader.check("joint, random B (1 to 3), V (4 to 8), S (1 to 6), E (V to V + 3) and lengths, vs the chapter's formula",
               hint::random_shapes, [&] {
                 Random rng(18200);
                 for (int trial = 0; trial < 16; ++trial) {
                   Inputs in = random_inputs(rng);
                   Tensor got = call(in);
                   try {
                     expect_close("p", joint_of(in.psi_g, in.psi_c, in.ids, in.lengths, in.E, J::right), got,
                                  in.describe(), 1e-9, 1e-12);
                   } catch (const Mismatch& e) {
                     std::string named =
                         confirm(diagnose(in.psi_g, in.psi_c, in.ids, in.lengths, in.E, array_of(got, "p")));
                     throw Mismatch(e.what() + named, named.empty() ? hint::random_shapes : hint::joint);
                   }
                 }
               });
  grader.check("joint: gradcheck of psi_g and psi_c (random shapes, padding, repeated words)", hint::gradients, [&] {
    Random rng(18300);
    for (int trial = 0; trial < 4; ++trial) {
      Inputs in = random_inputs(rng);
      std::vector<Tensor> a = {Tensor(in.psi_g, true), Tensor(in.psi_c, true)};
      if (!m.joint(a[0], a[1], in.ids, in.lengths, in.E).requires_grad())
        throw Mismatch("joint(...) does not require grad: it was not built from psi_g and psi_c with attn's ops");
      expect_gradients(
          "joint", [&](const std::vector<Tensor>& x) { return m.joint(x[0], x[1], in.ids, in.lengths, in.E); }, a,
          {"psi_g", "psi_c"});
    }
  });
  return grader.finish();
}

}  // namespace copynet
}  // namespace lab
