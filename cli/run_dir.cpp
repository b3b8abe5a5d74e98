#include "run_dir.hpp"

#include "language_model.hpp"

#include "output.hpp"

#include "bpe.hpp"
#include "documents.hpp"
#include "multi_source.hpp"
#include "scenes.hpp"
#include "speech.hpp"
#include "grid.hpp"
#include "../io/json_file.hpp"
#include "../models/extended_source.hpp"
#include "parse.hpp"
#include "run_config.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attn::cli {

namespace fs = std::filesystem;

namespace {

// "[json.exception.parse_error.101] parse error at line 1, column 5: ..." -> "parse error at line 1, ...".
std::string json_message(const std::exception& e) {
  std::string m = e.what();
  if (m.rfind("[json.exception.", 0) == 0 && m.find("] ") != std::string::npos) m = m.substr(m.find("] ") + 2);
  return m;
}

std::string errno_text() { return std::strerror(errno); }

// FNV-1a, 64 bits (data/text_file.hpp): a cheap fingerprint that tells a changed or damaged file.
struct Fingerprint {
  std::uint64_t bytes = 0, hash = data::fnv1a64(nullptr, 0);
};
// `kept`, when given, receives the bytes hashed (one read gives both: cli/run_dir.hpp read_checksummed).
Fingerprint fingerprint(const std::string& path, const std::string& shown, std::string* kept = nullptr) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw IOError(shown + ": is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError(shown + ": cannot open (missing or unreadable)");
  Fingerprint f;
  std::vector<char> buffer(1 << 16);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const std::size_t n = static_cast<std::size_t>(in.gcount());
    f.hash = data::fnv1a64(buffer.data(), n, f.hash);
    f.bytes += n;
    if (kept) kept->append(buffer.data(), n);
  }
  if (in.bad()) throw IOError(shown + ": reading failed");
  return f;
}

// Writes a new file and forces it to disk (a checkpoint must survive a power cut, not only a kill).
void write_file(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw IOError(path + ": cannot create (" + errno_text() + ")");
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = errno_text();
      ::close(fd);
      throw IOError(path + ": writing failed (" + why + ")");
    }
    done += static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  if (::close(fd) != 0 || !synced) throw IOError(path + ": writing failed (" + errno_text() + ")");
}

void sync_path(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), (directory ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) throw IOError(path + ": cannot open to sync (" + errno_text() + ")");
  const bool ok = ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) throw IOError(path + ": cannot sync to disk (" + errno_text() + ")");
}

std::string vocab_json(const data::Vocab& src, const data::Vocab& tgt) {
  return nlohmann::json{{"src", nlohmann::json::parse(src.to_json())}, {"tgt", nlohmann::json::parse(tgt.to_json())}}
             .dump(2) + "\n";
}

// Left by a writer killed mid-write: a checkpoint being committed, or one of the run's plots
// (write_own_file writes ".<file>.tmp.<pid>.<n>" next to it, then renames it over the file).
bool is_temporary(const std::string& name) {
  if (name.rfind("checkpoint.tmp.", 0) == 0) return true;
  for (const char* plot : {"loss.svg", "lr.svg", "accuracy_by_length.svg", "bleu_by_length.svg"})
    if (name.rfind(std::string(".") + plot + ".tmp.", 0) == 0) return true;
  return false;
}

