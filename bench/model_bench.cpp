// attn's side of bench/run.sh: whole-model workloads, timed one call at a time.
//
//   transformer  (a) training step of models::TransformerSeq2Seq: d_model 128, 4 heads,
//                feed-forward 512, 2 + 2 layers, vocabulary 32, dropout 0.1; batch 32,
//                source and target length 20; forward, cross-entropy, backward, Adam
//   bahdanau     (b) training step of models::BahdanauSeq2Seq: embeddings 128, biLSTM
//                encoder 128 per direction, additive attention 128, LSTM decoder 128
//   decode-transformer, decode-bahdanau
//                (e) models::greedy_decode of the same models, batch 32, exactly 20
//                tokens (no <eos> stops it early); the Transformer without its KV cache, as
//                PyTorch's loop runs
//   decode-transformer-cached
//                the same with the KV cache (attn only: against decode-transformer)
//   lstm         nn::LSTM(128, 128, batch_first) forward + backward over [32, 20, 128]
//   outproj-bahdanau, outproj-transformer
//                only the three matrix products of the model's output layer in one
//                training step, through the backend's gemm (core/backend/blas.hpp): the
//                forward Y = X W^T and the backward dX = dY W, dW = dY^T X, with X
//                [B*T, K] (K = 512 features for Bahdanau's, 128 for the Transformer's)
//                and W [V, K]. The floor under a step at a large vocabulary.
//   A model workload may end in -v<V> and/or -t<T>: vocabulary V instead of 32, source
//   and target length T instead of 20 (transformer-v8000, bahdanau-v1000-t40).
//
//   model_bench <workload> <f32|f64>           warm-up, then the median of 30 calls
//   model_bench --profile <workload> <f32|f64> time 10 calls op by op (attn::profiler)
//   model_bench --serve <workload> <f32|f64>   for bench/run.py, which alternates with
//                PyTorch (bench/torch_models.py speaks the same): reads lines "N",
//                answers N times in us on one line; "mem" answers
//                "<VmHWM kB> <VmRSS kB at start>" (peak memory, and the baseline)
//
// Threads: attn::get_num_threads(), i.e. ATTN_NUM_THREADS or one per core (core/parallel.hpp).
#include "attn.hpp"
#include "core/backend/blas.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <string>

using attn::Index;
using attn::Tensor;

