// The LSTM cell's pointwise math as two fused ops (nn::LSTMCell and nn::LSTM use them).
//
// gates [B, 4H] holds the pre-activations of the input, forget, cell and output
// gates side by side (PyTorch's order i, f, g, o): gates = x W_ih^T + h W_hh^T + b.
//   lstm_cell_c:  c' = sigmoid(f) * c + sigmoid(i) * tanh(g)
//   lstm_cell_h:  h' = sigmoid(o) * tanh(c')
// Composed from chunk, sigmoid, tanh, mul and add the same step takes 13 ops,
// each a pass over memory and a saved array; fused it takes 2. tests/core/test_lstm.cpp
// checks both against the composed ops, value and gradient.
#include "fused.hpp"

#include "../kernels.hpp"
#include "../ops.hpp"
#include "../ops/layout.hpp"
#include "../record.hpp"
#include "parallel.hpp"
#include "vecmath.hpp"

namespace attn {

namespace {

// Rows of the batch per share of the threads (core/backend/parallel.hpp): dealt out
// evenly, at least 4096 gate values a share. Each row is independent, and a
// product already split over the threads wrote the gates.
std::size_t rows_per_share(std::size_t B, std::size_t H) { return even_grain(B, 4 * H, 4096); }

template <class T>
Tensor lstm_cell_c_(const Tensor& gates, const Tensor& c) {
  const std::size_t B = c.shape()[0], H = c.shape()[1];
  const T* G = gates.data<T>().data();  // [B, 4H]
  const T* C = c.data<T>().data();      // [B, H]
  xt::xarray<T> c_new = xt::xarray<T>::from_shape({B, H});
  xt::xarray<T> act = xt::xarray<T>::from_shape({B, 3 * H});  // sigmoid(i), sigmoid(f), tanh(g): kept for backward
  parallel_for(B, rows_per_share(B, H), [&](std::size_t b0, std::size_t b1) {
    for (std::size_t b = b0; b < b1; ++b) {
      T* a = act.data() + b * 3 * H;
      vecmath::sigmoid(G + b * 4 * H, a, 2 * H);          // i and f
      vecmath::tanh(G + b * 4 * H + 2 * H, a + 2 * H, H);  // g
      for (std::size_t j = 0; j < H; ++j) c_new.data()[b * H + j] = a[H + j] * C[b * H + j] + a[j] * a[2 * H + j];
    }
  });
  return record<T>("lstm_cell_c", std::move(c_new), {gates, c}, [B, H, act = std::move(act)](Node<T>& out) {
    const T* dC = out.grad.data();                 // dL/dc' [B, H]
    const T* C = out.input(1).value.data();        // c [B, H]
    if (out.input_requires_grad(0)) {
      // added straight into the gates' gradient, which lstm_cell_h adds to as well; o does not enter c'
      T* dgates = input_grad_buffer(out, 0).data();  // [B, 4H]
      parallel_for(B, rows_per_share(B, H), [&](std::size_t b0, std::size_t b1) {
        for (std::size_t b = b0; b < b1; ++b) {
          const T* a = act.data() + b * 3 * H;
          T* dg = dgates + b * 4 * H;
          for (std::size_t j = 0; j < H; ++j) {
            const T d = dC[b * H + j], i = a[j], f = a[H + j], g = a[2 * H + j];
            dg[j] += d * g * i * (T(1) - i);                // d c'/d pre_i = tanh(g) * sigmoid'(i)
            dg[H + j] += d * C[b * H + j] * f * (T(1) - f);  // d c'/d pre_f = c * sigmoid'(f)
            dg[2 * H + j] += d * i * (T(1) - g * g);        // d c'/d pre_g = sigmoid(i) * (1 - tanh(g)^2)
          }
        }
      });
    }
    if (out.input_requires_grad(1)) {
      T* dc = input_grad_buffer(out, 1).data();  // [B, H]
      for (std::size_t b = 0; b < B; ++b)
        for (std::size_t j = 0; j < H; ++j) dc[b * H + j] += dC[b * H + j] * act.data()[b * 3 * H + H + j];  // d c'/d c = sigmoid(f)
    }
  });
}

template <class T>
Tensor lstm_cell_h_(const Tensor& gates, const Tensor& c_new) {
  const std::size_t B = c_new.shape()[0], H = c_new.shape()[1];
  const T* G = gates.data<T>().data();  // [B, 4H]
  xt::xarray<T> h = xt::xarray<T>::from_shape({B, H});
  xt::xarray<T> act = xt::xarray<T>::from_shape({B, 2 * H});  // sigmoid(o), tanh(c'): kept for backward
  parallel_for(B, rows_per_share(B, H), [&](std::size_t b0, std::size_t b1) {
    for (std::size_t b = b0; b < b1; ++b) {
      T* a = act.data() + b * 2 * H;
      vecmath::sigmoid(G + b * 4 * H + 3 * H, a, H);            // o
      vecmath::tanh(c_new.data<T>().data() + b * H, a + H, H);  // tanh(c')
      for (std::size_t j = 0; j < H; ++j) h.data()[b * H + j] = a[j] * a[H + j];
    }
  });
  return record<T>("lstm_cell_h", std::move(h), {gates, c_new}, [B, H, act = std::move(act)](Node<T>& out) {
    const T* dH = out.grad.data();  // dL/dh' [B, H]
    // added straight into the inputs' gradients; only o enters h', so only its quarter of the gates' changes
    T* dgates = out.input_requires_grad(0) ? input_grad_buffer(out, 0).data() : nullptr;  // [B, 4H]
    T* dc = out.input_requires_grad(1) ? input_grad_buffer(out, 1).data() : nullptr;       // [B, H]
    parallel_for(B, rows_per_share(B, H), [&](std::size_t b0, std::size_t b1) {
      for (std::size_t b = b0; b < b1; ++b) {
        const T* a = act.data() + b * 2 * H;
        for (std::size_t j = 0; j < H; ++j) {
          const T d = dH[b * H + j], o = a[j], tc = a[H + j];
          if (dgates) dgates[b * 4 * H + 3 * H + j] += d * tc * o * (T(1) - o);  // d h'/d pre_o = tanh(c') * sigmoid'(o)
          if (dc) dc[b * H + j] += d * o * (T(1) - tc * tc);  // d h'/d c' = sigmoid(o) * (1 - tanh(c')^2)
        }
      }
    });
  });
}

void check_lstm(const char* op, const Tensor& gates, const Tensor& c, const char* c_name) {
  check_inputs(op, {&gates, &c});
  const Shape g = gates.shape(), s = c.shape();
  if (s.size() != 2 || g.size() != 2 || g[0] != s[0] || g[1] != 4 * s[1])
    throw ShapeError(std::string(op) + ": expected gates [B, 4H] and " + c_name + " [B, H], got gates " +
                     shape_str(g) + " and " + c_name + " " + shape_str(s));
}

}  // namespace

Tensor lstm_cell_c(const Tensor& gates, const Tensor& c) {
  check_lstm("lstm_cell_c", gates, c, "c");
  if (!fused_ops_enabled()) {
    const std::vector<Tensor> g = chunk(gates, 4, 1);  // composed: 4 x [B, H], gates i, f, g, o
    return sigmoid(g[1]) * c + sigmoid(g[0]) * tanh(g[2]);
  }
  return ATTN_DISPATCH(c.dtype(), lstm_cell_c_, gates, c);
}

Tensor lstm_cell_h(const Tensor& gates, const Tensor& c_new) {
  check_lstm("lstm_cell_h", gates, c_new, "c_new");
  if (!fused_ops_enabled()) return sigmoid(chunk(gates, 4, 1)[3]) * tanh(c_new);  // composed
  return ATTN_DISPATCH(c_new.dtype(), lstm_cell_h_, gates, c_new);
}

}  // namespace attn