// A lower bound of the bytes the model's weights take (float64 while they are built), and the
// setting responsible: a 2-D weight has the largest size on one side and at least the smallest on the other.
std::pair<double, std::string> weight_bytes(const nlohmann::json& model, std::size_t src_vocab, std::size_t tgt_vocab) {
  auto is_dim = [](const std::string& k) {
    return k == "d_model" || k == "dim_feedforward" || k == "max_len" ||
           (k.size() > 4 && k.compare(k.size() - 4, 4, "_dim") == 0);
  };
  std::vector<std::pair<double, std::string>> dims = {{double(src_vocab), "the source vocabulary"},
                                                      {double(tgt_vocab), "the target vocabulary"}};
  double layers = 0, d_model = 0;
  for (const auto& item : model.items()) {
    if (!item.value().is_number_integer() || item.value().get<std::int64_t>() <= 0) continue;
    const double v = static_cast<double>(item.value().get<std::uint64_t>());
    if (is_dim(item.key())) dims.push_back({v, item.key() + "=" + std::to_string(item.value().get<std::uint64_t>())});
    if (item.key() == "d_model") d_model = v;
    if (item.key() == "num_encoder_layers" || item.key() == "num_decoder_layers") layers += v;
  }
  std::sort(dims.begin(), dims.end());
  std::pair<double, std::string> bound = {dims.back().first * dims.front().first * 8, dims.back().second};
  const double per_layer = 4 * d_model * d_model * 8;  // a layer's attention projections alone
  if (layers * per_layer > bound.first) {
    // A layer's cost grows with d_model squared: blame it, unless the layers outnumber its width.
    const char* key = model.value("num_encoder_layers", 0) >= model.value("num_decoder_layers", 0) ? "num_encoder_layers"
                                                                                                     : "num_decoder_layers";
    if (d_model >= double(model.value(key, 0))) key = "d_model";
    bound = {layers * per_layer, std::string(key) + "=" + std::to_string(model.value(key, 0))};
  }
  return bound;
}

std::string memory_message(const std::pair<double, std::string>& need) {
  char gb[64];
  std::snprintf(gb, sizeof gb, "%.3g GB", need.first / 1e9);
  return need.second + " needs at least " + gb + " of memory for the model's weights, more than this machine has";
}

// When the model could not be allocated although the estimate fits (a size the estimate does not know,
// e.g. coverage_embedding=1e12): the largest number among the settings is the one to blame.
// The key of the largest number among a model's settings ("" if none is above 0): the one a message blames.
std::string largest_setting(const nlohmann::json& model) {
  std::string key;
  double largest = 0;
  if (model.is_object())
    for (const auto& item : model.items())
      if (item.value().is_number() && item.value().get<double>() > largest) {
        largest = item.value().get<double>();
        key = item.key();
      }
  return key;
}

std::string allocation_message(const nlohmann::json& model, const std::pair<double, std::string>& need) {
  const std::string key = largest_setting(model);
  if (key.empty() || model.at(key).get<double>() < 1e6) return memory_message(need);
  return key + "=" + model.at(key).dump() + ": the model's weights need more memory than this machine has; choose a "
         "smaller " + key + " (--set " + key + "=N)";
}

// A model far beyond what a CPU trains in a course (a conv kernel of 100,000 words gives 102 million
// parameters) is refused, naming the setting to shrink, rather than trained for days in silence.
constexpr std::size_t kMaxParameters = 50'000'000;
constexpr std::uint64_t kMaxSetting = 65'536;  // any one size (a dimension, a kernel, a number of layers)


void check_parameter_count(nn::Module& built, const nlohmann::json& model, const std::string& prefix) {
  std::size_t count = 0;
  for (const Tensor& p : built.parameters()) count += p.numel();
  if (count <= kMaxParameters) return;
  const std::string key = largest_setting(model);
  throw ValueError(prefix + "the model has " + with_commas(count) + " parameters, more than the " +
                   with_commas(kMaxParameters) + " the command line trains (a course-size model on a CPU)" +
                   (key.empty() ? "" : "; its largest setting is " + key + "=" + model.at(key).dump() +
                                           ": choose a smaller " + key + " (--set " + key + "=N)"));
}

}  // namespace

