#include "registry.hpp"

#include "bahdanau.hpp"
#include "conv_attention.hpp"
#include "copynet.hpp"
#include "language_model.hpp"
#include "luong.hpp"
#include "monotonic.hpp"
#include "seq2seq_plain.hpp"
#include "transformer_seq2seq.hpp"

#include <algorithm>
#include <type_traits>

namespace attn::models {

namespace {

using nlohmann::json;

// Reads `config` into typed fields: every key must be a known field of the
// right type, so a typo ("hiden_dim") is an error instead of a silent default.
class Fields {
 public:
  Fields(const json& config, std::string model) : config_(config), model_(std::move(model)) {
    if (!config.is_object()) throw ValueError("model config: expected a JSON object, got " + config.dump());
  }
  template <class T>
  void read(const char* key, T& value) {
    known_.push_back(key);
    if (!config_.contains(key)) return;
    const json& v = config_.at(key);
    // json's get<std::size_t>() turns -4 into 2^64 - 4 and 2.5 into 2: sizes must be whole numbers >= 0.
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      if (!v.is_number_integer() || (std::is_unsigned_v<T> && v.get<std::int64_t>() < 0))
        throw ValueError("model config of '" + model_ + "': field '" + key + "' must be a whole number" +
                         (std::is_unsigned_v<T> ? " >= 0" : "") + ", got " + v.dump());
    try {
      value = config_.at(key).get<T>();
    } catch (const json::exception&) {
      throw ValueError("model config of '" + model_ + "': field '" + key + "' has the wrong type: " +
                       config_.at(key).dump());
    }
  }
  void check_unknown() const {
    for (const auto& item : config_.items()) {
      if (item.key() == "model") continue;
      if (std::find(known_.begin(), known_.end(), item.key()) == known_.end()) {
        std::string fields;
        for (const auto& k : known_) fields += (fields.empty() ? "" : ", ") + k;
        throw ValueError("model config of '" + model_ + "': unknown field '" + item.key() + "' (fields: " + fields + ")");
      }
    }
  }

