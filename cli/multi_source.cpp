// Chapter 17's multi-source translation on the command line (see multi_source.hpp).
#include "multi_source.hpp"

#include "parse.hpp"

#include "../data/multi_source.hpp"
#include "../data/vocab.hpp"

namespace attn::cli {

using nlohmann::json;

namespace {
constexpr std::uint64_t kMaxModelSize = 65536;
}  // namespace

json default_multi_source_model_config() {
  const models::MultiSourceConfig c;
  return {{"model", "multi-source"},
          {"sources", c.sources},
          {"embed_dim", c.embed_dim},
          {"hidden_dim", c.hidden_dim},
          {"attention", models::multi_source_attention_name(c.attention)},
          {"init", models::multi_source_init_name(c.init)}};
}

std::unique_ptr<models::Seq2Seq> make_multi_source_model(const json& model, std::size_t src_vocab,
                                                         std::size_t tgt_vocab) {
  const Fields f(model, "model config of 'multi-source'");
  f.only({"model", "sources", "embed_dim", "hidden_dim", "attention", "init", "sep_id"});
  models::MultiSourceConfig c;
  c.src_vocab = src_vocab;
  c.tgt_vocab = tgt_vocab;
  c.sources = f.count_or("sources", c.sources, 2, 16);
  c.embed_dim = f.count_or("embed_dim", c.embed_dim, 1, kMaxModelSize);
  c.hidden_dim = f.count_or("hidden_dim", c.hidden_dim, 1, kMaxModelSize);
  if (f.has("attention")) c.attention = models::multi_source_attention_from_name(f.one_of("attention", {"separate", "flat"}));
  if (f.has("init")) c.init = models::multi_source_init_from_name(f.one_of("init", {"child-sum", "basic"}));
  c.sep_id = static_cast<std::int64_t>(f.count_or("sep_id", src_vocab > 0 ? src_vocab - 1 : 0, 0, src_vocab ? src_vocab - 1 : 0));
  return std::make_unique<models::MultiSourceSeq2Seq>(c);
}

data::Tokens pack_separators(const data::Tokens& src, std::size_t sources, const std::string& where) {
  std::vector<data::Tokens> parts(1);
  for (const std::string& token : src) {
    if (token == data::kSeparator)
      throw ValueError(where + ": the source '" + data::join(src) + "' holds the token " + data::kSeparator +
                       ", which a multi-source run reserves; separate the sources with " + kSourceSeparator);
    if (token == kSourceSeparator) parts.emplace_back();
    else parts.back().push_back(token);
  }
  if (parts.size() != sources)
    throw ValueError(where + ": the source '" + data::join(src) + "' has " + std::to_string(parts.size()) +
                     (parts.size() == 1 ? " part" : " parts") + "; a run of " + std::to_string(sources) +
                     " sources needs them separated by " + kSourceSeparator + " (a word of its own, spaces around it)");
  for (const data::Tokens& p : parts)
    if (p.empty())
      throw ValueError(where + ": the source '" + data::join(src) + "' has an empty part between its " +
                       kSourceSeparator + " separators");
  return data::pack_sources(parts);
}

}  // namespace attn::cli