std::string with_commas(std::size_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string file_fnv1a64(const std::string& path, const std::string& shown) {
  return data::hex64(fingerprint(path, shown.empty() ? path : shown).hash);
}

ChecksummedFile read_checksummed(const std::string& path, const std::string& shown) {
  ChecksummedFile file;
  file.checksum = data::hex64(fingerprint(path, shown.empty() ? path : shown, &file.bytes).hash);
  return file;
}

// Bounded in size and depth (io::read_json_file): run folders are shared between learners.
nlohmann::json read_json(const std::string& path, const std::string& shown_name) {
  try {
    return io::read_json_file(path);
  } catch (const IOError& e) {  // the message starts with the path read; show the name the user knows
    std::string message = e.what();
    if (!shown_name.empty() && message.rfind(path, 0) == 0) message = shown_name + message.substr(path.size());
    throw IOError(message);
  }
}

nn::Module& module_of(models::Seq2Seq& m) { return m; }
nn::Module& module_of(models::LanguageModel& m) { return m.module(); }

// make() built with every check of build_model around it.
template <class Make>
auto build_checked(const nlohmann::json& model, std::size_t src_vocab, std::size_t tgt_vocab, const std::string& where,
                   Make make) -> decltype(make()) {
  const std::string prefix = where.empty() ? "" : where + ": ";
  const auto need = weight_bytes(model.is_object() ? model : nlohmann::json::object(), src_vocab, tgt_vocab);
  const double memory = double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGE_SIZE));
  if (memory > 0 && need.first > memory) throw ValueError(prefix + memory_message(need));
  // A size setting far past the course's (a conv kernel of 100,000 words, a coverage embedding of 2e7) is refused
  // before the model is built: building it alone could take minutes and most of the memory.
  if (model.is_object())
    for (const auto& item : model.items()) {
      if (item.key() == "sep_id" || !item.value().is_number_unsigned() ||
          item.value().get<std::uint64_t>() <= kMaxSetting)
        continue;  // sep_id is a word's id, not a size
      const double bytes = double(item.value().get<std::uint64_t>()) * double(std::max(src_vocab, tgt_vocab)) * 4;
      if (memory > 0 && bytes > memory) throw ValueError(prefix + allocation_message(model, need));
      throw ValueError(prefix + item.key() + "=" + item.value().dump() + ": at most " + with_commas(kMaxSetting) +
                       " for a size of a model the command line trains (a course-size model on a CPU; larger ones "
                       "take hours to build and days to train): choose a smaller " + item.key() + " (--set " +
                       item.key() + "=N)");
    }
  try {
    auto built = make();
    check_parameter_count(module_of(*built), model, "");  // the catch below prefixes `where`
    return built;
  } catch (const std::bad_alloc&) {
    throw ValueError(prefix + allocation_message(model, need));
  } catch (const std::length_error&) {
    throw ValueError(prefix + allocation_message(model, need));
  } catch (const nlohmann::json::exception& e) {
    throw ValueError(prefix + "model config: " + json_message(e));
  } catch (const Error& e) {
    if (where.empty()) throw;
    std::string message = e.what();
    // The model names no key when a size is 0 ("kernel sizes must all be >= 1"): name the keys that are.
    if (message.find(">= 1") != std::string::npos && model.is_object()) {
      std::string zero;
      for (const auto& item : model.items())
        if (item.value().is_number_integer() && item.value().get<std::int64_t>() == 0)
          zero += (zero.empty() ? "" : ", ") + item.key();
      if (!zero.empty()) message += " (0 in the keys: " + zero + ")";
    }
    throw ValueError(prefix + message);
  }
}

std::unique_ptr<models::Seq2Seq> build_model(const nlohmann::json& model, std::size_t src_vocab, std::size_t tgt_vocab,
                                             const std::string& where) {
  return build_checked(model, src_vocab, tgt_vocab, where, [&]() -> std::unique_ptr<models::Seq2Seq> {
    if (model.is_object() && model.value("model", "") == "multi-source")
      return make_multi_source_model(model, src_vocab, tgt_vocab);  // chapter 17
    return models::make_model(model, src_vocab, tgt_vocab);
  });
}

std::unique_ptr<models::LanguageModel> build_language_model(const nlohmann::json& model, std::size_t vocab,
                                                            const std::string& where) {
  return build_checked(model, vocab, vocab, where, [&] { return models::make_language_model(model, vocab); });
}

// ---- reading a checkpoint ----