 private:
  const json& config_;
  std::string model_;
  std::vector<std::string> known_;
};

// One function per model: reads (or, with an empty config, lists) its fields.
json plain_fields(const json& in, PlainSeq2SeqConfig& c) {
  Fields f(in, "seq2seq");
  f.read("embed_dim", c.embed_dim);
  f.read("hidden_dim", c.hidden_dim);
  f.check_unknown();
  return {{"model", "seq2seq"}, {"embed_dim", c.embed_dim}, {"hidden_dim", c.hidden_dim}};
}

json bahdanau_fields(const json& in, BahdanauConfig& c) {
  Fields f(in, "bahdanau");
  f.read("embed_dim", c.embed_dim);
  f.read("encoder_dim", c.encoder_dim);
  f.read("decoder_dim", c.decoder_dim);
  f.read("attention_dim", c.attention_dim);
  f.read("coverage", c.coverage);
  f.read("coverage_embedding", c.coverage_embedding);
  f.read("markov", c.markov);
  f.read("lexicon_bias", c.lexicon_bias);
  f.read("lexicon_epsilon", c.lexicon_epsilon);
  f.check_unknown();
  // An epsilon without the bias would be saved nowhere and do nothing: say so instead.
  if (in.contains("lexicon_epsilon") && !c.lexicon_bias)
    throw ValueError("model config of 'bahdanau': field 'lexicon_epsilon' needs lexicon_bias = true");
  json out = {{"model", "bahdanau"},         {"embed_dim", c.embed_dim},         {"encoder_dim", c.encoder_dim},
              {"decoder_dim", c.decoder_dim}, {"attention_dim", c.attention_dim}};
  // The options are written only when set: older configs stay as they were.
  if (c.coverage) out["coverage"] = true;
  if (c.coverage_embedding) out["coverage_embedding"] = c.coverage_embedding;
  if (c.markov) out["markov"] = true;
  if (c.lexicon_bias) out["lexicon_bias"] = true, out["lexicon_epsilon"] = c.lexicon_epsilon;
  return out;
}

json pointer_sentinel_fields(const json& in, PointerSentinelConfig& c) {
  Fields f(in, "pointer-sentinel");
  f.read("embed_dim", c.embed_dim);
  f.read("hidden_dim", c.hidden_dim);
  f.read("window", c.window);
  f.read("pointer", c.pointer);
  f.read("pointer_loss", c.pointer_loss);
  f.check_unknown();
  return {{"model", "pointer-sentinel"}, {"embed_dim", c.embed_dim}, {"hidden_dim", c.hidden_dim},
          {"window", c.window}, {"pointer", c.pointer}, {"pointer_loss", c.pointer_loss}};
}

// Chapter 15's character model: a small Transformer, no dropout, room for windows of up to 1,024 characters.
TransformerConfig chapter15_lm_config() {
  TransformerConfig c;
  c.d_model = 64;
  c.nhead = 4;
  c.num_encoder_layers = 1;
  c.num_decoder_layers = 2;
  c.dim_feedforward = 256;
  c.dropout = 0.0;
  c.max_len = 1024;
  return c;
}

// The fields a language model's config may hold, read strictly.
std::string language_model_name(const json& config) {
  if (!config.is_object() || !config.contains("model") || !config.at("model").is_string())
    throw ValueError("model config: expected {\"model\": NAME, ...}, got " + config.dump());
  const std::string name = config.at("model").get<std::string>();
  if (!is_language_model(name))
    throw ValueError("unknown language model '" + name + "' (pointer-sentinel, transformer-lm)");
  return name;
}

json monotonic_fields(const json& in, MonotonicConfig& c) {
  Fields f(in, "monotonic");
  f.read("embed_dim", c.embed_dim);
  f.read("encoder_dim", c.encoder_dim);
  f.read("decoder_dim", c.decoder_dim);
  f.read("attention_dim", c.attention_dim);
  f.read("noise_std", c.noise_std);
  f.read("offset_init", c.offset_init);
  f.check_unknown();
  return {{"model", "monotonic"},         {"embed_dim", c.embed_dim},         {"encoder_dim", c.encoder_dim},
          {"decoder_dim", c.decoder_dim}, {"attention_dim", c.attention_dim}, {"noise_std", c.noise_std},
          {"offset_init", c.offset_init}};
}

json luong_fields(const json& in, LuongConfig& c, const std::string& name) {
  Fields f(in, name);
  std::string score = luong_score_name(c.score), attention = luong_attention_name(c.attention);
  f.read("embed_dim", c.embed_dim);
  f.read("hidden_dim", c.hidden_dim);
  f.read("score", score);
  f.read("attention", attention);
  f.read("window", c.window);
  f.read("attention_dim", c.attention_dim);
  f.read("input_feeding", c.input_feeding);
  f.read("local_m_gaussian", c.local_m_gaussian);
  f.check_unknown();
  c.score = luong_score_from_name(score);
  c.attention = luong_attention_from_name(attention);
  if (name == "luong-local" && c.attention == LuongAttention::Global)
    throw ValueError("model config of 'luong-local': attention must be local-m or local-p, got global");
  json out = {{"model", name},           {"embed_dim", c.embed_dim}, {"hidden_dim", c.hidden_dim},
              {"score", score},          {"attention", attention},   {"window", c.window},
              {"attention_dim", c.attention_dim}, {"input_feeding", c.input_feeding}};
  if (c.local_m_gaussian) out["local_m_gaussian"] = true;  // written only when set: older configs stay as they were
  return out;
}

json transformer_fields(const json& in, TransformerConfig& c, const std::string& name = "transformer") {
  Fields f(in, name);
  std::string activation = nn::activation_name(c.activation);
  f.read("d_model", c.d_model);
  f.read("nhead", c.nhead);
  f.read("num_encoder_layers", c.num_encoder_layers);
  f.read("num_decoder_layers", c.num_decoder_layers);
  f.read("dim_feedforward", c.dim_feedforward);
  f.read("dropout", c.dropout);
  f.read("activation", activation);
  f.read("norm_first", c.norm_first);
  f.read("learned_positions", c.learned_positions);
  f.read("max_len", c.max_len);
  f.read("tie_weights", c.tie_weights);
  f.read("num_kv_heads", c.num_kv_heads);
  f.read("window", c.window);
  f.read("add_positions", c.add_positions);
  std::string attention_position = "none";
  f.read("attention_position", attention_position);
  f.check_unknown();
  if (attention_position == "rotary") c.attention_position = nn::AttentionPosition::Rotary;
  else if (attention_position == "alibi") c.attention_position = nn::AttentionPosition::ALiBi;
  else if (attention_position != "none")
    throw ValueError("model config of '" + name + "': attention_position must be none, rotary or alibi, got '" +
                     attention_position + "'");
  c.activation = nn::activation_from_name(activation);
  json out = {{"model", name},
          {"d_model", c.d_model},
          {"nhead", c.nhead},
          {"num_encoder_layers", c.num_encoder_layers},
          {"num_decoder_layers", c.num_decoder_layers},
          {"dim_feedforward", c.dim_feedforward},
          {"dropout", c.dropout},
          {"activation", activation},
          {"norm_first", c.norm_first},
          {"learned_positions", c.learned_positions},
          {"max_len", c.max_len},
          {"tie_weights", c.tie_weights}};
  // Written only when set: older configs stay as they were.
  if (c.num_kv_heads) out["num_kv_heads"] = c.num_kv_heads;
  if (c.window) out["window"] = c.window;
  if (!c.add_positions) out["add_positions"] = false;
  if (attention_position != "none") out["attention_position"] = attention_position;
  return out;
}

json conv_fields(const json& in, ConvAttentionConfig& c, const std::string& name) {
  Fields f(in, name);
  f.read("embed_dim", c.embed_dim);
  f.read("hidden_dim", c.hidden_dim);
  f.read("conv_channels", c.conv_channels);
  f.read("kernel1", c.kernel1);
  f.read("kernel2", c.kernel2);
  f.read("kernel3", c.kernel3);
  f.check_unknown();
  c.copy = name == "conv-copy";
  return {{"model", name},          {"embed_dim", c.embed_dim}, {"hidden_dim", c.hidden_dim},
          {"conv_channels", c.conv_channels}, {"kernel1", c.kernel1}, {"kernel2", c.kernel2},
          {"kernel3", c.kernel3}};
}

json copynet_fields(const json& in, CopyNetConfig& c) {
  Fields f(in, "copynet");
  f.read("embed_dim", c.embed_dim);
  f.read("encoder_dim", c.encoder_dim);
  f.read("decoder_dim", c.decoder_dim);
  f.read("attention_dim", c.attention_dim);
  f.read("copy", c.copy);
  f.read("selective_read", c.selective_read);
  f.check_unknown();
  if (in.contains("selective_read") && c.selective_read && !c.copy)
    throw ValueError("model config of 'copynet': field 'selective_read' needs copy = true (it reads the copy scores)");
  return {{"model", "copynet"},           {"embed_dim", c.embed_dim},         {"encoder_dim", c.encoder_dim},
          {"decoder_dim", c.decoder_dim}, {"attention_dim", c.attention_dim}, {"copy", c.copy},
          {"selective_read", c.copy && c.selective_read}};
}

std::string name_of(const json& config) {
  if (!config.is_object() || !config.contains("model") || !config.at("model").is_string())
    throw ValueError("model config: expected {\"model\": <name>, ...}, got " + config.dump());
  const std::string name = config.at("model").get<std::string>();
  const auto& names = model_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    if (!find_trainable_model(name)) throw ValueError("model config: unknown model '" + name + "' (models: " + model_list() + ")");
    throw ValueError("model config: '" + name + "' is not a sequence model built by make_model (those are: " +
                     [&] {
                       std::string list;
                       for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
                       return list;
                     }() + ")");
  }
  return name;
}

}  // namespace

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names = {"seq2seq", "bahdanau",  "luong", "luong-local", "transformer",
                                                   "monotonic", "conv", "conv-copy", "copynet"};
  return names;
}

