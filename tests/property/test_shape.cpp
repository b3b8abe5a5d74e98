// Properties of the layout ops (core/ops/shape.cpp, join.cpp), the indexing ops
// (core/ops/index.cpp), dropout and the comparisons (compare.cpp): every output element
// read back from where its index says it comes from, gradcheck in float64 (each backward
// must route the gradient to the right place), random shapes, dims and indices.
#include "property.hpp"

using namespace prop;

namespace {

// A random permutation of 0 .. n-1.
std::vector<long> permutation(std::size_t n) {
  std::vector<long> p(n);
  std::iota(p.begin(), p.end(), 0L);
  for (std::size_t i = n; i > 1; --i) std::swap(p[i - 1], p[*rc::gen::inRange<std::size_t>(0, i)]);
  return p;
}

// out[i] = x[source(i)] for every flat i of out_shape.
Array gather_loop(const Array& x, const Shape& out_shape, const std::function<Shape(const Shape&)>& source) {
  Array out = xt::zeros<double>(out_shape);
  for (std::size_t i = 0; i < out.size(); ++i) out.flat(i) = x.flat(ravel(source(unravel(i, out_shape)), shape_of(x)));
  return out;
}

// f(inputs) times fixed weights 1, 2, 3, ... so a backward that swaps elements shows.
Tensor weighted(const Tensor& y) {
  Array w = xt::zeros<double>(y.shape());
  for (std::size_t i = 0; i < w.size(); ++i) w.flat(i) = double(i + 1);
  return attn::mul(y, Tensor(std::move(w)).to(y.dtype()));
}

}  // namespace

TEST_CASE("transpose and permute move every element to its permuted index") {
  PROPERTY("transpose, permute", [] {
    const Shape s = shape(1, 4);
    const Tensor x = randn(s, seed());
    const std::vector<long> p = permutation(s.size());
    Shape ps;
    for (long d : p) ps.push_back(s[std::size_t(d)]);
    assert_close("permute", attn::permute(x, p), gather_loop(x.to_array(), ps, [&](const Shape& o) {
                   Shape i(o.size());
                   for (std::size_t d = 0; d < o.size(); ++d) i[std::size_t(p[d])] = o[d];
                   return i;
                 }), 0, 0);
    const long d0 = dim(s.size()), d1 = dim(s.size());
    const std::size_t a = positive_dim(d0, s.size()), b = positive_dim(d1, s.size());
    Shape ts = s;
    std::swap(ts[a], ts[b]);
    assert_close("transpose", attn::transpose(x, d0, d1), gather_loop(x.to_array(), ts, [&](const Shape& o) {
                   Shape i = o;
                   std::swap(i[a], i[b]);
                   return i;
                 }), 0, 0);
    assert_gradcheck("permute", [&](const Inputs& in) { return weighted(attn::permute(in[0], p)); }, {x});
    assert_gradcheck("transpose", [&](const Inputs& in) { return weighted(attn::transpose(in[0], d0, d1)); }, {x});
  });
}

TEST_CASE("reshape, unsqueeze, squeeze keep the row-major order; expand repeats") {
  PROPERTY("reshape, unsqueeze, squeeze, expand", [] {
    const Shape s = shape(1, 3);
    const Tensor x = randn(s, seed());
    std::vector<long> target(s.rbegin(), s.rend());  // the same elements, reversed sizes
    target[*rc::gen::inRange<std::size_t>(0, target.size())] = -1;
    const Tensor r = attn::reshape(x, target);
    const Array ra = r.to_array(), xa = x.to_array();
    RC_ASSERT(std::vector<double>(ra.begin(), ra.end()) == std::vector<double>(xa.begin(), xa.end()));
    const long u = *rc::gen::inRange<long>(-long(s.size()) - 1, long(s.size()) + 1);
    const Tensor un = attn::unsqueeze(x, u);
    RC_ASSERT(un.dim() == s.size() + 1);
    RC_ASSERT(un.size(u) == 1);
    assert_close("squeeze(unsqueeze)", attn::squeeze(un, u), x.to_array(), 0, 0);
    // expand: x broadcast to a random shape it broadcasts to.
    const Shape sx = shape_of(x.to_array());
    Shape big = shape(0, 2);
    for (std::size_t d : sx) big.push_back(d == 1 ? *rc::gen::inRange<std::size_t>(1, 4) : d);
    const Tensor e = attn::expand(x, big);
    Array expected = xt::zeros<double>(big);
    for (std::size_t i = 0; i < expected.size(); ++i) expected.flat(i) = at_broadcast(x.to_array(), sx, unravel(i, big));
    assert_close("expand", e, expected, 0, 0);
    assert_gradcheck("reshape", [&](const Inputs& in) { return weighted(attn::reshape(in[0], target)); }, {x});
    assert_gradcheck("unsqueeze", [&](const Inputs& in) { return weighted(attn::unsqueeze(in[0], u)); }, {x});
    assert_gradcheck("squeeze", [&](const Inputs& in) { return weighted(attn::squeeze(attn::unsqueeze(in[0], u), u)); },
                     {x});
    assert_gradcheck("expand", [&](const Inputs& in) { return weighted(attn::expand(in[0], big)); }, {x});
  });
}