Checkpoint::Checkpoint(const std::string& dir) {
  if (!fs::is_directory(dir)) throw IOError(dir + ": no such checkpoint directory");
  shown_ = dir + "/checkpoint";
  if (!fs::exists(shown_)) {
    if (!fs::exists(dir + "/manifest.json")) {
      // attn demo writes its pictures to out/demo and its run to out/demo/run: point to it
      const std::string inner = (fs::path(dir) / "run").string();
      if (fs::exists(fs::path(inner) / "checkpoint" / "manifest.json"))
        throw IOError(dir + ": holds no checkpoint, but " + inner + " does (attn demo writes its run there): give " +
                      "--checkpoint " + inner);
      throw IOError(dir + ": holds no checkpoint (expected " + shown_ + "/, which attn train --out writes)");
    }
    shown_ = dir;  // the unit folder itself
  }
  fd_ = ::open(shown_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) throw IOError(shown_ + ": cannot open (" + errno_text() + ")");
  if (!has("manifest.json"))
    throw IOError(name("manifest.json") + ": missing (an incomplete checkpoint, or one not written by attn)");
  manifest_ = read_json("manifest.json");
  const Fields top(manifest_, name("manifest.json"));
  top.one_of("format", {"attn-checkpoint-manifest"});
  const nlohmann::json& files = top.object("files");
  for (const char* required : {"config.json", "vocab.json", "model.npz"})
    if (!files.contains(required)) top.fail(std::string("files.") + required, "listed (every checkpoint has one)");
  for (const auto& item : files.items()) {
    const std::string& file = item.key();
    if (file.empty() || file.find('/') != std::string::npos || file[0] == '.')
      throw IOError(name("manifest.json") + ": '" + file + "' is not a file name of the checkpoint");
    const Fields entry(item.value(), name("manifest.json") + ": files." + file);
    const std::uint64_t bytes = entry.count("bytes", 0, UINT64_MAX);
    const std::string hash = entry.text("fnv1a64");
    if (!has(file)) throw IOError(name(file) + ": missing (manifest.json lists it)");
    const Fingerprint f = fingerprint(path(file), name(file));
    if (f.bytes != bytes || data::hex64(f.hash) != hash)
      throw IOError(name(file) + ": does not match manifest.json (" + std::to_string(f.bytes) + " bytes, hash " +
                    data::hex64(f.hash) + "; expected " + std::to_string(bytes) + " bytes, hash " + hash +
                    "): changed or damaged since the checkpoint was written");
  }
}

Checkpoint::~Checkpoint() {
  if (fd_ >= 0) ::close(fd_);
}

std::string Checkpoint::path(const std::string& file) const {
  return "/proc/self/fd/" + std::to_string(fd_) + "/" + file;
}

std::string Checkpoint::name(const std::string& file) const { return shown_ + "/" + file; }

bool Checkpoint::lists(const std::string& file) const { return manifest_.at("files").contains(file); }

bool Checkpoint::has(const std::string& file) const {
  struct stat st;
  return ::fstatat(fd_, file.c_str(), &st, 0) == 0 && S_ISREG(st.st_mode);
}

nlohmann::json Checkpoint::read_json(const std::string& file) const {
  return cli::read_json(path(file), name(file));
}

namespace {

// io::load's advice is for C++ code ("write io::load(module, path, /*strict=*/false)"); a user of the
// command line changed a setting of config.json's model instead, and is told so.
// `model` (config.json's model) names the setting that adds or removes a weight: the weight 'lexicon' exists
// exactly when lexicon_bias is on, 'coverage_weight' when coverage is, and so on (a weight's name begins with
// the first word of its setting's key). The user sees the key and its value now, not a weight's name alone.
std::string without_code_advice(std::string message, const nlohmann::json& model = nlohmann::json()) {
  const auto advice = message.find("to load the keys both have");
  if (advice == std::string::npos) return message;
  message.erase(advice);
  while (!message.empty() && (message.back() == ' ' || message.back() == '\n')) message.pop_back();
  // "load: 'F' does not match the BahdanauSeq2Seq module, nothing was loaded:" names a C++ class: say it as a user would.
  const auto quote = message.find("' does not match the ");
  const auto loaded = message.find(" module, nothing was loaded:");
  if (message.rfind("load: '", 0) == 0 && quote != std::string::npos && loaded != std::string::npos && quote < loaded)
    message = message.substr(7, quote - 7) + ": these weights are not those of the model that config.json describes, "
              "nothing was loaded:" + message.substr(loaded + std::string(" module, nothing was loaded:").size());
  std::string settings;
  if (model.is_object())
    for (const auto& item : model.items()) {
      const std::string word = item.key().substr(0, item.key().find('_'));
      if (item.key() == "model" || word.size() < 4 || !(item.value().is_boolean() || item.value().is_number())) continue;
      for (const char* list : {"missing keys: ", "unexpected keys: "}) {
        const auto at = message.find(list);
        if (at == std::string::npos) continue;
        const std::string keys = message.substr(at, message.find('\n', at) - at);
        if (keys.find(": " + word) != std::string::npos || keys.find(", " + word) != std::string::npos ||
            keys.find("." + word) != std::string::npos) {
          settings += (settings.empty() ? "" : ", ") + item.key() + " (now " + item.value().dump() + ")";
          break;
        }
      }
    }
  return message + "\n  config.json's model settings describe other weights than model.npz holds: " +
         (settings.empty() ? std::string("a setting was changed since the run was saved")
                           : "the weights named follow the setting " + settings + ", changed since the run was saved") +
         " (restore config.json, or train a new run with the setting)";
}

}  // namespace

