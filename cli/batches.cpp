// `attn batches`: the batches a run trains on, written for another framework to train on the same ones.
//
//   attn batches --checkpoint RUN --steps N --out batches.npz [--initial-weights init.npz] [--overwrite]
//
// The run's task data is rebuilt as `attn eval` and `train --resume` rebuild it (make_task from
// RUN/checkpoint/config.json, its seed and subword codes), and the batch order of steps 1..N is
// drawn as models::Trainer draws it: a Generator seeded with the run's seed, one
// data::make_batches per epoch (batch_size from the run, sort_buckets as TrainerOptions sets it).
// The .npz holds the examples once, ragged, and the order (tools/reference/torch_bahdanau_budget.py
// reads it):
//   src_ids, src_offsets      the training sources' ids, example i = src_ids[src_offsets[i]:src_offsets[i+1]]
//   tgt_ids, tgt_offsets      the same for the targets (without <bos> and <eos>)
//   test_src_ids, test_src_offsets, test_tgt_ids, test_tgt_offsets   the held-out split, as `attn eval` reads it
//   order [sum of batch_sizes]  the examples of step 1, then of step 2, ... in the order of the batch's rows
//   batch_sizes [N]           how many rows each step's batch has
//   src_vocab_size, tgt_vocab_size, pad_id, bos_id, eos_id, unk_id, seed, batch_size   (shape [1] each)
// Every array is float64 (io::save_npz writes floats only); every value is a whole number below
// 2^53, so it reads back exactly (numpy: z["order"].astype(np.int64)).
// A batch's padded matrices follow data/batch.hpp: src padded with <pad>, tgt_in = <bos> + tgt,
// tgt_out = tgt + <eos>, both padded to the longest target + 1.
//
// --initial-weights FILE.npz writes the weights `attn train` starts this run from (before step 1):
// manual_seed(seed), then the model built from the config, in the run's dtype, as train_run does.
#include "commands.hpp"
#include "output.hpp"
#include "parse.hpp"
#include "run_config.hpp"

#include "../io/checkpoint.hpp"
#include "../io/npz.hpp"
#include "../models/extended_source.hpp"

#include <filesystem>
#include <iostream>

