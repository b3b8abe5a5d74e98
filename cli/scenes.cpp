// Show, Attend and Tell on rendered scenes on the command line (see scenes.hpp).
#include "scenes.hpp"

#include "commands.hpp"
#include "output.hpp"
#include "parse.hpp"
#include "progress.hpp"
#include "run_config.hpp"

#include "../decode/grid_decode.hpp"
#include "../eval/scene_evaluate.hpp"
#include "../train/scene_training.hpp"
#include "../viz/attention_overlay.hpp"
#include "../viz/grid_plot.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>

#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

#include <unistd.h>

namespace attn::cli {

using nlohmann::json;

namespace {

constexpr std::uint64_t kMaxModelSize = 65536;   // embed_dim, decoder_dim, ...
constexpr std::uint64_t kMaxScenes = 1000000;    // per split; memory is checked too
constexpr std::size_t kMaxCaptionWords = 60;     // a caption of 4 objects has 25

const char* attention_name(models::GridAttention a) { return a == models::GridAttention::Hard ? "hard" : "soft"; }

data::SceneOptions scene_options(const Fields& f, const std::string& where) {
  data::SceneOptions o;
  o.height = o.width = f.count_or("image_size", 64, 16, 256);
  o.min_objects = f.count_or("min_objects", o.min_objects, 1, 4);
  o.max_objects = f.count_or("max_objects", o.max_objects, 1, 4);
  if (o.min_objects > o.max_objects)
    throw ValueError(where + ": min_objects " + std::to_string(o.min_objects) + " is more than max_objects " +
                     std::to_string(o.max_objects));
  return o;
}

models::CaptionLossOptions loss_options(const json& model, const std::string& where) {
  const Fields f(model, where);
  models::CaptionLossOptions o;
  o.doubly_stochastic = f.real_or("doubly_stochastic", 1.0, Bounds::non_negative());
  o.entropy = f.real_or("entropy", o.entropy, Bounds::non_negative());
  o.baseline_decay = f.real_or("baseline_decay", o.baseline_decay, {0.0, 1.0, true, false});
  return o;
}

std::string gigabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GB", bytes / 1e9);
  return text;
}

std::string percent(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100 * x);
  return text;
}

// "words in the objects' masks: 41.2% of their attention (chance 9.8%, 4.2x)" for one kind of word.
std::string share_text(const models::KindShare& k) {
  if (k.words == 0) return "none measured";
  char text[96];
  std::snprintf(text, sizeof text, "%.1f%% of the attention inside the object (chance %.1f%%, %.1fx)", 100 * k.share,
                100 * k.chance, k.ratio());
  return text;
}

void print_shares(const models::AttentionShareMeter& m) {
  for (models::SceneWordKind k : {models::SceneWordKind::Size, models::SceneWordKind::Colour, models::SceneWordKind::Shape})
    std::printf("  %-7s words: %s\n", models::kind_name(k), share_text(m.kind(k)).c_str());
  std::printf("  all object words: %s\n", share_text(m.object_words()).c_str());
}

}  // namespace

json default_scene_model_config() {
  const models::GridCaptionerConfig c;
  return {{"model", "show-attend-tell"},
          {"conv_channels", 16},
          {"conv_blocks", 3},
          {"embed_dim", c.embed_dim},
          {"decoder_dim", 128},
          {"attention_dim", c.attention_dim},
          {"attention", "soft"},
          {"gate", true},
          {"soft_probability", 0.5},
          {"doubly_stochastic", 1.0},
          {"entropy", models::CaptionLossOptions().entropy},
          {"baseline_decay", models::CaptionLossOptions().baseline_decay}};
}

json default_scene_task_config() {
  const data::SceneOptions o;
  return {{"name", "shapes"},           {"n_train", 5000},        {"n_valid", 500},
          {"n_test", 500},              {"image_size", o.height}, {"min_objects", o.min_objects},
          {"max_objects", o.max_objects}};
}