void Checkpoint::rethrow_named(const std::exception& e) const {
  nlohmann::json model;  // the settings behind the weights, if config.json can be read (it was, to get here)
  try {
    const nlohmann::json config = read_json("config.json");
    if (config.is_object() && config.contains("model")) model = config.at("model");
  } catch (const std::exception&) {
  }
  std::string message = without_code_advice(e.what(), model);
  const std::string handle = "/proc/self/fd/" + std::to_string(fd_);
  for (auto at = message.find(handle); at != std::string::npos; at = message.find(handle, at + shown_.size()))
    message.replace(at, handle.size(), shown_);
  if (dynamic_cast<const ValueError*>(&e)) throw ValueError(message);
  throw IOError(message);
}

std::string Run::model_name() const { return config.at("model").value("model", "?"); }

namespace {

// The weights in model.npz must be those of the model that config.json describes.
void load_weights(Run& run, const Checkpoint& unit) {
  try {
    io::load(run.module(), unit.path("model.npz"));
  } catch (const Error& e) {
    std::string detail = without_code_advice(e.what(), run.config.at("model"));  // "load: '...' does not match the ... module, ...:\n  missing keys: ..."
    if (detail.find("does not match") == std::string::npos)
      unit.rethrow_named(IOError(unit.name("model.npz") + ": unreadable (" + detail + ")"));
    const auto colon = detail.find(":\n");
    detail = colon == std::string::npos ? detail : detail.substr(colon + 2);
    if (detail.size() > 300) detail = detail.substr(0, 300) + "...";
    throw IOError(unit.name("model.npz") + ": these weights are not those of the '" + run.model_name() +
                  "' model that config.json describes (a checkpoint of another model, or other sizes): " + detail);
  }
}

Run load_run_once(const std::string& dir) {
  const Checkpoint unit(dir);
  Run run;
  run.config = unit.read_json("config.json");
  const std::string where = unit.name("config.json");
  run.config_file = where;
  read_train_settings(run.config, where);
  const nlohmann::json vocab = unit.read_json("vocab.json");
  const Fields sides(vocab, unit.name("vocab.json"));
  for (const char* side : {"src", "tgt"}) {
    const nlohmann::json& tokens = Fields(sides.object(side), unit.name("vocab.json") + ": " + side).array("tokens");
    for (const auto& t : tokens)
      if (!t.is_string())
        throw IOError(unit.name("vocab.json") + ": " + side + ".tokens must hold strings only, got " + t.dump());
  }
  try {
    run.src_vocab = data::Vocab::from_json(vocab.at("src").dump());
    run.tgt_vocab = data::Vocab::from_json(vocab.at("tgt").dump());
    run.output_vocab = run.tgt_vocab;
  } catch (const std::exception& e) {
    throw IOError(unit.name("vocab.json") + ": not a vocabulary file (expected {\"src\": {\"tokens\": [...]}, \"tgt\": "
                  "...}): " + json_message(e));
  }
  // The subword codes: listed in the manifest (so checked against it) exactly when the task has "bpe".
  const bool bpe = run.config.at("task").contains("bpe");
  if (bpe != unit.lists(kCodesFile))
    throw IOError(bpe ? unit.name(kCodesFile) + ": missing (config.json's task has \"bpe\", and manifest.json does "
                        "not list the codes)"
                      : unit.name(kCodesFile) + ": listed in manifest.json, but config.json's task has no \"bpe\"");
  if (bpe) {
    run.bpe = read_codes(unit.path(kCodesFile), unit.name(kCodesFile));
    run.has_bpe = true;
    const std::uint64_t merges = Fields(run.config.at("task"), where + ": task").count("bpe", 1, kMaxMerges);
    if (run.bpe.merges().size() > merges)
      throw IOError(unit.name(kCodesFile) + ": holds " + std::to_string(run.bpe.merges().size()) +
                    " merges, more than the " + std::to_string(merges) + " of config.json's task.bpe");
  }
  if (run.model_name() == "grid") {
    try {
      run.captioner = make_grid_model(run.config.at("model"), run.tgt_vocab.size(), run.config.at("task"), "task");
    } catch (const std::bad_alloc&) {
      throw ValueError(where + ": the grid captioner's sizes need more memory than this machine has");
    } catch (const Error& e) {
      throw ValueError(where + ": " + e.what());
    }
  } else if (run.model_name() == "show-attend-tell") {
    if (run.tgt_vocab.to_json() != data::scene_vocab().to_json())
      throw IOError(unit.name("vocab.json") + ": \"tgt\" is not the words of the shapes task (data::scene_vocab)");
    try {
      run.image_captioner = make_scene_model(run.config.at("model"), run.config.at("task"), where + ": model");
    } catch (const std::bad_alloc&) {
      throw ValueError(where + ": the model's sizes need more memory than this machine has");
    }
  } else if (run.model_name() == "las") {
    if (run.tgt_vocab.to_json() != data::speech_vocab().to_json())
      throw IOError(unit.name("vocab.json") + ": \"tgt\" is not the characters of the speech task (data::speech_vocab)");
    try {
      run.speller = make_speech_model(run.config.at("model"), where + ": model");
    } catch (const std::bad_alloc&) {
      throw ValueError(where + ": the model's sizes need more memory than this machine has");
    }
  } else if (models::is_language_model(run.model_name())) {
    if (run.tgt_vocab.size() != data::Vocab().size())
      throw IOError(unit.name("vocab.json") + ": a language model's \"tgt\" holds the special tokens only (its tokens "
                    "are \"src\")");
    check_text_unit(run.config, where);
    run.language_model = build_language_model(run.config.at("model"), run.src_vocab.size(), where);
  } else if (is_document_model(run.model_name())) {
    try {
      run.classes = document_classes(run.config.at("task"), where + ": task");
      run.classifier = make_document_model(run.config.at("model"), run.src_vocab.size(), run.classes.size(),
                                           where + ": model");
    } catch (const std::bad_alloc&) {
      throw ValueError(where + ": the model's sizes need more memory than this machine has");
    }
  } else {
    run.model = build_model(run.config.at("model"), run.src_vocab.size(), run.tgt_vocab.size(), where);
    if (run.model_name() == "multi-source") {  // train recorded the id of <sep>: it must still be that
      const nlohmann::json& m = run.config.at("model");
      if (!m.contains("sep_id") || !run.src_vocab.contains(data::kSeparator) ||
          m.at("sep_id") != run.src_vocab.id(data::kSeparator))
        throw IOError(where + ": model.sep_id must be the id of " + data::kSeparator + " in vocab.json's \"src\"");
      if (Fields(m, where + ": model").count_or("sources", 2, 2, 16) !=
          Fields(run.config.at("task"), where + ": task").count_or("sources", 1, 1, 16))
        throw IOError(where + ": model.sources and task.sources differ");
    }
    // a copying model (conv-copy, copynet) copies a source token as its target id: it needs both vocabularies
    if (auto* copying = dynamic_cast<models::CopyingModel*>(run.model.get())) copying->set_copy_map(run.src_vocab, run.tgt_vocab);
  }
  load_weights(run, unit);
  run.module().eval();
  return run;
}

ino_t inode(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

}  // namespace

Run load_run(const std::string& dir) {
  for (int attempt = 0;; ++attempt) {
    const ino_t before = inode(dir + "/checkpoint");
    try {
      return load_run_once(dir);
    } catch (const Error&) {
      // A trainer may have committed a new checkpoint (and deleted this one) while it was read: read again.
      if (attempt < 5 && before != 0 && inode(dir + "/checkpoint") != before) continue;
      throw;
    }
  }
}

// ---- writing a run folder ----

bool holds_run(const std::string& dir) {
  return fs::exists(dir + "/checkpoint") || fs::exists(dir + "/config.json");  // the second: attn's older layout
}

void check_out_folder(const std::string& dir, bool overwrite) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return;
  if (!fs::is_directory(dir, ec)) throw ValueError("--out " + dir + ": is a file, not a folder");
  if (overwrite) return;
  if (holds_run(dir))
    throw ValueError("--out " + dir + ": holds another run; continue it with --resume " + dir +
                     ", replace it with --overwrite, or choose another --out");
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name != "lock" && !is_temporary(name))
      throw ValueError("--out " + dir + ": not empty (it holds '" + name +
                       "'); choose a new or empty folder, or write there anyway with --overwrite");
  }
}