TEST_CASE("concat and stack of 1 to 3 tensors; narrow, select, split and chunk take them apart") {
  PROPERTY("concat, stack, narrow, select, split, chunk", [] {
    const Shape s = shape(1, 3);
    const long d = dim(s.size());
    const std::size_t pd = positive_dim(d, s.size());
    const std::size_t count = *rc::gen::inRange<std::size_t>(1, 4);
    Inputs parts;
    std::vector<std::size_t> sizes;
    for (std::size_t i = 0; i < count; ++i) {
      Shape si = s;
      si[pd] = *rc::gen::inRange<std::size_t>(1, 4);
      sizes.push_back(si[pd]);
      parts.push_back(randn(si, seed()));
    }
    const Tensor c = attn::concat(parts, d);
    std::size_t offset = 0;
    for (std::size_t i = 0; i < count; ++i) {  // narrow reads each part back
      assert_close("narrow(concat)", attn::narrow(c, d, offset, sizes[i]), parts[i].to_array(), 0, 0);
      offset += sizes[i];
    }
    assert_gradcheck("concat", [d](const Inputs& in) { return weighted(attn::concat(in, d)); }, parts);
    // stack needs equal shapes: the first part, repeated with other values.
    Inputs same{parts[0], randn(parts[0].shape(), seed())};
    const long sd = *rc::gen::inRange<long>(-long(s.size()) - 1, long(s.size()) + 1);
    const Tensor st = attn::stack(same, sd);
    for (long i = 0; i < 2; ++i) assert_close("select(stack)", attn::select(st, sd, i), same[std::size_t(i)].to_array(), 0, 0);
    assert_gradcheck("stack", [sd](const Inputs& in) { return weighted(attn::stack(in, sd)); }, same);
    const long idx = *rc::gen::inRange<long>(-long(sizes[0]), long(sizes[0]));
    assert_gradcheck("select", [d, idx](const Inputs& in) { return weighted(attn::select(in[0], d, idx)); }, {parts[0]});
    // split and chunk: concatenated back, the pieces are the tensor again.
    const std::size_t piece = *rc::gen::inRange<std::size_t>(1, 4);
    assert_close("concat(split)", attn::concat(attn::split(c, piece, d), d), c.to_array(), 0, 0);
    assert_close("concat(chunk)", attn::concat(attn::chunk(c, piece, d), d), c.to_array(), 0, 0);
    const auto split_weighted = [piece, d](const Inputs& in) {
      std::vector<Tensor> pieces = attn::split(in[0], piece, d);
      for (std::size_t i = 0; i < pieces.size(); ++i) pieces[i] = attn::mul(pieces[i], double(i + 1));
      return weighted(attn::concat(pieces, d));
    };
    assert_gradcheck("split", split_weighted, {c.detach().requires_grad_()});
  });
}

