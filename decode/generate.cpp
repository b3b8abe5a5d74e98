#include "generate.hpp"

#include "../core/errors.hpp"
#include "../data/vocab.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace attn::models {

Generated generate(LanguageModel& model, const std::vector<std::int64_t>& prompt, const GenerateOptions& options,
                   Generator& gen) {
  if (!(options.temperature >= 0) || !std::isfinite(options.temperature))
    throw ValueError("generate: temperature must be finite and >= 0, got " + std::to_string(options.temperature));
  const std::size_t V = model.vocab_size();
  for (std::int64_t id : prompt)
    if (id < 0 || std::size_t(id) >= V)
      throw ValueError("generate: the prompt holds the id " + std::to_string(id) + ", outside the model's " +
                       std::to_string(V) + " tokens");
  nn::Module& m = model.module();
  // Eval mode while writing, the caller's mode back however generate ends.
  struct ModeGuard {
    nn::Module& m;
    bool was_training;
    ~ModeGuard() { m.train(was_training); }
  } guard{m, m.is_training()};
  m.eval();
  std::size_t context = options.context;
  if (model.max_length() && (context == 0 || context > model.max_length())) context = model.max_length();
  std::vector<std::int64_t> text{data::Vocab::eos_id};
  text.insert(text.end(), prompt.begin(), prompt.end());
  Generated out;
  DecoderState carry;  // what the model keeps from one step to the next (a Transformer: its keys and values)
  for (std::size_t step = 0; step < options.max_tokens; ++step) {
    const std::size_t from = context && text.size() > context ? text.size() - context : 0;
    const std::size_t T = text.size() - from;
    Index inputs = xt::zeros<std::int64_t>({std::size_t(1), T});  // [1, T]
    for (std::size_t t = 0; t < T; ++t) inputs(0, t) = text[from + t];
    const xt::xarray<double> logp = model.last_log_probs(inputs, carry);  // [V]
    std::vector<double> last(logp.begin(), logp.end());
    // <pad> and <bos> are no text: never written.
    std::vector<std::size_t> allowed;
    for (std::size_t v = 0; v < V; ++v)
      if (std::int64_t(v) != data::Vocab::pad_id && std::int64_t(v) != data::Vocab::bos_id) allowed.push_back(v);
    std::sort(allowed.begin(), allowed.end(), [&](std::size_t a, std::size_t b) {
      return last[a] > last[b] || (last[a] == last[b] && a < b);  // most likely first; ties by id, reproducibly
    });
    std::size_t chosen = allowed.front();
    if (options.temperature > 0) {
      if (options.top_k && options.top_k < allowed.size()) allowed.resize(options.top_k);
      // p_i ~ exp(log p_i / temperature), relative to the most likely, so that nothing overflows.
      std::vector<double> weight(allowed.size());
      for (std::size_t i = 0; i < allowed.size(); ++i)
        weight[i] = std::exp((last[allowed[i]] - last[allowed.front()]) / options.temperature);
      const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
      double u = gen.uniform() * total;
      chosen = allowed.back();
      for (std::size_t i = 0; i < allowed.size(); ++i) {
        if (u < weight[i]) {
          chosen = allowed[i];
          break;
        }
        u -= weight[i];
      }
    }
    text.push_back(std::int64_t(chosen));
    out.ids.push_back(std::int64_t(chosen));
    out.log_probs.push_back(last[chosen]);
  }
  return out;
}

}  // namespace attn::models