std::unique_ptr<models::ShowAttendTell> make_scene_model(const json& model, const json& task, const std::string& where) {
  const json defaults = default_scene_model_config();
  const std::string at = where + " (model 'show-attend-tell')";
  const Fields f(model, at);
  std::vector<std::string> known;
  for (const auto& item : defaults.items()) known.push_back(item.key());
  f.only(known);
  (void)loss_options(model, at);
  models::ShowAttendTellConfig c;
  const std::size_t base = f.count_or("conv_channels", 16, 1, 4096), blocks = f.count_or("conv_blocks", 3, 1, 6);
  c.encoder.channels.clear();
  for (std::size_t i = 0; i < blocks; ++i) c.encoder.channels.push_back(base << i);
  c.captioner.vocab = data::scene_vocab().size();
  c.captioner.embed_dim = f.count_or("embed_dim", c.captioner.embed_dim, 1, kMaxModelSize);
  c.captioner.decoder_dim = f.count_or("decoder_dim", 128, 1, kMaxModelSize);
  c.captioner.attention_dim = f.count_or("attention_dim", c.captioner.attention_dim, 1, kMaxModelSize);
  c.captioner.attention = f.one_of("attention", {"soft", "hard"}) == std::string("hard") ? models::GridAttention::Hard
                                                                                        : models::GridAttention::Soft;
  c.captioner.gate = f.boolean_or("gate", true);
  c.captioner.soft_probability = f.real_or("soft_probability", 0.5, {0.0, 1.0});
  // The pictures must survive every block's halving: refused here by name, not deep in a convolution.
  const std::size_t size = scene_options(Fields(task, where + ": task"), where + ": task").height;
  if ((size >> blocks) == 0)
    throw ValueError(at + ": conv_blocks " + std::to_string(blocks) + " halve a picture " + std::to_string(blocks) +
                     " times, and the task's pictures are " + std::to_string(size) + " pixels wide: at most " +
                     std::to_string(std::size_t(std::log2(double(size)))) + " blocks");
  auto m = std::make_unique<models::ShowAttendTell>(c);
  (void)m->grid_size(size, size);
  return m;
}

data::SceneCaptions scene_splits(const json& task, std::uint64_t seed, const std::string& where, bool test_only) {
  const Fields f(task, where);
  f.only({"name", "n_train", "n_valid", "n_test", "image_size", "min_objects", "max_objects"});
  f.one_of("name", {"shapes"});
  const data::SceneOptions options = scene_options(f, where);
  const std::size_t n_train = f.count_or("n_train", 5000, 1, kMaxScenes), n_valid = f.count_or("n_valid", 500, 1, kMaxScenes),
                    n_test = f.count_or("n_test", 500, 1, kMaxScenes);
  // The scenes are kept in memory (pixels and masks: H * W * (3 + objects) bytes each): refused before drawing if
  // they would fill more than half of it.
  const double each = double(options.height * options.width * (3 + options.max_objects));
  const double bytes = each * double(test_only ? n_test : n_train + n_valid + n_test);
  const double memory = double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGE_SIZE));
  if (memory > 0 && bytes > memory / 2)
    throw ValueError(where + ": " + std::to_string(n_train + n_valid + n_test) + " scenes would take about " +
                     gigabytes(bytes) + " of memory, more than half of this machine's " + gigabytes(memory) +
                     ": give fewer (n_train, --n-train) or smaller pictures");
  data::SceneCaptions set;
  Phase phase("drawing " + std::to_string(test_only ? n_test : n_train + n_valid + n_test) + " scenes");
  if (test_only) set.test = data::make_scene_split(data::SceneCaptionSplit::Test, n_test, seed, options);
  else set = data::make_scene_captions(n_train, n_valid, n_test, seed, options);
  phase.done();
  return set;
}

