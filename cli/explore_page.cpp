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
    if (step.path) {  // the expected position, counted in words like the row
      double position = 0.0;
      for (std::size_t j = 0; j < step.row.size(); ++j) position += double(j) * step.row[j];
      step.path = position;
    }
  }
  e.source = data::Bpe::decode(e.source);
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
  const Transcription t = transcribe_text(run, text, "", options.beam_size);
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
  data::Batch batch = data::make_batch({data::Example{input, {"x"}, {}}}, run.src_vocab, run.tgt_vocab);
  Index tgt_in = Index::from_shape({1, h.tokens.size()});  // <bos> + every output token but the last: [1, T]
  tgt_in(0, 0) = data::Vocab::bos_id;
  for (std::size_t t = 1; t < h.tokens.size(); ++t) tgt_in(0, t) = h.tokens[t - 1];
  std::map<std::string, Tensor> all;
  {
    no_grad guard;
    run.model->eval();
    run.model->forward(batch.src, batch.src_lengths, tgt_in);
    all = run.model->last_attention();
  }
  std::vector<std::string> outputs;
  for (std::int64_t id : h.tokens) outputs.push_back(run.tgt_vocab.token(id));
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
  view.expected_position = run.model_name() == "monotonic";  // its alignment moves along an expected position
  const data::Tokens& first = sources.front().second;  // multi-source: the steps weigh the first source
  viz::Explorer steps = viz::explore_decoding(h, first, run.tgt_vocab, view);
  spell_beam(steps, h, [&run, merge](const std::vector<std::int64_t>& ids) {
    data::Tokens tokens;
    for (std::int64_t id : ids) tokens.push_back(run.tgt_vocab.token(id));
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
