#include "explore_page.hpp"

#include "commands.hpp"
#include "speech.hpp"

#include "../viz/explore.hpp"
#include "../viz/svg.hpp"

#include <xtensor/xview.hpp>

#include <functional>

namespace attn::cli {

namespace {

// One attention [layers, heads, pieces, pieces] made one over words, as heatmap merges (cli/bpe.hpp).
void merge_attention(viz::ExplorerAttention& a) {
  const std::size_t layers = a.weights.shape()[0], heads = a.weights.shape()[1];
  xt::xarray<double> merged;
  for (std::size_t l = 0; l < layers; ++l)
    for (std::size_t h = 0; h < heads; ++h) {
      const xt::xarray<double> one =
          merge_subword_attention(xt::view(a.weights, l, h, xt::all(), xt::all()), a.rows, a.cols);
      if (merged.dimension() != 4) merged = xt::zeros<double>({layers, heads, one.shape()[0], one.shape()[1]});
      xt::view(merged, l, h, xt::all(), xt::all()) = one;
    }
  a.weights = std::move(merged);
  a.rows = data::Bpe::decode(a.rows);
  a.cols = data::Bpe::decode(a.cols);
}

// The decoding steps over source words: a step is still one piece (one decoding step), its row
// a word's weight the sum of its pieces' weights.
void merge_steps(viz::Explorer& e) {
  const auto spans = word_spans(e.source);
  for (viz::ExplorerStep& step : e.steps) {
    std::vector<double> row;
    for (const auto& [first, last] : spans) {
      double sum = 0.0;
      for (std::size_t j = first; j < last; ++j) sum += step.row[j];
      row.push_back(sum);
    }
    step.row = std::move(row);
  }
  e.source = data::Bpe::decode(e.source);
}

// The monotonic model's expected alignment path, from its soft alignment `soft` [1, T, S] when it
// reads the same output under teacher forcing (its decoding rows are hard, one position or none):
// at step t, sum_j j a_tj / sum_j a_tj, over the mass left on the source (a row loses what runs
// past the end); j counts words when `merge` (a word's weight the sum of its pieces').
void soft_path(viz::Explorer& e, const Tensor& soft, bool merge) {
  const xt::xarray<double> a = soft.to_array();
  std::vector<std::pair<std::size_t, std::size_t>> spans;  // [first, last) pieces of each position
  if (merge) spans = word_spans(e.source);
  else
    for (std::size_t j = 0; j < e.source.size(); ++j) spans.emplace_back(j, j + 1);
  for (std::size_t t = 0; t < e.steps.size() && t < a.shape()[1]; ++t) {
    double position = 0.0, mass = 0.0;
    for (std::size_t k = 0; k < spans.size(); ++k)
      for (std::size_t j = spans[k].first; j < spans[k].second && j < a.shape()[2]; ++j) {
        position += double(k) * a(0, t, j);
        mass += a(0, t, j);
      }
    if (mass > 0) e.steps[t].path = position / mass;
  }
}

// Beam search's kept prefixes spelled as the output is (characters joined, subwords merged to
// words, specials such as <eos> shown), where explore_decoding joins tokens with spaces.
void spell_beam(viz::Explorer& e, const models::Hypothesis& h,
                const std::function<std::string(const std::vector<std::int64_t>&)>& spell) {
  for (std::size_t t = 0; t < e.steps.size() && t < h.beam.size(); ++t)
    for (std::size_t i = 0; i < e.steps[t].beam.size() && i < h.beam[t].size(); ++i)
      e.steps[t].beam[i].first = spell(h.beam[t][i].first);
}

// The decoder's inputs that produced `tokens`: <bos>, then every token but the last.
std::vector<std::string> decoder_inputs(const std::vector<std::string>& tokens) {
  std::vector<std::string> inputs = {"<bos>"};
  for (std::size_t t = 0; t + 1 < tokens.size(); ++t) inputs.push_back(tokens[t]);
  return inputs;
}

// A whole page around the explorer's fragment, the title escaped as HTML text.
std::string page(const viz::Explorer& e) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
         viz::escape_xml("attn: " + e.title) +
         "</title>\n<style>body { font-family: sans-serif; margin: 1.5em; }</style>\n</head>\n<body>\n" +
         viz::explorer_html(e) + "</body>\n</html>\n";
}

std::string beam_note(const models::DecodeOptions& options) {
  return options.beam_size > 1 ? ", beam search " + std::to_string(options.beam_size) : ", greedy";
}

// Listen, Attend and Spell: its attention over the listener states, read from the decoding
// itself (teacher-forcing the same output gives the same weights), and its steps.
std::string speller_page(Run& run, const std::string& text, const models::DecodeOptions& options) {
  Transcription t;
  try {
    t = transcribe_text(run, text, "", options.beam_size);
  } catch (const ValueError& e) {  // the shared speech path names no command
    throw ValueError(std::string("heatmap: ") + e.what());
  }
  std::vector<std::string> states;  // the listener states, numbered
  for (std::size_t u = 0; u < t.attention.shape()[1]; ++u) states.push_back(std::to_string(u));
  const xt::xarray<double> weights = xt::view(t.attention, xt::newaxis(), xt::all(), xt::all());  // [1, L, U]
  viz::Explorer e = viz::explore({{"attention", tensor(weights)}}, states, decoder_inputs(t.characters));
  viz::Explorer steps = viz::explore_decoding(t.hypothesis, states, run.tgt_vocab);
  spell_beam(steps, t.hypothesis, [&run](const std::vector<std::int64_t>& ids) {
    std::string text;
    for (std::int64_t id : ids) text += run.tgt_vocab.token(id);
    return text;
  });
  e.steps = steps.steps;
  e.source = steps.source;
  e.title = "\"" + text + "\" (" + audio::voice_name(t.spoken.voice) + ")  ->  " + t.transcript + "  (las" +
            beam_note(options) + ")";
  return page(e);
}

}  // namespace