const std::vector<TrainableModel>& trainable_models() {
  static const std::vector<TrainableModel> models = [] {
    const std::vector<std::string> sequence_tasks = {"copy", "reverse", "sort", "dates", "FILE.tsv"};
    std::vector<TrainableModel> m;
    for (const std::string& name : model_names()) m.push_back({name, ModelFamily::Sequence, sequence_tasks});
    m.push_back({"multi-source", ModelFamily::MultiSource, {"FILE.tsv"}});  // 'english ||| german<TAB>french' lines
    m.push_back({"grid", ModelFamily::Grid, {"grid"}});
    m.push_back({"show-attend-tell", ModelFamily::Scenes, {"shapes"}});
    m.push_back({"las", ModelFamily::Speech, {"speech"}});
    for (const char* name : {"han", "flat-attention", "bag-of-words"})
      m.push_back({name, ModelFamily::Documents, {"FILE.jsonl"}});
    for (const std::string& name : language_model_names()) m.push_back({name, ModelFamily::LanguageModel, {"FILE.txt"}});
    return m;
  }();
  return models;
}

const TrainableModel* find_trainable_model(const std::string& name) {
  for (const TrainableModel& m : trainable_models())
    if (m.name == name) return &m;
  return nullptr;
}

const std::vector<std::string>& task_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> tasks;  // in the order the models first name them
    for (const TrainableModel& m : trainable_models())
      for (const std::string& t : m.tasks)
        if (std::find(tasks.begin(), tasks.end(), t) == tasks.end()) tasks.push_back(t);
    // the named tasks first, then the files
    std::stable_partition(tasks.begin(), tasks.end(), [](const std::string& t) { return t.rfind("FILE.", 0) != 0; });
    return tasks;
  }();
  return names;
}

std::string task_kind(const std::string& task) {
  for (const std::string& ext : {std::string(".tsv"), std::string(".jsonl"), std::string(".txt")})
    if (task.size() > ext.size() && task.compare(task.size() - ext.size(), ext.size(), ext) == 0) return "FILE" + ext;
  return task;
}

std::string model_list() {
  std::string list;
  for (const TrainableModel& m : trainable_models()) list += (list.empty() ? "" : ", ") + m.name;
  return list;
}