TEST_CASE("index_select and embedding with repeated ids; masked_fill and where with broadcast masks") {
  PROPERTY("index_select, embedding, masked_fill, where", [] {
    const Shape s = shape(1, 3);
    const Tensor x = randn(s, seed());
    const long d = dim(s.size());
    const std::size_t pd = positive_dim(d, s.size());
    const std::size_t n = *rc::gen::inRange<std::size_t>(1, 5);
    attn::Index ids = attn::Index::from_shape({n});
    for (auto& id : ids) id = *rc::gen::inRange<std::int64_t>(0, std::int64_t(s[pd]));
    Shape so = s;
    so[pd] = n;
    assert_close("index_select", attn::index_select(x, d, ids), gather_loop(x.to_array(), so, [&](const Shape& o) {
                   Shape i = o;
                   i[pd] = std::size_t(ids(o[pd]));
                   return i;
                 }), 0, 0);
    assert_gradcheck("index_select", [&](const Inputs& in) { return weighted(attn::index_select(in[0], d, ids)); }, {x});
    // embedding: rows of weight [V, D] for ids of a random shape.
    const std::size_t V = *rc::gen::inRange<std::size_t>(1, 4), D = *rc::gen::inRange<std::size_t>(1, 3);
    const Tensor w = randn({V, D}, seed());
    const Shape is = shape(1, 2);
    attn::Index eids = attn::Index::from_shape(is);
    for (auto& id : eids) id = *rc::gen::inRange<std::int64_t>(0, std::int64_t(V));
    Shape es = is;
    es.push_back(D);
    assert_close("embedding", attn::embedding(w, eids), gather_loop(w.to_array(), es, [&](const Shape& o) {
                   const Shape io(o.begin(), o.end() - 1);
                   return Shape{std::size_t(eids.flat(ravel(io, is))), o.back()};
                 }), 0, 0);
    assert_gradcheck("embedding", [&](const Inputs& in) { return weighted(attn::embedding(in[0], eids)); }, {w});
    // masked_fill and where: a random mask that broadcasts to x.
    const Shape ms = broadcastable_to(s);
    attn::Mask mask = xt::zeros<bool>(ms);
    for (bool& m : mask) m = *rc::gen::arbitrary<bool>();
    const Tensor other = randn(s, seed());
    Array filled = x.to_array(), chosen = x.to_array();
    for (std::size_t i = 0; i < filled.size(); ++i) {
      const bool m = at_broadcast(xt::cast<double>(mask), ms, unravel(i, s)) != 0;
      if (m) filled.flat(i) = -7.5;
      chosen.flat(i) = m ? x.to_array().flat(i) : other.to_array().flat(i);
    }
    assert_close("masked_fill", attn::masked_fill(x, mask, -7.5), filled, 0, 0);
    assert_close("where", attn::where(mask, x, other), chosen, 0, 0);
    assert_gradcheck("masked_fill", [&](const Inputs& in) { return weighted(attn::masked_fill(in[0], mask, -7.5)); }, {x});
    assert_gradcheck("where", [&](const Inputs& in) { return weighted(attn::where(mask, in[0], in[1])); }, {x, other});
  });
}

TEST_CASE("gather_windows and place_windows: windows that start before 0 or run past the end read zeros") {
  PROPERTY("gather_windows, place_windows", [] {
    const std::size_t B = *rc::gen::inRange<std::size_t>(1, 3), N = *rc::gen::inRange<std::size_t>(1, 5),
                      D = *rc::gen::inRange<std::size_t>(1, 3), Q = *rc::gen::inRange<std::size_t>(1, 3),
                      W = *rc::gen::inRange<std::size_t>(1, 4);
    const Tensor x = randn({B, N, D}, seed());
    attn::Index start = attn::Index::from_shape({B, Q});
    for (auto& s : start) s = *rc::gen::inRange<std::int64_t>(-std::int64_t(W), std::int64_t(N) + 1);
    Array expected = xt::zeros<double>({B, Q, W, D});
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t q = 0; q < Q; ++q)
        for (std::size_t w = 0; w < W; ++w) {
          const std::int64_t row = start(b, q) + std::int64_t(w);
          if (row >= 0 && row < std::int64_t(N))
            for (std::size_t k = 0; k < D; ++k) expected(b, q, w, k) = x.to_array()(b, std::size_t(row), k);
        }
    assert_close("gather_windows", attn::gather_windows(x, start, W), expected, 0, 0);
    assert_gradcheck("gather_windows", [&](const Inputs& in) { return weighted(attn::gather_windows(in[0], start, W)); },
                     {x});
    const Tensor win = randn({B, Q, W}, seed());
    Array placed = xt::zeros<double>({B, Q, N});
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t q = 0; q < Q; ++q)
        for (std::size_t w = 0; w < W; ++w) {
          const std::int64_t j = start(b, q) + std::int64_t(w);
          if (j >= 0 && j < std::int64_t(N)) placed(b, q, std::size_t(j)) = win.to_array()(b, q, w);
        }
    assert_close("place_windows", attn::place_windows(win, start, N), placed, 0, 0);
    assert_gradcheck("place_windows", [&](const Inputs& in) { return weighted(attn::place_windows(in[0], start, N)); },
                     {win});
  });
}