RunLock::RunLock(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw IOError(dir + ": cannot create the run folder (" + ec.message() + ")");
  const std::string path = dir + "/lock";
  // Never through a link: a lock linked elsewhere would have the pid written into another file.
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd_ < 0 && errno == ELOOP)
    throw IOError(path + ": the run's lock file is a symbolic link; attn writes no file through a link (remove " +
                  path + ", which holds no data, and run again)");
  if (fd_ < 0) throw IOError(path + ": cannot create the run's lock file (" + errno_text() + ")");
  struct stat st;
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw IOError(path + ": the run's lock file is not a regular file (remove it and run again)");
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {0};
    const ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
    std::string pid = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    ::close(fd_);
    fd_ = -1;
    throw IOError(dir + ": in use by another attn process (" + (pid.empty() ? "pid unknown" : "pid " + pid) +
                  ", which holds " + path + "); wait for it to finish, or stop it");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    // The lock holds without the pid in it: other processes then say "pid unknown".
  }
  for (const auto& entry : fs::directory_iterator(dir, ec))  // left by a killed writer
    if (is_temporary(entry.path().filename().string())) fs::remove_all(entry.path(), ec);
}

RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

void commit_checkpoint(const std::string& dir, nlohmann::json config, const data::Vocab& src_vocab,
                       const data::Vocab& tgt_vocab, const std::function<void(const std::string&)>& write_weights,
                       const std::map<std::string, std::string>& texts) {
  static std::atomic<unsigned> counter{0};
  const std::string tmp =
      dir + "/checkpoint.tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  std::error_code ec;
  if (!fs::create_directory(tmp, ec)) throw IOError(tmp + ": cannot create (" + (ec ? ec.message() : "it exists") + ")");
  try {
    config["format"] = "attn-checkpoint";
    write_file(tmp + "/config.json", config.dump(2) + "\n");
    write_file(tmp + "/vocab.json", vocab_json(src_vocab, tgt_vocab));
    for (const auto& [name, text] : texts) write_file(tmp + "/" + name, text);
    write_weights(tmp);
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(tmp)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    nlohmann::json files = nlohmann::json::object();
    for (const auto& name : names) {
      sync_path(tmp + "/" + name, false);
      const Fingerprint f = fingerprint(tmp + "/" + name, tmp + "/" + name);
      files[name] = {{"bytes", f.bytes}, {"fnv1a64", data::hex64(f.hash)}};
    }
    write_file(tmp + "/manifest.json",
               nlohmann::json{{"format", "attn-checkpoint-manifest"}, {"files", files}}.dump(2) + "\n");
    sync_path(tmp, true);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  const std::string unit = dir + "/checkpoint";
  if (fs::exists(unit, ec)) {
    if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, unit.c_str(), RENAME_EXCHANGE) != 0) {
      const std::string why = errno_text();
      fs::remove_all(tmp, ec);
      throw IOError(unit + ": cannot replace the checkpoint (" + why + "); the previous one is kept");
    }
  } else if (::rename(tmp.c_str(), unit.c_str()) != 0) {
    const std::string why = errno_text();
    fs::remove_all(tmp, ec);
    throw IOError(unit + ": cannot write the checkpoint (" + why + ")");
  }
  sync_path(dir, true);
  fs::remove_all(tmp, ec);  // the previous checkpoint, swapped out
  remember_run_corpora(dir, config);  // its corpus is now guarded wherever a command is started (cli/output.hpp)
}

}  // namespace attn::cli
