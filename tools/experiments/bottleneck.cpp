// The bottleneck experiment (chapters 1 and 2): an encoder-decoder without
// attention and Bahdanau's model, trained on the same synthetic task with the
// same budget, scored by exact match for every source length.
//
//   ./build/tools/bottleneck                      # reversal, lengths 4-30
//   ./build/tools/bottleneck --task copy --steps 4000 --seed 2
//
// Without attention, everything the decoder learns about the source has to
// pass through one vector of hidden_dim numbers: exact match falls as sources
// grow. With attention the decoder reads every encoder state at every step, and
// accuracy holds up with length.
#include "core/random.hpp"
#include "models/bahdanau.hpp"
#include "data/tasks.hpp"
#include "eval/accuracy.hpp"
#include "models/seq2seq_plain.hpp"
#include "train/trainer.hpp"
#include "nn/schedule.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

using namespace attn;
using namespace attn::models;

namespace {

struct Settings {
  data::SequenceTask task = data::SequenceTask::reverse;
  std::size_t min_length = 4, max_length = 30;
  std::size_t steps = 3000, batch_size = 32, hidden = 64, vocab = 10;
  std::size_t n_train = 20000, n_test = 1000, bucket = 1;
  double lr = 3e-3;
  std::uint64_t seed = 1;
};

void usage() {
  std::cerr << "usage: bottleneck [--task copy|reverse|sort] [--steps N] [--batch N] [--hidden N] [--lr X]\n"
               "                  [--min-length N] [--max-length N] [--test N] [--bucket N] [--seed N]\n";
}

Settings parse(int argc, char** argv) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      usage();
      std::exit(0);
    }
    if (i + 1 >= argc) {
      usage();
      throw ValueError("bottleneck: " + flag + " needs a value");
    }
    const std::string value = argv[++i];
    if (flag == "--task") s.task = data::sequence_task_from_name(value);
    else if (flag == "--steps") s.steps = std::stoul(value);
    else if (flag == "--batch") s.batch_size = std::stoul(value);
    else if (flag == "--hidden") s.hidden = std::stoul(value);
    else if (flag == "--lr") s.lr = std::stod(value);
    else if (flag == "--min-length") s.min_length = std::stoul(value);
    else if (flag == "--max-length") s.max_length = std::stoul(value);
    else if (flag == "--test") s.n_test = std::stoul(value);
    else if (flag == "--bucket") s.bucket = std::stoul(value);
    else if (flag == "--seed") s.seed = std::stoull(value);
    else {
      usage();
      throw ValueError("bottleneck: unknown option " + flag);
    }
  }
  return s;
}

// Trains `model` with the settings' budget and returns its evaluation on the test set.
Evaluation run(Seq2Seq& model, const char* name, const data::Split& split, const data::Vocab& vocab,
               const Settings& s) {
  model.to(Dtype::Float32);
  TrainerOptions options;
  options.steps = s.steps;
  options.batch_size = s.batch_size;
  options.lr = s.lr;
  options.seed = s.seed;
  options.log_every = std::max<std::size_t>(s.steps / 10, 1);
  Trainer trainer(model, split.train, vocab, vocab, options);
  trainer.set_schedule([&](nn::Optimizer& o) { return std::make_unique<nn::CosineAnnealingLR>(o, long(s.steps)); });
  trainer.set_eval_data(split.test);
  trainer.on_progress = [name](const Progress& p) {
    std::fprintf(stderr, "\r%-9s step %5zu/%zu  loss %.4f  accuracy %.3f  %.0f steps/s  %.0f s left   ", name,
                 p.step, p.total_steps, p.loss, p.accuracy, p.steps_per_second, p.seconds_left);
  };
  const auto start = std::chrono::steady_clock::now();
  trainer.train();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const Evaluation& e = trainer.last_evaluation();
  std::fprintf(stderr, "\n");
  std::printf("%-9s %8zu parameters, %.0f s: exact match %.1f%%, token accuracy %.1f%%\n", name,
              model.num_parameters(), seconds, 100 * e.overall.exact_match(), 100 * e.overall.token_accuracy());
  return e;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Settings s = parse(argc, argv);
    Generator gen(s.seed);
    data::SequenceTaskOptions task;
    task.vocab_size = s.vocab;
    task.min_length = s.min_length;
    task.max_length = s.max_length;
    const data::Split split = data::sequence_split(s.task, s.n_train, s.n_test, task, gen);
    const data::Vocab vocab = data::task_vocab(s.vocab);
    std::printf("task %s, source lengths %zu-%zu, %zu training / %zu test examples, %zu steps of %zu, seed %llu\n",
                data::task_name(s.task), s.min_length, s.max_length, s.n_train, s.n_test, s.steps, s.batch_size,
                static_cast<unsigned long long>(s.seed));

    manual_seed(s.seed);
    PlainSeq2SeqConfig pc;
    pc.src_vocab = pc.tgt_vocab = vocab.size();
    pc.embed_dim = 16;
    pc.hidden_dim = s.hidden;  // the context c: hidden numbers for the whole source
    PlainSeq2Seq plain(pc);
    const Evaluation without = run(plain, "plain", split, vocab, s);

    manual_seed(s.seed);
    BahdanauConfig bc;
    bc.src_vocab = bc.tgt_vocab = vocab.size();
    bc.embed_dim = 16;
    bc.encoder_dim = s.hidden / 2;  // h_j = [forward; backward]: hidden numbers per source token
    bc.decoder_dim = s.hidden;
    bc.attention_dim = s.hidden;
    BahdanauSeq2Seq bahdanau(bc);
    const Evaluation with = run(bahdanau, "bahdanau", split, vocab, s);

    std::printf("\nexact match (%%) by source length\n%s",
                format_length_table({{"plain", bucket_by_length(without.by_length, s.bucket)},
                                     {"bahdanau", bucket_by_length(with.by_length, s.bucket)}})
                    .c_str());
    return 0;
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}