std::string explorer_page(Run& run, const std::string& text, const models::DecodeOptions& options, bool merge) {
  if (run.is_speller()) return speller_page(run, text, options);
  if (!run.model)  // the grid captioner and the document classifiers: inspect.cpp names them first
    throw ValueError("heatmap: --html is for translation models and las; this model (" + run.model_name() +
                     ") does not decode a sentence");
  const std::string main = run.model->main_attention();
  if (main.empty())
    throw ValueError("heatmap: --html: this model (" + run.model_name() + ") has no attention to show");
  const data::Tokens input = tokenize(run.config.at("task"), text, run.codes());
  const models::Hypothesis h = translate(run, {input}, options).front();

  // The same weights in eval mode, teacher-forced with the output: every layer and head at once.
  const std::map<std::string, Tensor> all = teacher_forced_attention(run, input, h);
  std::vector<std::string> outputs;
  for (std::int64_t id : h.tokens) outputs.push_back(run.output_vocab.token(id));
  const std::vector<std::string> queries = decoder_inputs(outputs);

  viz::Explorer e;
  const auto sources = attended_sources(run, input);
  if (run.model_name() == "multi-source") {  // each source's attention over its own tokens, and the shares
    std::vector<std::string> names;
    for (const auto& [name, source] : sources) {
      const viz::Explorer one = viz::explore({{name, all.at(name)}}, source, queries);
      e.attentions.insert(e.attentions.end(), one.attentions.begin(), one.attentions.end());
      names.push_back(name);
    }
    if (all.count("share")) {
      const viz::Explorer share = viz::explore({{"share", all.at("share")}}, names, queries);
      e.attentions.insert(e.attentions.end(), share.attentions.begin(), share.attentions.end());
    }
  } else {
    e = viz::explore(*run.model, input, queries);
  }
  viz::DecodingView view;
  view.attention = main;
  const data::Tokens& first = sources.front().second;  // multi-source: the steps weigh the first source
  viz::Explorer steps = viz::explore_decoding(h, first, run.output_vocab, view);
  if (run.model_name() == "monotonic") soft_path(steps, all.at("attention"), merge);  // before merge_steps
  spell_beam(steps, h, [&run, merge](const std::vector<std::int64_t>& ids) {
    data::Tokens tokens;
    for (std::int64_t id : ids) tokens.push_back(run.output_vocab.token(id));
    return detokenize(run.config.at("task"), merge ? data::Bpe::decode(tokens) : tokens);
  });
  if (merge) {
    for (viz::ExplorerAttention& a : e.attentions) merge_attention(a);  // (the shares' columns stay the sources)
    merge_steps(steps);
  }
  e.steps = std::move(steps.steps);
  e.source = std::move(steps.source);
  e.title = text + "  ->  " + output_text(run, h) + "  (" + run.model_name() + beam_note(options) +
            (sources.size() > 1 ? "; the steps weigh the first source" : "") + ")";
  return page(e);
}

}  // namespace attn::cli