void train_scenes_run(json config, const std::string& out, const RunStart& start) {
  std::string where;
  config = epoch_run_config(config, start, "epochs", where);
  const TrainSettings s = read_train_settings(config, where);
  const std::string model_where = start.resumed ? where + ": model" : "the model's settings (--set)";
  const std::string task_where = start.resumed ? where + ": task" : "the task's settings (--task shapes, --n-train)";
  (void)make_scene_model(config.at("model"), config.at("task"), model_where);  // fail fast, before any drawing
  if (!start.resumed) check_out_folder(out, start.overwrite);
  const data::SceneCaptions set = scene_splits(config.at("task"), s.seed, task_where);
  const data::Vocab vocab = data::scene_vocab();
  manual_seed(s.seed);  // the weights, and hard attention's samples
  std::unique_ptr<models::ShowAttendTell> model;
  try {
    model = make_scene_model(config.at("model"), config.at("task"), model_where);
  } catch (const std::bad_alloc&) {
    throw ValueError("--set: the model's sizes need more memory than this machine has");
  }
  if (s.dtype == "float32") model->to(Dtype::Float32);
  models::EpochTrainerOptions options = epoch_trainer_options(s);
  options.keep_best = true;  // the epoch with the best validation BLEU
  models::EpochTrainer trainer(
      *model, models::scene_family(*model, set.train, set.valid, vocab, s.batch_size, loss_options(config.at("model"), model_where)),
      options);
  const std::unique_ptr<RunLock> lock = begin_epoch_run(trainer, start, out, vocab_json_text(data::Vocab(), vocab));

  // Ctrl-C from here on is read after each step and after each validation (and the line below says training
  // has begun): the run commits a checkpoint it resumes from.
  std::optional<SigintCatcher> catcher(std::in_place);
  const std::size_t size = set.train.front().pixels.shape()[1];
  const Size2 grid = model->grid_size(size, size);
  std::printf("training show-attend-tell (%s attention%s, %zu parameters, %s) on shapes: %zu train / %zu valid / %zu "
              "test scenes of %zux%zu pixels, a grid of %zux%zu cells, seed %llu%s\n",
              attention_name(model->captioner.config.attention), model->captioner.config.gate ? " with the gate" : "",
              model->num_parameters(), s.dtype.c_str(), set.train.size(), set.valid.size(), set.test.size(), size, size,
              grid[0], grid[1], static_cast<unsigned long long>(s.seed), start.resumed ? resumed_text(trainer).c_str() : "");
  std::fflush(stdout);
  const std::size_t first_epoch = trainer.epochs_done();
  const auto write_plot = [&] {
    write_epoch_plot(out + "/loss.svg", trainer, "training loss and validation BLEU per epoch", "",
                     {{"training loss (nats per word)", trainer.epoch_losses()},
                      {"validation BLEU (greedy, 0..1)", trainer.epoch_validation()}});
  };
  EpochRunView view;
  keep_best_view(view, trainer, "eval and caption", [](double bleu) {
    char text[32];
    std::snprintf(text, sizeof text, "BLEU %.2f", 100 * bleu);
    return std::string(text);
  }, " (greedy)");
  view.write_plots = write_plot;
  const double seconds = run_epochs(trainer, out, config, data::Vocab(), vocab, set.train.size(), s.batch_size, catcher,
                                    view);
  trainer.restore_best();
  std::printf("training time: %zu epochs in %.1f s (with the validation after each); kept epoch %zu (validation BLEU "
              "%.2f)\n", s.epochs - first_epoch, seconds, trainer.best_epoch(), 100 * trainer.best_score());
  const models::SceneEvaluation e = models::evaluate_scene_captioner(*model, set.test, vocab);
  write_plot();
  std::printf("test scenes (%zu, greedy): exact match %s, BLEU %.2f; attention of the words naming an object: %s  "
              "(checkpoint: %s; plot: %s/loss.svg)\n",
              set.test.size(), percent(e.overall.exact_match()).c_str(), 100 * e.bleu.score,
              share_text(e.decoded_share.object_words()).c_str(), out.c_str(), out.c_str());
}

