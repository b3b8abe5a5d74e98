#include "run_dir.hpp"

#include "grid.hpp"
#include "../models/data/json_file.hpp"

#include <filesystem>
#include <fstream>

namespace attn::cli {

namespace fs = std::filesystem;

// Bounded in size and depth: run folders are shared between learners.
nlohmann::json read_json(const std::string& path) { return data::read_json_file(path); }

void write_json(const std::string& path, const nlohmann::json& value) {
  viz::save_text(path, value.dump(2) + "\n");
}

void save_run_description(const std::string& dir, const nlohmann::json& config, const data::Vocab& src_vocab,
                          const data::Vocab& tgt_vocab) {
  fs::create_directories(dir);
  nlohmann::json full = config;
  full["format"] = "attn-checkpoint";
  write_json(dir + "/config.json", full);
  write_json(dir + "/vocab.json", {{"src", nlohmann::json::parse(src_vocab.to_json())},
                                   {"tgt", nlohmann::json::parse(tgt_vocab.to_json())}});
}

std::string Run::model_name() const { return config.at("model").value("model", "?"); }

namespace {

// The weights in model.npz must be those of the model that config.json describes.
void load_weights(Run& run, const std::string& dir) {
  const std::string path = dir + "/model.npz";
  if (!fs::exists(path)) throw IOError(path + ": missing (the model's weights; was the training interrupted?)");
  try {
    nn::load(run.module(), path);
  } catch (const IOError& e) {
    std::string detail = e.what();  // "load: '...' does not match the ... module, nothing was loaded:\n  missing keys: ..."
    if (detail.find("does not match") == std::string::npos) throw IOError(path + ": unreadable (" + detail + ")");
    const auto colon = detail.find(":\n");
    detail = colon == std::string::npos ? detail : detail.substr(colon + 2);
    if (detail.size() > 300) detail = detail.substr(0, 300) + "...";
    throw IOError(path + ": these weights are not those of the '" + run.model_name() +
                  "' model that config.json describes (a checkpoint of another model, or other sizes): " + detail);
  }
}

}  // namespace

Run load_run(const std::string& dir) {
  if (!fs::is_directory(dir)) throw IOError(dir + ": no such checkpoint directory");
  Run run;
  run.config = read_json(dir + "/config.json");
  if (!run.config.is_object() || run.config.value("format", "") != "attn-checkpoint" ||
      !run.config.contains("model") || !run.config.contains("task"))
    throw IOError(dir + "/config.json: not an attn checkpoint description (expected {\"format\": \"attn-checkpoint\", "
                        "\"model\": {...}, \"task\": {...}, ...})");
  const nlohmann::json vocab = read_json(dir + "/vocab.json");
  try {
    run.src_vocab = data::Vocab::from_json(vocab.at("src").dump());
    run.tgt_vocab = data::Vocab::from_json(vocab.at("tgt").dump());
  } catch (const std::exception& e) {
    throw IOError(dir + "/vocab.json: not a vocabulary file (expected {\"src\": {\"tokens\": [...]}, \"tgt\": ...}): " +
                  e.what());
  }
  try {
    if (run.config.at("model").value("model", "") == "grid")
      run.captioner = make_grid_model(run.config.at("model"), run.tgt_vocab.size(), run.config.at("task"));
    else
      run.model = models::make_model(run.config.at("model"), run.src_vocab.size(), run.tgt_vocab.size());
  } catch (const std::exception& e) {
    throw IOError(dir + "/config.json: " + e.what());
  }
  load_weights(run, dir);
  run.module().eval();
  return run;
}

}  // namespace attn::cli