namespace {

constexpr std::size_t kBatch = 32, kDim = 128;
std::size_t kLen = 20, kVocab = 32;  // set once from the workload's name, before any model is built

// Token ids in [4, kVocab): no <pad>, <bos>, <eos> or <unk>.
Index random_tokens(attn::Generator& gen) {
  Tensor u = attn::rand({kBatch, kLen}, attn::Dtype::Float64, gen);
  Index ids = Index::from_shape({kBatch, kLen});
  for (std::size_t i = 0; i < ids.size(); ++i)
    ids.flat(i) = 4 + static_cast<std::int64_t>(u.data<double>().flat(i) * (kVocab - 4));
  return ids;
}

// What every workload is: something to run once per call.
using Work = std::function<void()>;

// A training step of a Seq2Seq model on fixed random batches: forward, cross-entropy, backward, Adam.
struct TrainStep {
  explicit TrainStep(std::unique_ptr<attn::models::Seq2Seq> m) : model(std::move(m)), adam(model->parameters()) {
    attn::Generator gen(1);
    src = random_tokens(gen);
    tgt_out = random_tokens(gen);
    tgt_in = tgt_out;  // <bos> + target[:-1]
    for (std::size_t b = 0; b < kBatch; ++b) {
      for (std::size_t t = kLen - 1; t > 0; --t) tgt_in(b, t) = tgt_out(b, t - 1);
      tgt_in(b, 0) = attn::data::Vocab::bos_id;
    }
  }
  void operator()() {
    adam.zero_grad();
    // As train::Trainer: logits [B, T, V] with targets [B, T], no reshape (torch's reshape is a view, attn's a copy)
    Tensor logits = model->forward(src, lengths, tgt_in);  // [B, T, V]
    Tensor loss = attn::nn::cross_entropy(logits, tgt_out, attn::data::Vocab::pad_id);
    loss.backward();
    adam.step();
    attn::profiler::mark();  // Adam records no op: keep its time out of the next op's forward
  }
  std::unique_ptr<attn::models::Seq2Seq> model;
  attn::nn::Adam adam;
  Index src, tgt_in, tgt_out;
  std::vector<std::size_t> lengths = std::vector<std::size_t>(kBatch, kLen);
};

// Greedy decoding of exactly kLen tokens per sentence.
struct Decode {
  explicit Decode(std::unique_ptr<attn::models::Seq2Seq> m) : model(std::move(m)) {
    attn::Generator gen(2);
    src = random_tokens(gen);
    options.max_len = kLen;
    options.eos_id = -1;  // never produced: every sentence runs the full length
  }
  void operator()() { attn::models::greedy_decode(*model, src, lengths, options); }
  std::unique_ptr<attn::models::Seq2Seq> model;
  Index src;
  std::vector<std::size_t> lengths = std::vector<std::size_t>(kBatch, kLen);
  attn::models::DecodeOptions options;
};

std::unique_ptr<attn::models::Seq2Seq> transformer(attn::Dtype dtype) {
  attn::models::TransformerConfig cfg;
  cfg.src_vocab = cfg.tgt_vocab = kVocab;
  cfg.d_model = kDim;
  cfg.nhead = 4;
  cfg.num_encoder_layers = cfg.num_decoder_layers = 2;
  cfg.dim_feedforward = 512;
  cfg.dropout = 0.1;
  auto model = std::make_unique<attn::models::TransformerSeq2Seq>(cfg);
  model->to(dtype);
  return model;
}

std::unique_ptr<attn::models::Seq2Seq> bahdanau(attn::Dtype dtype) {
  attn::models::BahdanauConfig cfg;
  cfg.src_vocab = cfg.tgt_vocab = kVocab;
  cfg.embed_dim = cfg.encoder_dim = cfg.decoder_dim = cfg.attention_dim = kDim;
  auto model = std::make_unique<attn::models::BahdanauSeq2Seq>(cfg);
  model->to(dtype);
  return model;
}

// nn::LSTM forward + backward with a fixed grad_output.
struct LSTMStep {
  explicit LSTMStep(attn::Dtype dtype) {
    attn::nn::RNNOptions opt;
    opt.batch_first = true;
    lstm = std::make_unique<attn::nn::LSTM>(kDim, kDim, opt);
    lstm->to(dtype);
    attn::Generator gen(1);
    x = attn::randn({kBatch, kLen, kDim}, dtype, gen).requires_grad_(true);
    grad_output = attn::randn({kBatch, kLen, kDim}, dtype, gen);
  }
  void operator()() {
    lstm->zero_grad();
    x.zero_grad();
    (*lstm)(x).output.backward(grad_output);
  }
  std::shared_ptr<attn::nn::LSTM> lstm;
  Tensor x, grad_output;
};

// The output layer's three products alone, on fixed random arrays.
template <class T>
struct OutputProducts {
  explicit OutputProducts(std::size_t features) : k(features) {
    attn::Generator gen(1);
    auto fill = [&](std::vector<T>& v, std::size_t n) {
      Tensor r = attn::randn({n}, attn::Dtype::Float64, gen);
      v.resize(n);
      for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(r.data<double>().flat(i));
    };
    fill(x, rows * k);
    fill(w, kVocab * k);
    fill(dy, rows * kVocab);
    y.resize(rows * kVocab);
    dx.resize(rows * k);
    dw.resize(kVocab * k);
  }
  void operator()() {
    const std::size_t v = kVocab;
    attn::blas::gemm(false, true, rows, v, k, T(1), x.data(), k, w.data(), k, T(0), y.data(), v);      // Y = X W^T    [B*T, V]
    attn::blas::gemm(false, false, rows, k, v, T(1), dy.data(), v, w.data(), k, T(0), dx.data(), k);   // dX = dY W    [B*T, K]
    attn::blas::gemm(true, false, v, k, rows, T(1), dy.data(), v, x.data(), k, T(0), dw.data(), k);    // dW = dY^T X  [V, K]
  }
  std::size_t k, rows = kBatch * kLen;
  std::vector<T> x, w, dy, y, dx, dw;
};

// A std::function holds a copy: share the workload.
template <class W>
Work shared(std::shared_ptr<W> w) {
  return [w] { (*w)(); };
}

// Strips the suffixes -v<V> and -t<T> from a workload's name into kVocab and kLen.
std::string parse_sizes(std::string name) {
  for (;;) {
    const std::size_t dash = name.rfind('-');
    if (dash == std::string::npos || dash + 2 >= name.size()) return name;
    const char key = name[dash + 1];
    const std::string digits = name.substr(dash + 2);
    if ((key != 'v' && key != 't') || digits.find_first_not_of("0123456789") != std::string::npos) return name;
    const std::size_t n = std::stoul(digits);
    if ((key == 'v' && n < 5) || (key == 't' && n < 2))
      throw attn::ValueError("model_bench: '" + name + "' asks for a vocabulary below 5 or a length below 2");
    (key == 'v' ? kVocab : kLen) = n;
    name.erase(dash);
  }
}

Work make_work(const std::string& full_name, attn::Dtype dtype) {
  attn::manual_seed(0);
  const std::string name = parse_sizes(full_name);
  if (name == "transformer") return shared(std::make_shared<TrainStep>(transformer(dtype)));
  if (name == "bahdanau") return shared(std::make_shared<TrainStep>(bahdanau(dtype)));
  if (name == "decode-transformer" || name == "decode-transformer-cached") {
    auto model = transformer(dtype);
    // (e) compares with PyTorch's loop, which runs the whole prefix at every step: so does attn's
    // there. "-cached" decodes with the KV cache (attn's default), for attn against itself.
    static_cast<attn::models::TransformerSeq2Seq&>(*model).use_kv_cache = name == "decode-transformer-cached";
    return shared(std::make_shared<Decode>(std::move(model)));
  }
  if (name == "decode-bahdanau") return shared(std::make_shared<Decode>(bahdanau(dtype)));
  if (name == "lstm") return shared(std::make_shared<LSTMStep>(dtype));
  if (name == "outproj-bahdanau" || name == "outproj-transformer") {
    const std::size_t features = name == "outproj-bahdanau" ? 4 * kDim : kDim;  // [s_t, c_t, y_{t-1}] or d_model
    if (dtype == attn::Dtype::Float32) return shared(std::make_shared<OutputProducts<float>>(features));
    return shared(std::make_shared<OutputProducts<double>>(features));
  }
  throw attn::ValueError("model_bench: unknown workload '" + full_name + "'");
}

// One call; its time in microseconds.
double timed(const Work& work) {
  const auto start = std::chrono::steady_clock::now();
  work();
  const auto end = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::micro>(end - start).count();
}

// A line of /proc/self/status such as "VmHWM:  12345 kB", in kB.
long status_kb(const std::string& key) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind(key + ":", 0) == 0) return std::atol(line.c_str() + key.size() + 1);
  return -1;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  const long baseline_kb = status_kb("VmRSS");
  attn::reuse_freed_memory();  // as the attn command line does (core/memory.hpp); run.py gives torch the same
  const bool serve = argc > 1 && std::string(argv[1]) == "--serve";
  const bool profile = argc > 1 && std::string(argv[1]) == "--profile";
  if (argc != (serve || profile ? 4 : 3)) {
    std::cerr << "usage: model_bench [--serve|--profile] <transformer|bahdanau|decode-transformer|decode-bahdanau|lstm|outproj-bahdanau|outproj-transformer>"
                 "[-v<vocab>][-t<length>] <f32|f64>\n";
    return 2;
  }
  const std::string name = argv[serve || profile ? 2 : 1], dtype = argv[serve || profile ? 3 : 2];
  const Work work = make_work(name, dtype == "f32" ? attn::Dtype::Float32 : attn::Dtype::Float64);

  if (serve) {
    std::string request;
    while (std::cin >> request) {
      if (request == "mem") {
        std::cout << status_kb("VmHWM") << " " << baseline_kb << std::endl;
        continue;
      }
      const int n = std::stoi(request);
      for (int i = 0; i < n; ++i) std::cout << (i ? " " : "") << timed(work);
      std::cout << std::endl;
    }
    return 0;
  }

  for (int i = 0; i < 3; ++i) work();  // warm-up
  if (profile) {
    constexpr int calls = 10;
    attn::profiler::enable();
    double total = 0;
    for (int i = 0; i < calls; ++i) total += timed(work);
    attn::profiler::enable(false);
    std::cout << "attn " << name << " " << dtype << ", " << calls << " calls, " << total / 1000 / calls
              << " ms per call; ms below are per call\n"
              << attn::profiler::table(calls);
    return 0;
  }
  std::vector<double> times;
  for (int i = 0; i < 30; ++i) times.push_back(timed(work));
  std::cout << "attn " << name << " " << dtype << ": median " << median(times) / 1000 << " ms, peak RSS "
            << status_kb("VmHWM") / 1024.0 << " MB\n";
  return 0;
}
