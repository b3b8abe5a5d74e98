#include "run_dir.hpp"

#include <filesystem>
#include <fstream>

namespace attn::cli {

namespace fs = std::filesystem;

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw IOError(path + ": cannot open (missing or unreadable)");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw IOError(path + ": not valid JSON (" + e.what() + ")");
  }
}

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

void save_model(const std::string& dir, const models::Seq2Seq& model) { nn::save(model, dir + "/model.npz"); }

Run load_run(const std::string& dir) {
  if (!fs::is_directory(dir)) throw IOError(dir + ": no such checkpoint directory");
  Run run;
  run.config = read_json(dir + "/config.json");
  if (run.config.value("format", "") != "attn-checkpoint" || !run.config.contains("model"))
    throw IOError(dir + "/config.json: not an attn checkpoint description (no \"format\": \"attn-checkpoint\")");
  const nlohmann::json vocab = read_json(dir + "/vocab.json");
  try {
    run.src_vocab = data::Vocab::from_json(vocab.at("src").dump());
    run.tgt_vocab = data::Vocab::from_json(vocab.at("tgt").dump());
    run.model = models::make_model(run.config.at("model"), run.src_vocab.size(), run.tgt_vocab.size());
  } catch (const nlohmann::json::exception& e) {
    throw IOError(dir + ": vocab.json or config.json is incomplete (" + e.what() + ")");
  } catch (const ValueError& e) {
    throw IOError(dir + "/config.json: " + e.what());
  }
  nn::load(*run.model, dir + "/model.npz");  // IOError names missing/unexpected keys and shapes
  run.model->eval();
  return run;
}

}  // namespace attn::cli
