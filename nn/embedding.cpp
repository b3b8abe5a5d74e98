#include "embedding.hpp"

#include "init.hpp"

#include "../core/ops.hpp"

#include <xtensor/xmanipulation.hpp>
#include <xtensor/xoperation.hpp>
#include <xtensor/xview.hpp>

namespace attn::nn {

Embedding::Embedding(std::size_t num_embeddings, std::size_t embedding_dim, std::optional<long> padding_idx,
                     Generator& gen)
    : Module("Embedding"), num_embeddings(num_embeddings), embedding_dim(embedding_dim) {
  if (padding_idx) {
    const long n = static_cast<long>(num_embeddings);
    if (*padding_idx >= n || *padding_idx < -n)
      throw ValueError("Embedding: padding_idx must be within num_embeddings (" + std::to_string(num_embeddings) +
                       "), got " + std::to_string(*padding_idx));
    this->padding_idx = static_cast<std::size_t>(*padding_idx < 0 ? *padding_idx + n : *padding_idx);
  }
  weight = zeros({num_embeddings, embedding_dim});
  register_parameter("weight", weight);
  reset_parameters(gen);
}

void Embedding::reset_parameters(Generator& gen) {
  init::normal_(weight, 0.0, 1.0, gen);
  if (padding_idx) {
    no_grad guard;
    if (weight.dtype() == Dtype::Float64) xt::row(weight.data<double>(), *padding_idx) = 0.0;
    else xt::row(weight.data<float>(), *padding_idx) = 0.0f;
  }
}

Tensor Embedding::forward(const Index& ids) const {
  Tensor out = embedding(weight, ids);  // ids S -> [S..., D]
  if (!padding_idx || !out.requires_grad()) return out;
  // Where the id is padding_idx, take the value from a detached copy: the
  // forward values are the same, but no gradient flows back to that row.
  Mask is_padding = xt::expand_dims(xt::equal(ids, static_cast<std::int64_t>(*padding_idx)), ids.dimension());
  if (!xt::any(is_padding)) return out;
  return attn::where(is_padding, out.detach(), out);  // mask [S..., 1] broadcasts over D
}

std::string Embedding::extra_repr() const {
  std::string s = std::to_string(num_embeddings) + ", " + std::to_string(embedding_dim);
  if (padding_idx) s += ", padding_idx=" + std::to_string(*padding_idx);
  return s;
}

}  // namespace attn::nn
