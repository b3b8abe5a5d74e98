// An LSTM layer over a whole sequence as one fused op, in one or more
// directions at once: what nn::LSTM runs (nn/rnn.cpp).
//
// Composed, each step is three ops (linear, lstm_cell_c, lstm_cell_h, core/backend/lstm_cell.cpp)
// and the backward of the T steps computes the recurrent weight's gradient as T
// thin products G_t^T h_{t-1} ([4H, B] x [B, H]: B terms each). Here the backward
// runs backpropagation through time itself and computes it as ONE product over
// all steps, dW_hh = dG^T H_prev ([4H, T*B] x [T*B, H]), and the directions of
// a bidirectional layer run on two threads at once, each on one thread
// (core/backend/parallel.hpp: a parallel_for inside them runs serially).
// tests/core/test_lstm_sequence.cpp checks it against the composed steps, values
// and gradients, and by finite differences; docs/ops/fused.md derives it.
//
// One direction, at time t (t = 0 .. T-1, or T-1 .. 0 when reverse), row b:
//   gates = xw_t + h W_hh^T                          [B, 4H]: i, f, g, o
//   c' = sigmoid(f) c + sigmoid(i) tanh(g),   h' = sigmoid(o) tanh(c')
//   if t < lengths[b]: (h, c) = (h', c') and the output is h'; else (padding)
//   the state passes through unchanged and the output is 0.
#include "fused.hpp"

#include "../kernels.hpp"
#include "../ops.hpp"
#include "../ops/layout.hpp"
#include "../record.hpp"
#include "blas.hpp"
#include "parallel.hpp"
#include "vecmath.hpp"