void eval_scenes(Run& run, std::size_t beam, const std::string& predictions_file, bool overwrite, const std::string& dir) {
  const data::SceneCaptions set =
      scene_splits(run.config.at("task"), run.config.at("seed").get<std::uint64_t>(), run.config_file + ": task", true);
  models::SceneEvalOptions options;
  options.beam_size = beam;
  const models::SceneEvaluation e = models::evaluate_scene_captioner(*run.image_captioner, set.test, run.tgt_vocab, options);
  std::printf("%zu test scenes, %s: exact match %s, BLEU %.2f, token accuracy %s (teacher forced %s), loss %.4f\n",
              set.test.size(), beam > 1 ? ("beam search " + std::to_string(beam)).c_str() : "greedy",
              percent(e.overall.exact_match()).c_str(), 100 * e.bleu.score, percent(e.overall.token_accuracy()).c_str(),
              percent(e.teacher_forced_accuracy).c_str(), e.loss);
  std::printf("where the words that name an object look, along the generated captions (%zu words named no object of "
              "the scene):\n", e.decoded_share.unmatched());
  print_shares(e.decoded_share);
  std::printf("along the gold captions (teacher forced):\n");
  print_shares(e.teacher_forced_share);
  if (predictions_file.empty()) return;
  std::string text;
  for (std::size_t i = 0; i < set.test.size(); ++i)
    text += data::join(set.test[i].caption, " ") + "\t" + data::join(e.captions[i], " ") + "\n";
  write_output(Output{"--predictions", predictions_file, overwrite}, text, {}, {dir});
  std::printf("wrote %s\n", predictions_file.c_str());
}

namespace {

struct Captioned {
  std::string name;                      // the file, or "test scene K"
  xt::xtensor<std::uint8_t, 3> pixels;   // [3, H, W]
  std::vector<std::string> words;        // without <eos>
  xt::xarray<double> attention;          // [T, rows, cols], one map per word
  std::string gold;                      // a test scene's caption; "" for a file
};

Captioned caption_pixels(Run& run, Captioned c, std::size_t beam) {
  models::ShowAttendTell& model = *run.image_captioner;
  const Size2 grid = model.grid_size(c.pixels.shape()[1], c.pixels.shape()[2]);
  models::DecodeOptions options;
  options.max_len = kMaxCaptionWords;
  options.beam_size = beam;
  const Tensor images = data::scene_image_input(c.pixels, model.dtype());  // [1, 3, H, W]
  const models::Hypothesis h = (beam > 1 ? models::beam_caption(model, images, options)
                                         : models::greedy_caption(model, images, options)).front();
  for (std::int64_t id : h.tokens) {
    if (id == data::Vocab::eos_id) break;
    c.words.push_back(run.tgt_vocab.token(id));
  }
  if (!h.finished)
    std::cerr << "note: the caption of " << visible_text(c.name) << " stopped unfinished at the " << kMaxCaptionWords
              << " words it may have\n";
  const xt::xarray<double> maps = models::attention_grid(h, grid[0]).to_array();  // [T, rows, cols]
  c.attention = xt::view(maps, xt::range(0, c.words.size()), xt::all(), xt::all());  // [words, rows, cols]
  return c;
}

}  // namespace

void refuse_image_captioner(const Run& run, const std::string& command, const std::string& dir) {
  if (run.is_image_captioner())
    throw ValueError(command + ": " + dir + " holds show-attend-tell, which captions pictures: attn caption --checkpoint " +
                     data::shell_word(dir) + " PICTURE.png (or --test K for a test scene), with --show-attention or --out "
                     "FILE.svg for its maps");
}