namespace attn::cli {

namespace {

// At most this many example indices in `order` (float64: 1.6 GB).
constexpr std::uint64_t kMaxOrdered = 200000000;

Tensor column(const std::vector<double>& values) {
  xt::xarray<double> a = xt::zeros<double>({values.size()});
  std::copy(values.begin(), values.end(), a.begin());
  return Tensor(std::move(a));
}

Tensor one(double value) { return column({value}); }

// The examples' ids, ragged: ids of every example one after another, and where each starts.
void ragged(const std::vector<data::Example>& examples, const data::Vocab& src_vocab, const data::Vocab& tgt_vocab,
            const std::string& prefix, std::vector<std::pair<std::string, Tensor>>& arrays) {
  std::vector<double> src_ids, src_offsets{0}, tgt_ids, tgt_offsets{0};
  for (const data::Example& e : examples) {
    for (std::int64_t id : src_vocab.encode(e.src)) src_ids.push_back(static_cast<double>(id));
    for (std::int64_t id : tgt_vocab.encode(e.tgt)) tgt_ids.push_back(static_cast<double>(id));
    src_offsets.push_back(static_cast<double>(src_ids.size()));
    tgt_offsets.push_back(static_cast<double>(tgt_ids.size()));
  }
  arrays.push_back({prefix + "src_ids", column(src_ids)});
  arrays.push_back({prefix + "src_offsets", column(src_offsets)});
  arrays.push_back({prefix + "tgt_ids", column(tgt_ids)});
  arrays.push_back({prefix + "tgt_offsets", column(tgt_offsets)});
}

std::string vocab_text(const data::Vocab& src, const data::Vocab& tgt) {
  return nlohmann::json{{"src", nlohmann::json::parse(src.to_json())}, {"tgt", nlohmann::json::parse(tgt.to_json())}}
      .dump();
}

}  // namespace

void add_batches_command(CLI::App& app) {
  struct Options {
    std::string dir, out, initial_weights;
    std::uint64_t steps = 0;
    bool overwrite = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "batches", "Write the batches of a run's steps 1..N (and its initial weights) for another framework to train on");
  cmd->add_option("--checkpoint", o->dir, "a run folder written by attn train")->required();
  add_count(cmd, "--steps", o->steps, 1, kMaxSteps, "the steps whose batches are written (1..N)")->required();
  cmd->add_option("--out", o->out, "the .npz to write (a new file unless --overwrite)")->required();
  cmd->add_option("--initial-weights", o->initial_weights,
                  "also write the weights attn train starts this run from, as a model.npz (a new file unless --overwrite)");
  cmd->add_flag("--overwrite", o->overwrite, "replace --out and --initial-weights if they exist");
  cmd->callback([o, cmd] {
    const Output out{"--out", o->out, o->overwrite};
    const Output weights{"--initial-weights", o->initial_weights, o->overwrite};
    const bool write_weights = cmd->count("--initial-weights") > 0;
    if (write_weights && std::filesystem::absolute(o->out).lexically_normal() ==
                             std::filesystem::absolute(o->initial_weights).lexically_normal())
      throw ValueError("batches: --out and --initial-weights are the same file (" + o->out + ")");
    check_output(out, {}, {o->dir});  // before the run is even read
    if (write_weights) check_output(weights, {}, {o->dir});

    // 1. The run and its task data, rebuilt as `attn eval` rebuilds them.
    if (!std::filesystem::is_directory(o->dir)) throw IOError("--checkpoint " + o->dir + ": no such run folder");
    const Checkpoint unit(o->dir);
    const std::string where = unit.name("config.json");
    nlohmann::json config = unit.read_json("config.json");
    const TrainSettings s = read_train_settings(config, where);
    if (config.at("model").value("model", "") == "grid")
      throw ValueError("batches: " + where + " is a grid captioner's run; its batches are grids, not token "
                       "sequences (only sequence models' runs)");
    if (trains_in_epochs(config.at("model").value("model", "")))
      throw ValueError("batches: " + where + " is a run of " + config.at("model").value("model", "") + ", which trains "
                       "in epochs on batches of its own kind, not on sentence pairs (only sequence models' runs)");
    const bool has_codes = config.at("task").contains("bpe");
    if (has_codes != unit.lists(kCodesFile))
      throw IOError(unit.name(kCodesFile) + (has_codes ? ": missing (config.json's task has \"bpe\")"
                                                       : ": listed in manifest.json, but config.json's task has no \"bpe\""));
    data::Bpe codes;
    if (has_codes) codes = read_codes(unit.path(kCodesFile), unit.name(kCodesFile));
    TaskData task;
    try {
      task = make_task(config.at("task"), s.seed, where + ": task", has_codes ? &codes : nullptr);
    } catch (const std::exception& e) {
      throw IOError(where + ": its task cannot be rebuilt: " + e.what());
    }
    if (vocab_text(task.src_vocab, task.tgt_vocab) != unit.read_json("vocab.json").dump())
      throw IOError(unit.name("vocab.json") + ": differs from the vocabulary of the task's data as it is now (was the "
                    "corpus file changed since the run began?); its batches cannot be rebuilt");
    if (o->steps > kMaxOrdered / s.batch_size)
      throw ValueError("--steps " + std::to_string(o->steps) + ": with the run's batch_size " +
                       std::to_string(s.batch_size) + " that is more than " + std::to_string(kMaxOrdered) +
                       " example indices; write fewer steps");

    // 2. The order of steps 1..N, drawn as models::Trainer::next_batch draws it.
    Generator gen(s.seed);  // Trainer: gen_(options.seed)
    data::BatchOptions batching;
    batching.batch_size = s.batch_size;
    batching.sort_buckets = models::TrainerOptions{}.sort_buckets;  // the command line keeps the default
    std::vector<double> order, sizes;
    std::size_t epochs = 0;
    while (sizes.size() < o->steps) {
      const std::vector<data::Batch> epoch = data::make_batches(task.split.train, task.src_vocab, task.tgt_vocab, batching, gen);
      ++epochs;
      for (const data::Batch& b : epoch) {
        if (sizes.size() == o->steps) break;
        for (std::size_t i : b.indices) order.push_back(static_cast<double>(i));  // the rows in the batch's order
        sizes.push_back(static_cast<double>(b.indices.size()));
      }
    }

    std::vector<std::pair<std::string, Tensor>> arrays;
    ragged(task.split.train, task.src_vocab, task.tgt_vocab, "", arrays);
    ragged(task.split.test, task.src_vocab, task.tgt_vocab, "test_", arrays);
    arrays.push_back({"order", column(order)});
    arrays.push_back({"batch_sizes", column(sizes)});
    arrays.push_back({"src_vocab_size", one(static_cast<double>(task.src_vocab.size()))});
    arrays.push_back({"tgt_vocab_size", one(static_cast<double>(task.tgt_vocab.size()))});
    arrays.push_back({"pad_id", one(data::Vocab::pad_id)});
    arrays.push_back({"bos_id", one(data::Vocab::bos_id)});
    arrays.push_back({"eos_id", one(data::Vocab::eos_id)});
    arrays.push_back({"unk_id", one(data::Vocab::unk_id)});
    arrays.push_back({"seed", one(static_cast<double>(s.seed))});  // below 2^53 for any seed the course uses
    arrays.push_back({"batch_size", one(static_cast<double>(s.batch_size))});

    // 3. The initial weights: train_run's manual_seed, then the model (make_task draws from its own generator).
    std::unique_ptr<models::Seq2Seq> model;
    if (write_weights) {
      manual_seed(s.seed);
      model = build_model(config.at("model"), task.src_vocab.size(), task.tgt_vocab.size(), where);
      if (auto* copying = dynamic_cast<models::CopyingModel*>(model.get()))
        copying->set_copy_map(task.src_vocab, task.tgt_vocab);
      if (s.dtype == "float32") model->to(Dtype::Float32);
    }

    // 4. Write: checked again, then each file atomically (io::save and io::save_npz rename a finished file).
    check_output(out, {}, {o->dir});
    io::save_npz(o->out, arrays);
    std::cout << "wrote " << o->out << ": " << sizes.size() << " steps (" << order.size() << " examples, " << epochs
              << (epochs == 1 ? " epoch" : " epochs") << ") over " << task.split.train.size() << " training and "
              << task.split.test.size() << " held-out examples, seed " << s.seed << ", batch size " << s.batch_size
              << std::endl;
    if (write_weights) {
      check_output(weights, {}, {o->dir});
      io::save(*model, o->initial_weights);
      std::cout << "wrote " << o->initial_weights << ": the initial weights (" << model->num_parameters()
                << " parameters, " << s.dtype << ")" << std::endl;
    }
  });
}

}  // namespace attn::cli
