// What the Transformer's encoder and decoder stacks share (torch.nn.TransformerEncoder
// and TransformerDecoder): num_layers copies of one layer ("layers.0", "layers.1",
// ...) and an optional final LayerNorm ("norm"; pre-norm stacks need it, since
// their last layer's output is not normalized). As PyTorch's deepcopy, every
// layer starts as an exact copy of the given layer (same settings, key-value
// heads, self-attention window and weights);
// `gen` drives the copies' dropout. The given layer is not part of the stack.
#pragma once

#include "../core/random.hpp"
#include "activation.hpp"
#include "attention/multihead.hpp"
#include "layer_norm.hpp"
#include "module_list.hpp"

#include <memory>
#include <sstream>
#include <string>

namespace attn::nn {

namespace detail {
// Copies every parameter value of `from` into `to` (same names and shapes),
// converting `to` to from's dtype first: PyTorch's deepcopy of a layer.
void copy_parameters(const Module& from, Module& to);

// A layer's settings as PyTorch prints them, for extra_repr.
template <class Layer>
std::string layer_settings(const Layer& l) {
  std::ostringstream os;
  os << "d_model=" << l.d_model << ", nhead=" << l.nhead << ", dim_feedforward=" << l.dim_feedforward
     << ", dropout=" << l.dropout_p << ", activation=" << activation_name(l.activation)
     << ", layer_norm_eps=" << l.layer_norm_eps << ", norm_first=" << (l.norm_first ? "true" : "false");
  return os.str();
}
}  // namespace detail

template <class Layer>
class TransformerStack : public Module {
 public:
  std::size_t num_layers;
  ModuleList<Layer> layers;
  std::unique_ptr<LayerNorm> norm;  // null when built with norm = false

 protected:
  TransformerStack(const char* name, const Layer& layer, std::size_t num_layers, bool norm, Generator& gen)
      : Module(name), num_layers(num_layers) {
    for (std::size_t i = 0; i < num_layers; ++i) {
      Layer& copy = layers.emplace_back(layer.d_model, layer.nhead, GroupedQuery{layer.self_attn.num_kv_heads},
                                        layer.dim_feedforward, layer.dropout_p, layer.activation,
                                        layer.layer_norm_eps, layer.norm_first, gen);
      detail::copy_parameters(layer, copy);
      // The attention's switches that are not constructor arguments.
      copy.self_attn.window = layer.self_attn.window;
      copy.self_attn.use_flash_attention = layer.self_attn.use_flash_attention;
      copy.self_attn.position = layer.self_attn.position;
      copy.self_attn.rotary_base = layer.self_attn.rotary_base;
      copy.train(layer.is_training());
    }
    register_module("layers", layers);
    if (norm) {
      this->norm = std::make_unique<LayerNorm>(layer.d_model, layer.layer_norm_eps);
      this->norm->to(layer.dtype());
      register_module("norm", *this->norm);
    }
  }

  // The final LayerNorm, when there is one.
  Tensor final_norm(const Tensor& x) { return norm ? (*norm)(x) : x; }
};

}  // namespace attn::nn