void add_caption_command(CLI::App& app) {
  struct Options {
    std::string dir, out;
    std::vector<std::string> files;
    std::vector<std::uint64_t> tests;
    std::uint64_t beam = 1;
    bool show = false, overwrite = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("caption", "Caption pictures with a run of show-attend-tell, and show where it looked");
  cmd->add_option("--checkpoint", o->dir, "a run of --model show-attend-tell")->required();
  cmd->add_option("files", o->files, "PNG pictures (RGB, of the size the run trained on, 64 x 64 by default)");
  cmd->add_option("--test", o->tests, "also caption the run's test scene K (0-based; repeatable), its gold caption beside");
  add_count(cmd, "--beam", o->beam, 1, 64, "beam search of this size (1: greedy)");
  cmd->add_flag("--show-attention", o->show,
                "print each word's map over the grid in the terminal (each map shaded up to its own highest weight)");
  cmd->add_option("--out", o->out, "write FILE.svg: the picture, then each word's map laid over it (one picture; a new "
                                   "file unless --overwrite)");
  cmd->add_flag("--overwrite", o->overwrite, "replace the --out file if it exists");
  cmd->callback([o, cmd] {
    if (o->files.empty() && o->tests.empty())
      throw ValueError("caption: give PNG files or --test K (a test scene of the run)");
    const Output out{"--out", o->out, o->overwrite};
    std::vector<Input> inputs;
    for (const std::string& f : o->files) inputs.push_back({f, "a picture it reads"});
    if (cmd->count("--out")) {
      if (o->files.size() + o->tests.size() > 1)
        throw ValueError("--out draws one picture's overlays: give one PNG file or one --test K");
      if (o->out.size() < 4 || o->out.compare(o->out.size() - 4, 4, ".svg") != 0)
        throw ValueError("--out " + o->out + ": the overlays are an SVG picture: give a FILE.svg");
      check_output(out, inputs, {o->dir});  // before any work
    }
    Run run = load_run(o->dir);
    if (!run.image_captioner)
      throw ValueError("caption: " + o->dir + " holds " + run.model_name() + ", not show-attend-tell (attn translate "
                       "captions the grid of --model grid)");
    const json& task = run.config.at("task");
    const std::size_t size = scene_options(Fields(task, run.config_file + ": task"), run.config_file + ": task").height;
    std::vector<Captioned> done;
    for (const std::string& f : o->files) {
      Captioned c;
      c.name = f;
      c.pixels = data::read_scene_pixels(f, size, size);
      done.push_back(caption_pixels(run, std::move(c), o->beam));
    }
    if (!o->tests.empty()) {
      const std::uint64_t n_test = Fields(task, run.config_file + ": task").count_or("n_test", 500, 1, kMaxScenes);
      for (std::uint64_t k : o->tests)
        if (k >= n_test)
          throw ValueError("--test " + std::to_string(k) + ": the run has " + std::to_string(n_test) +
                           " test scenes (0 to " + std::to_string(n_test - 1) + ")");
      const data::SceneCaptions set =
          scene_splits(task, run.config.at("seed").get<std::uint64_t>(), run.config_file + ": task", true);
      for (std::uint64_t k : o->tests) {
        Captioned c;
        c.name = "test scene " + std::to_string(k);
        c.pixels = set.test[k].pixels;
        c.gold = data::join(set.test[k].caption, " ");
        done.push_back(caption_pixels(run, std::move(c), o->beam));
      }
    }
    for (const Captioned& c : done) {
      std::cout << visible_text(c.name) << "  ->  " << data::join(c.words, " ") << "\n";
      if (!c.gold.empty()) std::cout << "  gold: " << c.gold << "\n";
      if (o->show && !c.words.empty()) {
        // Each map over its own highest weight, as the overlays are drawn: 64 cells share a word's weight, and on
        // the absolute scale every cell of a spread map would print blank.
        xt::xarray<double> scaled = c.attention;  // [T, rows, cols]
        for (std::size_t t = 0; t < scaled.shape()[0]; ++t) {
          auto map = xt::view(scaled, t, xt::all(), xt::all());
          const double top = xt::amax(map)();
          if (top > 0) map /= top;
        }
        std::cout << viz::terminal_grids(scaled, c.words) << "\n";
      }
    }
    if (o->out.empty()) return;
    const Captioned& c = done.front();
    viz::StripOptions strip;
    strip.title = c.name + ": " + data::join(c.words, " ");
    write_output(out, viz::attention_strip_svg(c.pixels, c.words, c.attention, strip), inputs, {o->dir});
    std::printf("wrote %s\n", o->out.c_str());
  });
}

}  // namespace attn::cli
