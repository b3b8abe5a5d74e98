// `attn eval`, `translate`, `heatmap` and `graph`: using a trained checkpoint.
#include "commands.hpp"
#include "documents.hpp"
#include "language_model.hpp"
#include "scenes.hpp"
#include "speech.hpp"
#include "explore_page.hpp"
#include "output.hpp"

#include "../viz/heads.hpp"
#include "../viz/spectrogram.hpp"

#include <xtensor/xview.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <numeric>

namespace attn::cli {

std::size_t decode_limit(const nlohmann::json& model_config, std::size_t src_len) {
  const std::size_t limit = 2 * src_len + 10;
  if (model_config.value("model", "") != "transformer") return limit;
  return std::min(limit, model_config.value("max_len", limit));
}

std::vector<models::Hypothesis> translate(Run& run, const std::vector<data::Tokens>& sentences, std::size_t beam) {
  models::DecodeOptions options;
  options.beam_size = beam;
  return translate(run, sentences, options);
}

std::vector<models::Hypothesis> translate(Run& run, const std::vector<data::Tokens>& sentences,
                                          models::DecodeOptions options) {
  std::vector<data::Example> examples;
  for (const auto& s : sentences) {
    if (s.empty()) throw ValueError("translate: an input sentence is empty");
    for (std::size_t i = 0; i < s.size(); ++i)  // make_batch reads them as <unk>, as eval does
      if (!run.src_vocab.contains(s[i]))
        std::cerr << "note: '" << s[i] << "' is not in the model's source vocabulary: read as <unk>\n";
    examples.push_back({s, {"x"}, {}});
  }
  data::Batch batch = data::make_batch(examples, run.src_vocab, run.tgt_vocab);
  options.max_len = decode_limit(run.config.at("model"), batch.src.shape()[1]);
  run.output_vocab = run.tgt_vocab;
  run.extended = {};
  auto* copying = dynamic_cast<models::CopyingModel*>(run.model.get());
  if (copying && copying->copies()) {
    // A copying model writes over the sentences' extended vocabulary: a source word the target
    // vocabulary lacks comes out as itself, at the id output_vocab gives it.
    run.extended = models::extend_source(sentences, run.tgt_vocab);
    for (const std::string& w : run.extended.extra) run.output_vocab.add(w);
    models::DecoderState state;
    {
      no_grad guard;
      models::detail::EvalScope eval(*run.model);
      state = copying->start_extended(batch.src, batch.src_lengths, run.extended);
    }
    return options.beam_size > 1 ? models::beam_search(*run.model, std::move(state), options)
                                 : models::greedy_decode(*run.model, std::move(state), options);
  }
  return options.beam_size > 1 ? models::beam_search(*run.model, batch.src, batch.src_lengths, options)
                  : models::greedy_decode(*run.model, batch.src, batch.src_lengths, options);
}

xt::xarray<double> attention_of(const models::Hypothesis& h, const std::string& name, std::size_t src_len) {
  Tensor m = models::attention_matrix(h, name);  // [T, S] or [T, H, S]
  xt::xarray<double> a = m.to_array();
  if (a.dimension() == 3) a = xt::mean(a, {1}, xt::evaluation_strategy::immediate);  // average the heads
  return xt::view(a, xt::all(), xt::range(0, src_len));
}

namespace {

// A message from the shared speech path, named by the command the user typed ("heatmap: las transcribes ...").
template <class F>
auto named(const char* command, F&& work) -> decltype(work()) {
  try {
    return work();
  } catch (const ValueError& e) {
    throw ValueError(std::string(command) + ": " + e.what());
  }
}


std::string format_probability(double p) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", p);
  return text;
}

std::vector<std::string> output_labels(const Run& run, const models::Hypothesis& h) {
  std::vector<std::string> labels;
  for (std::int64_t id : h.tokens) labels.push_back(run.output_vocab.token(id));
  return labels;
}

// Attention over subwords, [rows, cols] or [H, rows, cols], and its labels, made attention
// over words (cli/bpe.hpp: a word's row is the mean of its pieces' rows, a column the sum).
void merge_subwords(xt::xarray<double>& a, std::vector<std::string>& rows, std::vector<std::string>& cols) {
  if (a.dimension() == 2) {
    a = merge_subword_attention(a, rows, cols);
  } else {
    const std::size_t heads = a.shape()[0];
    xt::xarray<double> merged;
    for (std::size_t h = 0; h < heads; ++h) {
      const xt::xarray<double> one = merge_subword_attention(xt::view(a, h, xt::all(), xt::all()), rows, cols);
      if (h == 0) merged = xt::zeros<double>({heads, one.shape()[0], one.shape()[1]});
      xt::view(merged, h, xt::all(), xt::all()) = one;
    }
    a = merged;
  }
  rows = data::Bpe::decode(rows);
  cols = data::Bpe::decode(cols);
}

}  // namespace

