// Peak memory of loading a large checkpoint (issue 28): a Transformer with a
// large vocabulary, saved once, then loaded in a fresh process.
//
//   ./build/tools/checkpoint_memory save /tmp/big.npz   # ~250 MB of float32 weights
//   ./build/tools/checkpoint_memory load /tmp/big.npz
//
// `load` builds the model, resets the kernel's peak-RSS counter, loads the
// file and prints how far the peak rose above the model's own size.
#include "models/registry.hpp"
#include "io/checkpoint.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

using namespace attn;

namespace {

// A field of /proc/self/status in MB, e.g. "VmRSS:" or "VmHWM:".
double status_mb(const std::string& field) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(field, 0) == 0) return std::stod(line.substr(field.size())) / 1024.0;
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::string(argv[1]) != "save" && std::string(argv[1]) != "load")) {
    std::cerr << "usage: checkpoint_memory save|load FILE.npz\n";
    return 2;
  }
  const nlohmann::json config = {{"model", "transformer"}, {"d_model", 512}, {"nhead", 8},
                                 {"dim_feedforward", 2048}};
  const std::size_t vocab = 40000;
  auto model = models::make_model(config, vocab, vocab);
  model->to(Dtype::Float32);
  std::size_t bytes = 0;
  for (const auto& [name, t] : model->named_parameters()) bytes += t.numel() * 4;
  for (const auto& [name, t] : model->named_buffers()) bytes += t.numel() * 4;
  if (std::string(argv[1]) == "save") {
    io::save(*model, argv[2]);
    std::printf("saved %.1f MB of weights to %s\n", bytes / 1048576.0, argv[2]);
    return 0;
  }
  std::ofstream("/proc/self/clear_refs") << "5";  // resets VmHWM to the current RSS
  const double before = status_mb("VmRSS:");
  const auto start = std::chrono::steady_clock::now();
  io::load(*model, argv[2]);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double peak = status_mb("VmHWM:");
  std::printf("weights %.1f MB; RSS before load %.1f MB; peak during load %.1f MB (+%.1f MB, %.2fx the weights); "
              "load %.2f s\n", bytes / 1048576.0, before, peak, peak - before, (peak - before) / (bytes / 1048576.0), seconds);
  return 0;
}