namespace attn {

namespace {

// The sizes every direction shares, and where sequence b's padding starts.
struct SequenceShape {
  std::size_t T = 0, B = 0, H = 0, D = 0;
  std::vector<std::int64_t> lengths;  // empty: no padding
  bool real(std::size_t b, std::size_t t) const {
    return lengths.empty() || static_cast<std::int64_t>(t) < lengths[b];
  }
};

// What one direction's forward keeps for its backward, indexed by time t.
template <class T>
struct Trace {
  xt::xarray<T> h_prev, c_prev;  // [T, B, H]: the state that step t started from
  xt::xarray<T> act;             // [T, B, 5H]: sigmoid(i), sigmoid(f), tanh(g), sigmoid(o), tanh(c')
};

// Rows of the batch per share of the threads for the pointwise loops (as lstm.cpp):
// one share when a parallel_for already runs the directions.
std::size_t rows_per_share(std::size_t B, std::size_t H) { return even_grain(B, 4 * H, 4096); }

// Direction d's forward. xw [T, B, 4H], w [4H, H]; the state starts at h0, c0 [B, H].
// Writes its outputs into columns d*H .. d*H + H of y [T + 2, B, D*H], then its
// final h (row T) and c (row T + 1).
template <class T>
Trace<T> forward_direction(const SequenceShape& s, std::size_t d, bool reverse, const T* xw, const T* h0,
                           const T* c0, const T* w, T* y) {
  const std::size_t B = s.B, H = s.H, G = 4 * H, Y = s.D * H;  // Y: a row of y
  Trace<T> tr{xt::xarray<T>::from_shape({s.T, B, H}), xt::xarray<T>::from_shape({s.T, B, H}),
              xt::xarray<T>::from_shape({s.T, B, 5 * H})};
  xt::xarray<T> gates = xt::xarray<T>::from_shape({B, G});
  auto time = [&](std::size_t k) { return reverse ? s.T - 1 - k : k; };
  vecmath::copy(h0, tr.h_prev.data() + time(0) * B * H, B * H);
  vecmath::copy(c0, tr.c_prev.data() + time(0) * B * H, B * H);
  for (std::size_t k = 0; k < s.T; ++k) {
    const std::size_t t = time(k);
    const T* h = tr.h_prev.data() + t * B * H;  // [B, H]
    const T* c = tr.c_prev.data() + t * B * H;
    // The next step starts from the state this one leaves; after the last, rows T and T + 1 of y hold it.
    const bool last = k + 1 == s.T;
    T* h_next = last ? nullptr : tr.h_prev.data() + time(k + 1) * B * H;
    T* c_next = last ? nullptr : tr.c_prev.data() + time(k + 1) * B * H;
    // gates = h W_hh^T: [B, H] x [4H, H]^T -> [B, 4H]; xw_t is added row by row below
    blas::gemm(false, true, B, G, H, T(1), h, H, w, H, T(0), gates.data(), G);
    parallel_for(B, rows_per_share(B, H), [&](std::size_t b0, std::size_t b1) {
      for (std::size_t b = b0; b < b1; ++b) {
        T* out = y + (t * B + b) * Y + d * H;
        T* hn = last ? y + (s.T * B + b) * Y + d * H : h_next + b * H;
        T* cn = last ? y + ((s.T + 1) * B + b) * Y + d * H : c_next + b * H;
        if (!s.real(b, t)) {  // padding: the state passes through, the output is 0
          std::copy(h + b * H, h + b * H + H, hn);
          std::copy(c + b * H, c + b * H + H, cn);
          std::fill(out, out + H, T(0));
          continue;
        }
        T* g = gates.data() + b * G;
        const T* x = xw + (t * B + b) * G;
        for (std::size_t j = 0; j < G; ++j) g[j] += x[j];
        T* a = tr.act.data() + (t * B + b) * 5 * H;
        vecmath::sigmoid(g, a, 2 * H);                 // i, f
        vecmath::tanh(g + 2 * H, a + 2 * H, H);        // g
        vecmath::sigmoid(g + 3 * H, a + 3 * H, H);     // o
        for (std::size_t j = 0; j < H; ++j) cn[j] = a[H + j] * c[b * H + j] + a[j] * a[2 * H + j];
        vecmath::tanh(cn, a + 4 * H, H);               // tanh(c')
        for (std::size_t j = 0; j < H; ++j) out[j] = hn[j] = a[3 * H + j] * a[4 * H + j];
      }
    });
  }
  return tr;
}

// Direction d's gradients, from dy [T + 2, B, D*H] (the gradient of y).
template <class T>
struct DirectionGrads {
  xt::xarray<T> dxw, dh0, dc0, dw;  // [T, B, 4H], [B, H], [B, H], [4H, H]
};

// Backpropagation through time, from the last step back to the first. dh and dc
// carry the gradient of the state the current step left, h and c.
template <class T>
DirectionGrads<T> backward_direction(const SequenceShape& s, std::size_t d, bool reverse, const Trace<T>& tr,
                                     const T* w, const T* dy) {
  const std::size_t B = s.B, H = s.H, G = 4 * H, Y = s.D * H;
  DirectionGrads<T> gr{xt::xarray<T>::from_shape({s.T, B, G}), xt::xarray<T>::from_shape({B, H}),
                       xt::xarray<T>::from_shape({B, H}), xt::xarray<T>::from_shape({G, H})};
  xt::xarray<T>& dh = gr.dh0;  // the final state's gradients, rows T and T + 1 of dy
  xt::xarray<T>& dc = gr.dc0;
  for (std::size_t b = 0; b < B; ++b) {
    vecmath::copy(dy + (s.T * B + b) * Y + d * H, dh.data() + b * H, H);
    vecmath::copy(dy + ((s.T + 1) * B + b) * Y + d * H, dc.data() + b * H, H);
  }
  xt::xarray<T> dh_prev = xt::xarray<T>::from_shape({B, H});
  for (std::size_t k = s.T; k-- > 0;) {
    const std::size_t t = reverse ? s.T - 1 - k : k;
    T* dgates = gr.dxw.data() + t * B * G;  // d gates_t = d xw_t [B, 4H]
    parallel_for(B, rows_per_share(B, H), [&](std::size_t b0, std::size_t b1) {
      for (std::size_t b = b0; b < b1; ++b) {
        T* dg = dgates + b * G;
        if (!s.real(b, t)) {  // padding: dh and dc pass through to the state before
          std::fill(dg, dg + G, T(0));
          continue;
        }
        const T* a = tr.act.data() + (t * B + b) * 5 * H;
        const T* c = tr.c_prev.data() + (t * B + b) * H;
        const T* dout = dy + (t * B + b) * Y + d * H;
        T* dhb = dh.data() + b * H;
        T* dcb = dc.data() + b * H;
        for (std::size_t j = 0; j < H; ++j) {
          const T i = a[j], f = a[H + j], g = a[2 * H + j], o = a[3 * H + j], tc = a[4 * H + j];
          const T dhj = dhb[j] + dout[j];                    // h' is both the output and the next state
          const T dcj = dcb[j] + dhj * o * (T(1) - tc * tc);  // d h'/d c' = sigmoid(o) (1 - tanh(c')^2)
          dg[j] = dcj * g * i * (T(1) - i);                   // d c'/d pre_i = tanh(g) sigmoid'(i)
          dg[H + j] = dcj * c[j] * f * (T(1) - f);            // d c'/d pre_f = c sigmoid'(f)
          dg[2 * H + j] = dcj * i * (T(1) - g * g);           // d c'/d pre_g = sigmoid(i) (1 - tanh(g)^2)
          dg[3 * H + j] = dhj * tc * o * (T(1) - o);          // d h'/d pre_o = tanh(c') sigmoid'(o)
          dcb[j] = dcj * f;                                   // d c'/d c = sigmoid(f)
        }
      }
    });
    // d h = d gates_t W_hh: [B, 4H] x [4H, H] -> [B, H]; 0 in padded rows, whose dh passes through
    blas::gemm(false, false, B, H, G, T(1), dgates, G, w, H, T(0), dh_prev.data(), H);
    for (std::size_t b = 0; b < B; ++b)
      if (s.real(b, t)) vecmath::copy(dh_prev.data() + b * H, dh.data() + b * H, H);
  }
  // d W_hh = sum over t of d gates_t^T h_prev_t, all steps in one product:
  // [T*B, 4H]^T x [T*B, H] -> [4H, H]
  blas::gemm(true, false, G, H, s.T * B, T(1), gr.dxw.data(), G, tr.h_prev.data(), H, T(0), gr.dw.data(), H);
  return gr;
}

template <class T>
Tensor lstm_sequence_(const std::vector<LSTMDirection>& dirs, const SequenceShape& s) {
  std::vector<Tensor> inputs;  // per direction: xw, h0, c0, weight_hh
  std::vector<bool> reverse;
  for (const LSTMDirection& dir : dirs) {
    inputs.insert(inputs.end(), {dir.xw, dir.h0, dir.c0, dir.weight_hh});
    reverse.push_back(dir.reverse);
  }
  xt::xarray<T> y = xt::xarray<T>::from_shape({s.T + 2, s.B, s.D * s.H});
  std::vector<Trace<T>> traces(s.D);
  // One direction per thread (when there are threads to spare), each on that thread alone.
  parallel_for(s.D, 1, [&](std::size_t d0, std::size_t d1) {
    for (std::size_t d = d0; d < d1; ++d)
      traces[d] = forward_direction<T>(s, d, reverse[d], inputs[4 * d].data<T>().data(),
                                       inputs[4 * d + 1].data<T>().data(), inputs[4 * d + 2].data<T>().data(),
                                       inputs[4 * d + 3].data<T>().data(), y.data());
  });
  return record<T>("lstm_sequence", std::move(y), inputs,
                   [s, reverse, traces = std::move(traces)](Node<T>& out) {
                     std::vector<DirectionGrads<T>> grads(s.D);
                     parallel_for(s.D, 1, [&](std::size_t d0, std::size_t d1) {
                       for (std::size_t d = d0; d < d1; ++d)
                         grads[d] = backward_direction<T>(s, d, reverse[d], traces[d],
                                                          out.input(4 * d + 3).value.data(), out.grad.data());
                     });
                     // Into the inputs' gradients one after the other: two directions may share an input.
                     for (std::size_t d = 0; d < s.D; ++d) {
                       out.add_to_input_grad(4 * d, std::move(grads[d].dxw));
                       out.add_to_input_grad(4 * d + 1, std::move(grads[d].dh0));
                       out.add_to_input_grad(4 * d + 2, std::move(grads[d].dc0));
                       out.add_to_input_grad(4 * d + 3, std::move(grads[d].dw));
                     }
                   });
}

// Composed: each direction's steps as linear, lstm_cell_c and lstm_cell_h (composed
// too, the switch being off); a padded step keeps the state and outputs 0.
Tensor composed_lstm_sequence(const std::vector<LSTMDirection>& dirs, const SequenceShape& s) {
  std::vector<Tensor> outputs, final_h, final_c;
  for (const LSTMDirection& dir : dirs) {
    Tensor h = dir.h0, c = dir.c0;  // [B, H]
    std::vector<Tensor> y(s.T);
    for (std::size_t k = 0; k < s.T; ++k) {
      const std::size_t t = dir.reverse ? s.T - 1 - k : k;
      const Tensor gates = linear(h, dir.weight_hh, select(dir.xw, 0, long(t)));  // xw_t + h W_hh^T [B, 4H]
      const Tensor c_new = lstm_cell_c(gates, c), h_new = lstm_cell_h(gates, c_new);
      Mask real = Mask::from_shape({s.B, s.H});  // true on rows b whose step t is not padding
      for (std::size_t b = 0; b < s.B; ++b)
        for (std::size_t j = 0; j < s.H; ++j) real(b, j) = s.real(b, t);
      h = attn::where(real, h_new, h);
      c = attn::where(real, c_new, c);
      y[t] = attn::where(real, h_new, zeros_like(h_new));
    }
    outputs.push_back(stack(y, 0));  // [T, B, H]
    final_h.push_back(h);
    final_c.push_back(c);
  }
  // [T + 2, B, D * H]: the outputs, then the final h and the final c
  return concat({concat(outputs, 2), unsqueeze(concat(final_h, 1), 0), unsqueeze(concat(final_c, 1), 0)}, 0);
}

}  // namespace

Tensor lstm_sequence(const std::vector<LSTMDirection>& directions, const std::vector<std::int64_t>& lengths) {
  if (directions.empty()) throw ValueError("lstm_sequence: expected at least one direction");
  const Tensor& first = directions[0].xw;
  for (const LSTMDirection& dir : directions) check_inputs("lstm_sequence", {&first, &dir.xw, &dir.h0, &dir.c0, &dir.weight_hh});
  const Shape x = first.shape(), w = directions[0].weight_hh.shape();
  if (x.size() != 3 || x[0] == 0 || w.size() != 2 || w[0] != 4 * w[1] || x[2] != w[0])
    throw ShapeError("lstm_sequence: expected xw [T, B, 4H] (T >= 1) and weight_hh [4H, H], got xw " + shape_str(x) +
                     " and weight_hh " + shape_str(w));
  SequenceShape s;
  s.T = x[0], s.B = x[1], s.H = w[1], s.D = directions.size();
  const Shape state{s.B, s.H};
  auto expect = [](const Tensor& t, const Shape& shape, const std::string& what) {
    if (t.shape() != shape)
      throw ShapeError("lstm_sequence: expected " + what + " " + shape_str(shape) + ", got " + shape_str(t.shape()));
  };
  for (std::size_t d = 0; d < s.D; ++d) {
    const std::string of = " of direction " + std::to_string(d);
    expect(directions[d].xw, x, "xw" + of);
    expect(directions[d].weight_hh, w, "weight_hh" + of);
    expect(directions[d].h0, state, "h0" + of);
    expect(directions[d].c0, state, "c0" + of);
  }
  if (!lengths.empty()) {
    if (lengths.size() != s.B)
      throw ShapeError("lstm_sequence: expected one length per sequence (B = " + std::to_string(s.B) + "), got " +
                       std::to_string(lengths.size()) + " lengths");
    for (std::size_t b = 0; b < s.B; ++b)
      if (lengths[b] < 1 || lengths[b] > static_cast<std::int64_t>(s.T))
        throw ValueError("lstm_sequence: every length must be in 1..T (T = " + std::to_string(s.T) +
                         "), got lengths[" + std::to_string(b) + "] = " + std::to_string(lengths[b]));
    s.lengths = lengths;
  }
  if (!fused_ops_enabled()) return composed_lstm_sequence(directions, s);
  return ATTN_DISPATCH(first.dtype(), lstm_sequence_, directions, s);
}

}  // namespace attn