std::map<std::string, Tensor> teacher_forced_attention(Run& run, const data::Tokens& input, const models::Hypothesis& h) {
  data::Batch batch = data::make_batch({data::Example{input, {"x"}, {}}}, run.src_vocab, run.tgt_vocab);
  Index tgt_in = Index::from_shape({1, h.tokens.size()});  // <bos> + every output token but the last: [1, T]
  tgt_in(0, 0) = data::Vocab::bos_id;
  for (std::size_t t = 1; t < h.tokens.size(); ++t) tgt_in(0, t) = h.tokens[t - 1];
  no_grad guard;
  run.model->eval();
  auto* copying = dynamic_cast<models::CopyingModel*>(run.model.get());
  if (copying && copying->copies()) {  // the output's words back to this sentence's extended ids
    const models::ExtendedSource ext = models::extend_source({input}, run.tgt_vocab);
    for (std::size_t t = 1; t < h.tokens.size(); ++t)
      tgt_in(0, t) = ext.encode({run.output_vocab.token(h.tokens[t - 1])}, run.tgt_vocab, 0).front();
    copying->forward_extended(batch.src, batch.src_lengths, tgt_in, ext);
    return run.model->last_attention();
  }
  run.model->forward(batch.src, batch.src_lengths, tgt_in);
  return run.model->last_attention();
}

// The sources of an input as the model's attentions read them: for multi-source, one per
// source ("source.k" reads part k of the packed row), else the input under the main attention.
std::vector<std::pair<std::string, data::Tokens>> attended_sources(const Run& run, const data::Tokens& input) {
  if (run.model_name() != "multi-source") return {{run.model->main_attention(), input}};
  std::vector<std::pair<std::string, data::Tokens>> parts{{"source.0", {}}};
  for (const std::string& token : input) {
    if (token == data::kSeparator) parts.push_back({"source." + std::to_string(parts.size()), {}});
    else parts.back().second.push_back(token);
  }
  return parts;
}

// The words of an output, as a user reads them.
std::string output_text(const Run& run, const models::Hypothesis& h) {
  return detokenize(run.config.at("task"), words_of(run.output_vocab.decode(h.tokens), run.codes()));
}

namespace {

// The held-out sentences decoded by beam search, in evaluate()'s order (by source length,
// batches of 64), as Predictions that word_scores reads like greedy ones.
std::vector<models::Prediction> beam_predictions(Run& run, const std::vector<data::Example>& examples,
                                                 models::DecodeOptions options) {
  no_grad guard;
  run.model->eval();
  std::vector<std::size_t> order(examples.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return examples[a].src.size() < examples[b].src.size(); });
  std::vector<models::Prediction> out;
  const std::size_t batch_size = 64;
  for (std::size_t first = 0; first < order.size(); first += batch_size) {
    const std::vector<std::size_t> indices(order.begin() + static_cast<long>(first),
                                           order.begin() + static_cast<long>(std::min(first + batch_size, order.size())));
    const data::Batch batch = data::make_batch(examples, indices, run.src_vocab, run.tgt_vocab);
    auto* copying = dynamic_cast<models::CopyingModel*>(run.model.get());
    if (copying && copying->copies()) {  // as evaluate() decodes it: over the batch's extended vocabulary
      const models::ExtendedBatch ext = models::extended_batch(batch, examples, run.tgt_vocab);
      const std::vector<models::Ids> ids = models::hypothesis_tokens(
          models::beam_search(*run.model, copying->start_extended(batch.src, batch.src_lengths, ext.source), options));
      for (std::size_t i = 0; i < indices.size(); ++i) out.push_back({indices[i], ext.source.decode(ids[i], run.tgt_vocab)});
      continue;
    }
    const std::vector<models::Ids> ids =
        models::hypothesis_tokens(models::beam_search(*run.model, batch.src, batch.src_lengths, options));
    for (std::size_t i = 0; i < indices.size(); ++i) out.push_back({indices[i], run.tgt_vocab.decode(ids[i])});
  }
  return out;
}

}  // namespace