TEST_CASE("dropout: each element 0 or x / (1 - p); the identity in eval; its gradient uses the same mask") {
  PROPERTY("dropout", [] {
    const Tensor x = away_from_zero(shape(1, 3), seed());
    const double p = *rc::gen::element(0.0, 0.25, 0.5, 0.9);
    const std::uint64_t sd = seed();
    attn::Generator gen(sd);
    const Array y = attn::dropout(x, p, true, gen).to_array(), xa = x.to_array();
    for (std::size_t i = 0; i < y.size(); ++i)
      RC_ASSERT(y.flat(i) == 0.0 || std::abs(y.flat(i) - xa.flat(i) / (1 - p)) <= 1e-12 * std::abs(y.flat(i)));
    assert_close("dropout in eval", attn::dropout(x, p, false, gen), xa, 0, 0);
    assert_gradcheck("dropout", [&](const Inputs& in) {
      attn::Generator same(sd);  // the same mask at every call
      return attn::dropout(in[0], p, true, same);
    }, {x});
  });
}

TEST_CASE("argmax, the comparisons (broadcasting) and one_hot against loops") {
  PROPERTY("argmax, eq, ne, lt, le, gt, ge, one_hot", [] {
    const Shape s = shape(1, 3);
    const Tensor x = randn(s, seed(), false);
    const long d = dim(s.size());
    const std::size_t pd = positive_dim(d, s.size());
    const attn::Index am = attn::argmax(x, d, true);
    const Array xa = x.to_array();
    for (std::size_t i = 0; i < xa.size(); ++i) {
      Shape index = unravel(i, s);
      const std::size_t at = index[pd];
      index[pd] = 0;
      Shape best = index;
      best[pd] = std::size_t(am.flat(ravel(index, [&] { Shape k = s; k[pd] = 1; return k; }())));
      RC_ASSERT(xa.flat(i) <= xa.flat(ravel(best, s)) || at == best[pd]);
    }
    // Comparisons of x with a broadcast y that shares some values with x.
    const Shape sy = broadcastable_to(s);
    Array ya = randn(sy, seed(), false).to_array();
    for (std::size_t i = 0; i < ya.size(); i += 2) ya.flat(i) = xa.flat(i % xa.size());
    const Tensor y(ya);
    const std::vector<std::pair<const char*, std::function<attn::Mask(const Tensor&, const Tensor&)>>> ops = {
        {"eq", attn::eq}, {"ne", attn::ne}, {"lt", attn::lt}, {"le", attn::le}, {"gt", attn::gt}, {"ge", attn::ge}};
    const std::vector<std::function<bool(double, double)>> refs = {
        std::equal_to<double>(), std::not_equal_to<double>(), std::less<double>(),
        std::less_equal<double>(), std::greater<double>(), std::greater_equal<double>()};
    const Shape full = broadcast(s, sy);
    for (std::size_t k = 0; k < ops.size(); ++k) {
      const attn::Mask m = ops[k].second(x, y);
      RC_ASSERT(Shape(m.shape().begin(), m.shape().end()) == full);
      for (std::size_t i = 0; i < m.size(); ++i) {
        const Shape index = unravel(i, full);
        RC_ASSERT(m.flat(i) == refs[k](at_broadcast(xa, s, index), at_broadcast(ya, sy, index)));
      }
    }
    const std::size_t C = *rc::gen::inRange<std::size_t>(1, 5);
    attn::Index ids = attn::Index::from_shape(s);
    for (auto& id : ids) id = *rc::gen::inRange<std::int64_t>(0, std::int64_t(C));
    const Array oh = attn::one_hot(ids, C).to_array();
    for (std::size_t i = 0; i < oh.size(); ++i) RC_ASSERT(oh.flat(i) == (std::int64_t(i % C) == ids.flat(i / C) ? 1.0 : 0.0));
  });
}
