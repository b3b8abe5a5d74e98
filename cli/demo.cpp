// `attn demo`: the embedded default. Trains the Bahdanau model (chapter 2) on
// date normalization with a fixed seed, evaluates it on held-out dates, shows
// where it attends for a few of them, and writes SVG heatmaps and plots.
#include "commands.hpp"
#include "output.hpp"

#include <filesystem>
#include <iostream>

namespace attn::cli {

void add_demo_command(CLI::App& app) {
  struct Options {
    std::string out = "out/demo";
    std::uint64_t steps = 400;
    std::uint64_t seed = 1;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("demo", "Train Bahdanau attention on dates, then show where it attends");
  cmd->add_option("--out", o->out, "where the SVG heatmaps, plots and the run go (replaced)")->capture_default_str();
  add_count(cmd, "--steps", o->steps, 1, kMaxSteps, "training steps");
  add_count(cmd, "--seed", o->seed, 0, kMaxSeed, "seeds the data, the initial weights and the batches' order");
  cmd->callback([o] {
    nlohmann::json model = models::default_model_config("bahdanau");
    model["embed_dim"] = 32;
    model["encoder_dim"] = 64;
    model["decoder_dim"] = 64;
    model["attention_dim"] = 64;
    nlohmann::json task = default_task_config("dates");
    task["n_train"] = 30000;
    task["n_test"] = 1000;
    nlohmann::json config = {
        {"model", model}, {"task", task}, {"seed", o->seed}, {"dtype", "float32"},
        {"train", {{"steps", o->steps}, {"batch_size", 64}, {"lr", 0.005}, {"clip_norm", 1.0}, {"eval_every", 0}}}};
    std::cout << "attn demo: Bahdanau attention (chapter 2) learns to write dates as YYYY-MM-DD.\n";
    const std::string run_dir = o->out + "/run";  // the demo replaces its own run each time
    const TrainResult result = train_run(config, run_dir, TrainMode::Overwrite);
    const models::Evaluation& e = result.evaluation;
    std::printf("\nheld-out dates: exact match %.1f%%, token accuracy %.1f%%", 100 * e.overall.exact_match(),
                100 * e.overall.token_accuracy());
    if (e.alignment.steps) std::printf(", attention peak on the gold character %.1f%%", 100 * e.alignment.hit_rate());
    std::printf("\n\n");

    Run run = load_run(run_dir);
    const std::vector<std::string> dates = {"3 March 2021", "Tue, Dec 31 1999", "07/04/1976", "29th of february 2000"};
    std::vector<data::Tokens> inputs;
    for (const auto& d : dates) inputs.push_back(tokenize(run.config.at("task"), d));
    auto hyps = translate(run, inputs, 1);
    std::vector<std::string> written;
    for (std::size_t i = 0; i < hyps.size(); ++i) {
      std::vector<std::string> rows;
      for (std::int64_t id : hyps[i].tokens) rows.push_back(run.output_vocab.token(id));
      const std::string output = detokenize(run.config.at("task"), run.output_vocab.decode(hyps[i].tokens));
      const xt::xarray<double> a = attention_of(hyps[i], "attention", inputs[i].size());
      std::cout << dates[i] << "  ->  " << output << "\n" << viz::terminal_heatmap(a, rows, inputs[i]) << "\n";
      viz::HeatmapOptions options;
      options.title = dates[i] + "  ->  " + output;
      const std::string path = o->out + "/attention_" + std::to_string(i + 1) + ".svg";
      write_own_file(path, viz::heatmap_svg(a, rows, inputs[i], options));
      written.push_back(path);
    }

    viz::LinePlotOptions loss_plot;
    loss_plot.title = "training loss";
    loss_plot.x_label = "step";
    loss_plot.y_label = "cross-entropy";
    write_own_file(o->out + "/loss.svg", viz::line_plot_svg({{"train", result.steps, result.losses}}, loss_plot));
    written.push_back(o->out + "/loss.svg");
    viz::Series by_length{"exact match", {}, {}};
    for (const auto& [len, c] : e.by_length) {
      by_length.x.push_back(static_cast<double>(len));
      by_length.y.push_back(100 * c.exact_match());
    }
    viz::LinePlotOptions acc_plot;
    acc_plot.title = "held-out exact match by source length";
    acc_plot.x_label = "source length (characters)";
    acc_plot.y_label = "exact match (%)";
    acc_plot.y_from_zero = true;
    acc_plot.markers = true;
    write_own_file(o->out + "/accuracy_by_length.svg", viz::line_plot_svg({by_length}, acc_plot));
    written.push_back(o->out + "/accuracy_by_length.svg");
    std::cout << "wrote:\n";
    for (const auto& p : written) std::cout << "  " << p << "\n";
    std::cout << "  " << run_dir << "/ (checkpoint: try `attn translate --checkpoint " << run_dir
              << " --show-attention \"5 June 1984\"`)\n";
  });
}

}  // namespace attn::cli