void add_eval_command(CLI::App& app) {
  struct Options {
    std::string dir, predictions;
    bool overwrite = false;
    std::uint64_t beam = 1;
    double alpha = 0.0;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("eval", "Evaluate a checkpoint on its task's held-out set");
  cmd->add_option("--checkpoint", o->dir, "a directory written by attn train")->required();
  cmd->add_option("--predictions", o->predictions,
                  "also write FILE.tsv: source<TAB>reference<TAB>output per line (a new file unless --overwrite)");
  cmd->add_flag("--overwrite", o->overwrite, "replace the --predictions file if it exists");
  add_count(cmd, "--beam", o->beam, 1, 64, "decode with beam search of this size (1: greedy)");
  add_real(cmd, "--length-penalty", o->alpha, Bounds{0.0, 10.0},
           "with --beam: GNMT's alpha, score = log p / ((5 + |Y|) / 6)^alpha (0: plain log p)");
  cmd->callback([o, cmd] {
    const std::string* dir = &o->dir;
    const Output predictions{"--predictions", o->predictions, o->overwrite};
    if (cmd->count("--predictions")) check_output(predictions, {}, {*dir});  // before the run is even read
    Run run = load_run(*dir);
    if (run.is_grid()) {
      if (o->beam > 1) throw ValueError("eval: the grid captioner decodes greedily only (no --beam)");
      return eval_grid(run, o->predictions, o->overwrite, *dir);
    }
    if (run.is_classifier()) {
      if (o->beam > 1 || o->alpha > 0)
        throw ValueError("eval: a document classifier does not decode (no --beam, no --length-penalty)");
      return eval_documents(run, o->predictions, o->overwrite, *dir);
    }
    if (run.is_language_model()) {
      if (o->beam > 1 || o->alpha > 0)
        throw ValueError("eval: a language model is scored by its perplexity; it does not decode (no --beam, no "
                         "--length-penalty)");
      return eval_language_model(run, o->predictions, o->overwrite, *dir);
    }
    if (run.is_image_captioner()) {
      if (o->alpha > 0) throw ValueError("eval: --length-penalty does not apply to show-attend-tell (give --beam only)");
      return eval_scenes(run, o->beam, o->predictions, o->overwrite, *dir);
    }
    if (run.is_speller()) {
      if (o->alpha > 0) throw ValueError("eval: --length-penalty does not apply to las (give --beam only)");
      return eval_speech(run, o->beam, o->predictions, o->overwrite, *dir);
    }
    if (o->alpha > 0 && o->beam < 2)
      throw ValueError("eval: --length-penalty ranks beam search's outputs: add --beam 2 or more");
    TaskData task;
    try {
      task = make_task(run.config.at("task"), run.config.at("seed").get<std::uint64_t>(), "task", run.codes());
    } catch (const std::exception& e) {
      throw IOError(*dir + "/checkpoint/config.json: its task cannot be rebuilt: " + e.what());
    }
    // As --resume: the vocabulary the data gives now must be the run's, or its test pairs are not the run's
    // (the corpus' checksum is checked by make_task, so a difference here means the codes were changed).
    if (task.src_vocab.to_json() != run.src_vocab.to_json() || task.tgt_vocab.to_json() != run.tgt_vocab.to_json())
      throw IOError(*dir + "/checkpoint/vocab.json: differs from the vocabulary of the task's data as it is now (" +
                    (run.has_bpe ? "the corpus is unchanged (its checksum matches), so " + *dir +
                                       "/checkpoint/bpe.codes was changed since the run was trained: restore it"
                                 : std::string("was the corpus file changed since the run was trained?")) +
                    "); eval would score other test pairs than the run's");
    models::EvaluateOptions options;
    options.keep_predictions = true;  // scored on words (cli/word_scores.hpp)
    std::size_t longest = 0;
    for (const auto& example : task.split.test) longest = std::max(longest, example.src.size());
    options.max_len = decode_limit(run.config.at("model"), longest);
    models::Evaluation e = models::evaluate(*run.model, task.split.test, run.src_vocab, run.tgt_vocab, options);
    if (o->beam > 1) {  // the outputs scored (and written) are beam search's; loss and token accuracy stay greedy's
      models::DecodeOptions decode;
      decode.beam_size = o->beam;
      decode.max_len = options.max_len;
      if (o->alpha > 0) decode.length_penalty = models::LengthPenalty::GNMT;
      decode.alpha = o->alpha;
      e.predictions = beam_predictions(run, task.split.test, decode);
    }
    const WordScores w = word_scores(e, task.split.test, run.codes());
    if (o->beam > 1)
      std::printf("%zu test sentences, beam search %llu (length penalty %g): exact match %.1f%%, BLEU %.2f, loss %.4f\n",
                  w.overall.sentences, static_cast<unsigned long long>(o->beam), o->alpha,
                  100 * w.overall.exact_match(), w.overall.bleu_percent(), e.loss);
    else
      std::printf("%zu test sentences: exact match %.1f%%, token accuracy %.1f%%, BLEU %.2f, loss %.4f\n",
                  w.overall.sentences, 100 * w.overall.exact_match(), 100 * e.overall.token_accuracy(),
                  w.overall.bleu_percent(), e.loss);
    if (e.alignment.steps)
      std::printf("attention peak on the gold source position: %.1f%% of %zu steps\n", 100 * e.alignment.hit_rate(),
                  e.alignment.steps);
    std::printf("source length  sentences  exact match   BLEU\n");
    for (const auto& [len, c] : w.by_length)
      std::printf("%13zu  %9zu  %10.1f%%  %5.2f\n", len, c.sentences, 100 * c.exact_match(), c.bleu_percent());
    if (!o->predictions.empty()) {
      std::string text;
      const nlohmann::json& task_config = run.config.at("task");
      for (const models::Prediction& p : e.predictions) {
        const data::Example& example = task.split.test[p.index];
        text += detokenize(task_config, words_of(example.src, run.codes())) + "\t" +
                detokenize(task_config, words_of(example.tgt, run.codes())) + "\t" +
                detokenize(task_config, words_of(p.hypothesis, run.codes())) + "\n";
      }
      std::vector<Input> corpora;  // the run's corpus files: --predictions must not replace them
      for (const char* key : {"file", "test_file"})
        if (task_config.contains(key) && task_config.at(key).is_string() && !task_config.at(key).get<std::string>().empty())
          corpora.push_back({task_config.at(key).get<std::string>(), "the run's corpus"});
      write_output(predictions, text, corpora, {*dir});
      std::printf("wrote %s\n", o->predictions.c_str());
    }
  });
}

void add_translate_command(CLI::App& app) {
  struct Options {
    std::string dir;
    std::uint64_t beam = 1;
    double alpha = 0.0, beta = 0.0;
    bool show = false;
    std::vector<std::string> texts;
    std::string voice;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("translate", "Decode sentences with a checkpoint");
  cmd->add_option("--checkpoint", o->dir, "a run folder written by attn train (attn demo's: out/demo/run)")->required();
  add_count(cmd, "--beam", o->beam, 1, 64, "beam size (1: greedy)");
  add_real(cmd, "--length-penalty", o->alpha, Bounds{0.0, 10.0},
           "with --beam: GNMT's alpha, score = log p / ((5 + |Y|) / 6)^alpha (0: plain log p)");
  add_real(cmd, "--coverage-penalty", o->beta, Bounds{0.0, 10.0},
           "with --beam: GNMT's beta, score + beta * sum_i log min(attention on word i, 1) (0: off)");
  cmd->add_flag("--show-attention", o->show, "print each translation's attention as a terminal heatmap");
  cmd->add_option("--voice", o->voice,
                  "las: the espeak-ng voice that speaks the texts, LANGUAGE or LANGUAGE+VARIANT (default: en-us+" +
                      data::held_out_variants().front() + ", a voice never heard in training)");
  cmd->add_option("text", o->texts, "the sentences (for the grid captioner: scenes, e.g. \"red square top left\"; for "
                                    "las: texts of at most 200 characters, spoken by espeak-ng)")
      ->required();
  cmd->callback([o, cmd] {
    if (cmd->count("--voice") && o->voice.empty())  // not the default voice in silence
      throw ValueError("--voice: expected LANGUAGE or LANGUAGE+VARIANT, e.g. en-us+f2, got an empty value (leave "
                       "--voice out for the default)");
    Run run = load_run(o->dir);
    refuse_language_model(run, "translate", o->dir);
    refuse_image_captioner(run, "translate", o->dir);
    if (cmd->count("--voice") && !run.is_speller())
      throw ValueError("translate: --voice is for a run of las (speech); " + o->dir + " holds " + run.model_name());
    if (run.is_speller()) {  // each text spoken by espeak-ng, then transcribed
      if (o->alpha > 0 || o->beta > 0)
        throw ValueError("translate: --length-penalty and --coverage-penalty do not apply to las (give --beam only)");
      for (const auto& text : o->texts) {
        const Transcription t = named("translate", [&] { return transcribe_text(run, text, o->voice, o->beam); });
        std::cout << text << " (" << audio::voice_name(t.spoken.voice) << ", " << t.spoken.features.shape()[0]
                  << " frames)  ->  " << t.transcript << "\n";
        if (o->show) {
          std::vector<std::string> states;
          for (std::size_t u = 0; u < t.attention.shape()[1]; ++u) states.push_back(std::to_string(u));
          std::cout << viz::terminal_heatmap(t.attention, t.characters, states) << "\n";
        }
      }
      return;
    }
    if (run.is_classifier())
      throw ValueError("translate: " + o->dir + " holds a document classifier (" + run.model_name() +
                       "): classify pages with attn classify --checkpoint " + o->dir + " PAGE.txt");
    if (run.is_grid()) {  // the texts are scenes, captioned greedily
      if (o->beam > 1) throw ValueError("translate: the grid captioner decodes greedily only (no --beam)");
      for (const auto& scene : o->texts) {
        const GridCaption caption = caption_scene(run, scene);
        std::cout << scene << "  ->  " << caption.text << "\n";
        if (o->show) std::cout << viz::terminal_grids(caption.attention, caption.words) << "\n";
      }
      return;
    }
    std::vector<data::Tokens> inputs;
    for (const auto& t : o->texts) inputs.push_back(tokenize(run.config.at("task"), t, run.codes()));
    if ((o->alpha > 0 || o->beta > 0) && o->beam < 2)
      throw ValueError("translate: --length-penalty and --coverage-penalty rank beam search's outputs: add --beam 2 or more");
    models::DecodeOptions options;
    options.beam_size = o->beam;
    if (o->alpha > 0) options.length_penalty = models::LengthPenalty::GNMT;
    options.alpha = o->alpha;
    options.coverage_penalty = o->beta;
    auto hyps = translate(run, inputs, options);
    for (std::size_t i = 0; i < hyps.size(); ++i) {
      std::cout << o->texts[i] << "  ->  " << output_text(run, hyps[i]) << "\n";
      if (o->show && !run.model->main_attention().empty())
        for (const auto& [name, source] : attended_sources(run, inputs[i])) {  // multi-source: one per source
          xt::xarray<double> a = attention_of(hyps[i], name, source.size());
          std::vector<std::string> rows = output_labels(run, hyps[i]), cols = source;
          if (run.has_bpe) merge_subwords(a, rows, cols);  // on words, as heatmap draws by default
          std::cout << viz::terminal_heatmap(a, rows, cols) << "\n";
        }
    }
  });
}

namespace {

// Which of the Transformer's attentions `heatmap --attention` draws, by layer and head.
struct LayerChoice {
  std::string kind = "cross";        // "cross", "decoder-self" or "encoder-self"
  std::uint64_t layer = 0, head = 0;
  bool has_layer = false, has_head = false;
};

// The Transformer's attention of one sentence at a layer: the output decoded (as `decode` says),
// then run once more teacher-forced (the same weights in eval mode), so that forward()
// gives every layer and head at once. Writes one head, or all heads of the layer as a grid.
std::string transformer_heatmap(Run& run, const std::string& text, const LayerChoice& c, bool merge,
                                const models::DecodeOptions& decode) {
  const data::Tokens input = tokenize(run.config.at("task"), text, run.codes());
  const models::Hypothesis h = translate(run, {input}, decode).front();
  const nlohmann::json& m = run.config.at("model");
  const bool encoder = c.kind == "encoder-self";
  const std::uint64_t layers = m.at(encoder ? "num_encoder_layers" : "num_decoder_layers").get<std::uint64_t>();
  const std::uint64_t heads = m.at("nhead").get<std::uint64_t>();
  const std::uint64_t layer = c.has_layer ? c.layer : layers - 1;  // the last layer by default
  if (layer >= layers)
    throw ValueError("heatmap: --layer " + std::to_string(layer) + " is out of range: this Transformer has " +
                     std::to_string(layers) + (encoder ? " encoder" : " decoder") + " layers (--layer 0.." +
                     std::to_string(layers - 1) + ")");
  if (c.has_head && c.head >= heads)
    throw ValueError("heatmap: --head " + std::to_string(c.head) + " is out of range: this Transformer has " +
                     std::to_string(heads) + " heads (--head 0.." + std::to_string(heads - 1) + ")");
  const std::map<std::string, Tensor> all = teacher_forced_attention(run, input, h);
  const std::string name = (encoder ? "encoder." : "decoder.") + std::to_string(layer) +
                           (c.kind == "cross" ? ".cross" : ".self");
  xt::xarray<double> a = xt::view(all.at(name).to_array(), 0, xt::all(), xt::all(), xt::all());  // [H, rows, cols]
  std::vector<std::string> outputs = output_labels(run, h), inputs_so_far = {"<bos>"};
  for (std::size_t t = 0; t + 1 < outputs.size(); ++t) inputs_so_far.push_back(outputs[t]);
  // Rows attend to columns: source to source, output to the decoder's inputs, output to source.
  std::vector<std::string> rows = encoder ? input : outputs;
  std::vector<std::string> cols = c.kind == "decoder-self" ? inputs_so_far : input;
  if (merge) merge_subwords(a, rows, cols);
  viz::HeatmapOptions options;
  options.title = text + "  ->  " + output_text(run, h) + "  (" + c.kind + " attention, layer " +
                  std::to_string(layer) + (c.has_head ? ", head " + std::to_string(c.head) : "") + ")";
  options.x_label = c.kind == "decoder-self" ? "decoder input" : "source";
  options.y_label = encoder ? "source" : "output";
  if (c.has_head) return viz::heatmap_svg(xt::xarray<double>(xt::view(a, c.head, xt::all(), xt::all())), rows, cols, options);
  return viz::heads_svg(a, rows, cols, options);
}

// Do two output names name one file (the same path, or another name of it)?
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (std::filesystem::equivalent(a, b, ec)) return true;  // an existing file under two names
  const auto first = std::filesystem::weakly_canonical(a, ec);
  if (ec) return false;
  const auto second = std::filesystem::weakly_canonical(b, ec);
  return !ec && first == second;
}

}  // namespace

void add_heatmap_command(CLI::App& app) {
  struct Options {
    std::string dir, text, out, html;
    LayerChoice choice;
    bool overwrite = false, merge = true;
    std::uint64_t beam = 1;
    double alpha = 0.0, beta = 0.0;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "heatmap", "Write the attention of one translation as an SVG heatmap (--out), an HTML explorer (--html), or both");
  cmd->add_option("--checkpoint", o->dir, "a run folder written by attn train (attn demo's: out/demo/run)")->required();
  cmd->add_option("--out", o->out,
                  "the SVG file to write (a new file unless --overwrite); --out, --html or both (decoded alike)");
  cmd->add_option("--html", o->html,
                  "the HTML page to write (a new file unless --overwrite): one self-contained document, nothing "
                  "fetched, exploring every layer and head of the model and its decoding step by step (beam search's "
                  "hypotheses with --beam); translation models and las. With --out, both are written, decoded alike");
  cmd->add_flag("--overwrite", o->overwrite, "replace --out and --html if they exist");
  add_count(cmd, "--beam", o->beam, 1, 64, "decode with beam search of this size (1: greedy), as translate does");
  add_real(cmd, "--length-penalty", o->alpha, Bounds{0.0, 10.0},
           "with --beam: GNMT's alpha, score = log p / ((5 + |Y|) / 6)^alpha (0: plain log p)");
  add_real(cmd, "--coverage-penalty", o->beta, Bounds{0.0, 10.0},
           "with --beam: GNMT's beta, score + beta * sum_i log min(attention on word i, 1) (0: off)");
  cmd->add_option("--attention", o->choice.kind,
                  "Transformer, --out: cross (default), decoder-self or encoder-self (--html shows them all)")
      ->check(CLI::IsMember({"cross", "decoder-self", "encoder-self"}));
  add_count(cmd, "--layer", o->choice.layer, 0, 1000,
            "Transformer, --out: the layer to draw, from 0 (default: the last)")
      ->default_str("");  // the last layer: known only once the run is read
  add_count(cmd, "--head", o->choice.head, 0, 1000,
            "Transformer, --out: the head to draw, from 0 (default: every head of the layer, as a grid)")
      ->default_str("");
  add_switch(cmd, "--merge-subwords", "--no-merge-subwords", o->merge,
             "a run trained with --bpe: draw words, a word's row the mean of its pieces' rows and its column the "
             "sum of its pieces' columns (--no-merge-subwords draws the subwords); --html's decoding steps stay one "
             "piece each, weighing the source words");
  cmd->add_option("text", o->text,
                  "the sentence (for the grid captioner: a scene, e.g. \"red square top left\"; for a document "
                  "classifier: a page's text file of at most 8 MB; for las: a text of at most 200 characters)")
      ->required();
  cmd->callback([o, cmd] {
    const bool want_svg = cmd->count("--out") > 0, want_html = cmd->count("--html") > 0;
    if (!want_svg && !want_html) throw ValueError("heatmap: give --out FILE.svg, --html FILE.html, or both");
    const Output out{"--out", o->out, o->overwrite}, html{"--html", o->html, o->overwrite};
    std::vector<Input> pages;  // a document classifier's page is a file the command reads
    std::error_code ec;
    if (std::filesystem::is_regular_file(o->text, ec)) pages.push_back({o->text, "the page it reads"});
    if (want_svg) check_output(out, pages, {o->dir});
    if (want_html) check_output(html, pages, {o->dir});
    if (want_svg && want_html && same_file(o->out, o->html))
      throw ValueError("heatmap: --out " + o->out + " and --html " + o->html + " name the same file; give two files");
    if (want_svg) check_extension(out, {".svg"}, "an SVG picture");
    if (want_html) check_extension(html, {".html", ".htm"}, "an HTML page");
    Run run = load_run(o->dir);
    refuse_language_model(run, "heatmap", o->dir);
    refuse_image_captioner(run, "heatmap", o->dir);
    o->choice.has_layer = cmd->count("--layer") > 0;
    o->choice.has_head = cmd->count("--head") > 0;
    const bool by_layer = o->choice.has_layer || o->choice.has_head || cmd->count("--attention") > 0;
    if ((cmd->count("--merge-subwords") || cmd->count("--no-merge-subwords")) && !run.has_bpe)
      throw ValueError("heatmap: --merge-subwords and --no-merge-subwords are for a run trained with --bpe; " + o->dir +
                       " was trained on words");
    const bool merge = run.has_bpe && o->merge;
    if (by_layer && run.model_name() != "transformer")
      throw ValueError("heatmap: --attention, --layer and --head choose among the Transformer's layers and heads; "
                       "this model (" + run.model_name() + ") is not a Transformer: leave them out");
    if (by_layer && !want_svg)
      throw ValueError("heatmap: --attention, --layer and --head choose what --out draws; --html shows every layer "
                       "and head: leave them out, or add --out FILE.svg");
    if (want_html && (run.is_grid() || run.is_classifier()))  // they decode no sentence to explore
      throw ValueError("heatmap: --html explores the decoding of a translation model or of las; " + o->dir +
                       " holds " + (run.is_grid() ? "the grid captioner (grid)" : "a document classifier (" +
                       run.model_name() + ")") + ": draw it with --out FILE.svg");
    if ((run.is_grid() || run.is_classifier()) && (o->beam > 1 || o->alpha > 0 || o->beta > 0))
      throw ValueError("heatmap: --beam, --length-penalty and --coverage-penalty are for a model that decodes "
                       "sentences; this model (" + run.model_name() + ") " +
                       (run.is_grid() ? "decodes greedily only" : "does not decode"));
    if (run.is_speller() && (o->alpha > 0 || o->beta > 0))
      throw ValueError("heatmap: --length-penalty and --coverage-penalty do not apply to las (give --beam only)");
    if ((o->alpha > 0 || o->beta > 0) && o->beam < 2)
      throw ValueError("heatmap: --length-penalty and --coverage-penalty rank beam search's outputs: add --beam 2 or more");
    models::DecodeOptions decode;  // as translate decodes
    decode.beam_size = o->beam;
    if (o->alpha > 0) decode.length_penalty = models::LengthPenalty::GNMT;
    decode.alpha = o->alpha;
    decode.coverage_penalty = o->beta;

    // Both files are made before either is written: a failure writes neither.
    std::vector<Input> svg_inputs;  // what --out must not replace besides the run
    auto svg_text = [&]() -> std::string {
      if (run.is_speller()) {  // each character's weights over the listener states, under the spectrogram
        const Transcription t = named("heatmap", [&] { return transcribe_text(run, o->text, "", o->beam); });
        viz::SpectrogramOptions options;
        options.title = "\"" + o->text + "\" (" + audio::voice_name(t.spoken.voice) + ")  ->  " + t.transcript;
        const std::size_t frames_per_state = std::size_t(1) << run.speller->config.pyramid_layers;
        return viz::alignment_over_spectrogram_svg(t.spoken.features, t.attention, t.characters, frames_per_state,
                                                   options);
      }
      if (run.is_classifier()) {  // the page as text: sentence bars and words shaded by their weight
        const PageReading r = read_page(run, o->text);
        viz::AttentionTextOptions options;
        options.title = visible_text(o->text + ": " + run.classes.at(r.predicted)) + " (p = " +
                        format_probability(r.probabilities[r.predicted]) + ")";
        if (r.sentence_weights.dimension() != 1)  // a default xarray is 0-dimensional (and holds one value)
          throw ValueError("heatmap: this model (" + run.model_name() + ") has no " +
                           (r.word_weights.dimension() == 1 ? "sentence attention to draw the page with; train --model han"
                                                            : "attention to draw"));
        svg_inputs.push_back({o->text, "the page it reads"});
        std::vector<data::Tokens> sentences = r.page.sentences;  // a page's ESC or NUL is no XML
        for (data::Tokens& sentence : sentences)
          for (std::string& word : sentence) word = visible_text(word);
        return viz::attention_text_svg(sentences, r.sentence_weights, r.word_weights, options);
      }
      if (run.is_grid()) {  // where the captioner looked for each word, one 3x3 grid per word
        const GridCaption caption = caption_scene(run, o->text);
        viz::HeatmapOptions options;
        options.title = o->text + "  ->  " + caption.text;
        return viz::attention_grids_svg(caption.attention, caption.words, options);
      }
      if (by_layer) return transformer_heatmap(run, o->text, o->choice, merge, decode);
      const std::string name = run.model->main_attention();
      if (name.empty()) throw ValueError("heatmap: this model (" + run.model->type_name() + ") has no attention to draw");
      const data::Tokens input = tokenize(run.config.at("task"), o->text, run.codes());
      auto h = translate(run, {input}, decode).front();
      viz::HeatmapOptions options;
      options.title = o->text + "  ->  " + output_text(run, h);
      const data::Tokens source = attended_sources(run, input).front().second;  // multi-source: the first source's
      if (run.model_name() == "multi-source") options.title += "  (attention over the first source)";
      xt::xarray<double> a = attention_of(h, name, source.size());
      std::vector<std::string> rows = output_labels(run, h), cols = source;
      if (merge) merge_subwords(a, rows, cols);
      return viz::heatmap_svg(a, rows, cols, options);
    };
    const std::string svg = want_svg ? svg_text() : "";
    const std::string page = want_html ? explorer_page(run, o->text, decode, merge) : "";
    if (want_svg) {
      write_output(out, svg, svg_inputs, {o->dir});
      std::cout << "wrote " << o->out << "\n";
    }
    if (want_html) {
      write_output(html, page, pages, {o->dir});
      std::cout << "wrote " << o->html << "\n";
    }
  });
}

void add_classify_command(CLI::App& app) {
  struct Options {
    std::string dir;
    bool show = false;
    std::vector<std::string> files;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("classify", "Classify pages (text files) with a document classifier's checkpoint");
  cmd->add_option("--checkpoint", o->dir, "a run of --model han, flat-attention or bag-of-words")->required();
  cmd->add_flag("--show-attention", o->show,
                "han: print every sentence with its weight and its three most weighed words");
  cmd->add_option("pages", o->files,
                  "text files of at most 8 MB, one page each, paragraphs separated by blank lines; the pinned corpus "
                  "holds each manual "
                  "page's DESCRIPTION, so save that part: MANWIDTH=78 man --nh --nj -P cat tar | sed -n "
                  "'/^DESCRIPTION/,/^[A-Z]/{//!p}' > tar.txt")
      ->required();
  cmd->callback([o] {
    Run run = load_run(o->dir);
    refuse_language_model(run, "classify", o->dir);
    refuse_image_captioner(run, "classify", o->dir);
    if (!run.is_classifier())
      throw ValueError("classify: " + o->dir + " holds a " + run.model_name() +
                       " model, not a document classifier; decode sentences with attn translate");
    for (const std::string& file : o->files) {
      const PageReading r = read_page(run, file);
      std::cout << visible_text(file) << "  ->  " << visible_text(run.classes.at(r.predicted)) << " (p = "
                << format_probability(r.probabilities[r.predicted]) << "; ";
      for (std::size_t c = 0; c < r.probabilities.size(); ++c)
        std::cout << (c ? ", " : "") << visible_text(run.classes.at(c)) << ": " << format_probability(r.probabilities[c]);
      std::cout << ")\n";
      if (r.sentence_weights.dimension() != 1) {  // han only: the baselines have no sentences to weigh
        if (o->show) std::cerr << "note: --show-attention: " << run.model_name() << " weighs no sentences (han does)\n";
        continue;
      }
      const std::size_t top = std::size_t(std::max_element(r.sentence_weights.begin(), r.sentence_weights.end()) - r.sentence_weights.begin());
      std::cout << "  most weighed sentence (" << format_probability(r.sentence_weights(top)) << "): "
                << visible_text(data::join(r.page.sentences[top])) << "\n";
      if (!o->show) continue;
      for (std::size_t s = 0; s < r.page.sentences.size(); ++s) {
        const data::Tokens& words = r.page.sentences[s];
        std::vector<std::size_t> order(words.size());
        std::iota(order.begin(), order.end(), 0);
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
          return r.word_weights(s, a) > r.word_weights(s, b);
        });
        std::cout << "  [" << s << "] " << format_probability(r.sentence_weights(s)) << "  ";
        for (std::size_t k = 0; k < std::min<std::size_t>(3, order.size()); ++k)
          std::cout << (k ? ", " : "") << visible_text(words[order[k]]) << " "
                    << format_probability(r.word_weights(s, order[k]));
        std::cout << "\n";
      }
    }
  });
}