std::string task_list() {
  std::string list;
  for (const std::string& t : task_names()) list += (list.empty() ? "" : ", ") + t;
  return list;
}

std::string models_for_task(const std::string& task) {
  std::vector<std::string> names;
  for (const TrainableModel& m : trainable_models())
    if (std::find(m.tasks.begin(), m.tasks.end(), task_kind(task)) != m.tasks.end()) names.push_back(m.name);
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return list;
}

nlohmann::json default_model_config(const std::string& name) {
  const json config = {{"model", name}};
  name_of(config);
  if (name == "seq2seq") {
    PlainSeq2SeqConfig c;
    return plain_fields(config, c);
  }
  if (name == "bahdanau") {
    BahdanauConfig c;
    return bahdanau_fields(config, c);
  }
  if (name == "transformer") {
    TransformerConfig c;
    return transformer_fields(config, c);
  }
  if (name == "monotonic") {
    MonotonicConfig c;
    return monotonic_fields(config, c);
  }
  if (name == "conv" || name == "conv-copy") {
    ConvAttentionConfig c;
    return conv_fields(config, c, name);
  }
  if (name == "copynet") {
    CopyNetConfig c;
    return copynet_fields(config, c);
  }
  LuongConfig c;
  if (name == "luong-local") c.attention = LuongAttention::LocalP;
  return luong_fields(config, c, name);
}

std::unique_ptr<Seq2Seq> make_model(const nlohmann::json& config, std::size_t src_vocab, std::size_t tgt_vocab) {
  const std::string name = name_of(config);
  if (name == "seq2seq") {
    PlainSeq2SeqConfig c;
    plain_fields(config, c);
    c.src_vocab = src_vocab, c.tgt_vocab = tgt_vocab;
    return std::make_unique<PlainSeq2Seq>(c);
  }
  if (name == "bahdanau") {
    BahdanauConfig c;
    bahdanau_fields(config, c);
    c.src_vocab = src_vocab, c.tgt_vocab = tgt_vocab;
    return std::make_unique<BahdanauSeq2Seq>(c);
  }
  if (name == "transformer") {
    TransformerConfig c;
    transformer_fields(config, c);
    c.src_vocab = src_vocab, c.tgt_vocab = tgt_vocab;
    return std::make_unique<TransformerSeq2Seq>(c);
  }
  if (name == "monotonic") {
    MonotonicConfig c;
    monotonic_fields(config, c);
    c.src_vocab = src_vocab, c.tgt_vocab = tgt_vocab;
    return std::make_unique<MonotonicSeq2Seq>(c);
  }
  if (name == "conv" || name == "conv-copy") {
    ConvAttentionConfig c;
    conv_fields(config, c, name);
    c.src_vocab = src_vocab, c.tgt_vocab = tgt_vocab;
    return std::make_unique<ConvAttentionSeq2Seq>(c);
  }
  if (name == "copynet") {
    CopyNetConfig c;
    copynet_fields(config, c);
    c.src_vocab = src_vocab, c.tgt_vocab = tgt_vocab;
    return std::make_unique<CopyNetSeq2Seq>(c);
  }
  LuongConfig c;
  if (name == "luong-local") c.attention = LuongAttention::LocalP;
  luong_fields(config, c, name);
  c.src_vocab = src_vocab, c.tgt_vocab = tgt_vocab;
  return std::make_unique<LuongSeq2Seq>(c);
}

const std::vector<std::string>& language_model_names() {
  static const std::vector<std::string> names = {"pointer-sentinel", "transformer-lm"};
  return names;
}

bool is_language_model(const std::string& name) {
  const auto& n = language_model_names();
  return std::find(n.begin(), n.end(), name) != n.end();
}

std::string language_model_unit(const std::string& name) {
  (void)language_model_name({{"model", name}});
  return name == "transformer-lm" ? "characters" : "words";
}

nlohmann::json default_language_model_config(const std::string& name) {
  const json config = {{"model", name}};
  if (language_model_name(config) == "pointer-sentinel") {
    PointerSentinelConfig c;
    c.window = 64;  // chapter 20's: the length of its chunks
    return pointer_sentinel_fields(config, c);
  }
  TransformerConfig c = chapter15_lm_config();
  return transformer_fields(config, c, name);
}

std::unique_ptr<LanguageModel> make_language_model(const nlohmann::json& config, std::size_t vocab) {
  const std::string name = language_model_name(config);
  if (name == "pointer-sentinel") {
    PointerSentinelConfig c;
    c.window = 64;
    pointer_sentinel_fields(config, c);
    c.vocab = vocab;
    return std::make_unique<PointerSentinelLanguageModel>(c);
  }
  TransformerConfig c = chapter15_lm_config();
  transformer_fields(config, c, name);
  c.tgt_vocab = vocab;
  return std::make_unique<TransformerLanguageModel>(c);
}

}  // namespace attn::models