void add_graph_command(CLI::App& app) {
  auto out = std::make_shared<std::string>();
  auto overwrite = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("graph", "Draw the computation graph of a tiny MLP and its loss (DOT, or SVG)");
  cmd->add_option("--out", *out, "FILE.dot or FILE.svg (default: DOT on standard output; a new file unless --overwrite)");
  cmd->add_flag("--overwrite", *overwrite, "replace --out if it exists");
  cmd->callback([out, overwrite] {
    const Output file{"--out", *out, *overwrite};
    if (!out->empty()) check_output(file, {}, {});
    if (!out->empty()) check_extension(file, {".dot", ".gv", ".svg"}, "DOT text (.dot, .gv) or an SVG picture (.svg)");
    manual_seed(0);
    nn::Linear fc1(2, 3), fc2(3, 1);
    Tensor x = tensor(xt::xarray<double>{{0.5, -1.0}});
    Tensor target = ones({1, 1});
    Tensor loss = nn::mse_loss(fc2(tanh(fc1(x))), target);
    loss.backward(/*retain_graph=*/true);  // keep the graph to draw values and gradients
    const bool svg = has_extension(*out, ".svg");
    const std::string text = svg ? to_svg(loss) : to_dot(loss);
    if (out->empty()) std::cout << text;
    else {
      write_output(file, text);
      std::cout << "wrote " << *out << "\n";
    }
  });
}

}  // namespace attn::cli
