// Chapter 18's document classifiers on the command line: a hierarchical attention network
// (Yang et al. 2016) and its two baselines, trained on a corpus of labelled documents, one
// JSON object a line (data/documents.hpp), such as the pinned manual pages:
//
//   tools/setup.sh --with-corpus                  # renders ./manpages.jsonl, checksum checked
//   attn train --model han --task manpages.jsonl --out runs/han
//   attn eval --checkpoint runs/han               # accuracy, macro-F1, per class, confusion matrix
//   MANWIDTH=78 man --nh --nj -P cat tar | sed -n '/^DESCRIPTION/,/^[A-Z]/{//!p}' > tar.txt
//   attn classify --checkpoint runs/han tar.txt   # its section, and the sentence it read most
//   attn heatmap --checkpoint runs/han tar.txt --out tar.svg   # the words and sentences it weighed
//
// Models: "han" (hierarchical), "flat-attention" (one BiGRU and one attention over all the
// words), "bag-of-words" (the mean of the word embeddings). Training runs in epochs, as the
// chapter does: the documents are split, class by class, into train / validation / test,
// Adam with gradient clipping, and the parameters of the epoch with the best validation
// accuracy are kept (train/document_training.hpp, with the loop of train/epoch_trainer.hpp). A checkpoint
// is committed after every epoch, and at the step where Ctrl-C stops: --resume continues the run bit for
// bit (--epochs: a new total); its model.npz holds the best epoch's weights so far.
// --seed seeds the split as well as the model and the batch order: the chapter splits with seed 1
// and varies the model's seed, so --seed 1 is its split and its first seed's training.
//
// The task config records the corpus file's checksum (eval refuses a corpus that changed)
// and the class names; the checkpoint's vocab.json holds the words as "src" ("tgt": the special tokens only).
#pragma once

#include "run_dir.hpp"

#include "../data/documents.hpp"
#include "../eval/classification.hpp"
#include "../models/document_classifier.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace attn::cli {

// "han", "flat-attention", "bag-of-words".
const std::vector<std::string>& document_model_names();
bool is_document_model(const std::string& name);

// {"model": name, "embed_dim": 64, "hidden_dim": 32, "attention_dim": 64} (bag-of-words: embed_dim only).
nlohmann::json default_document_model_config(const std::string& name);
// {"name": "documents", "file": <absolute path>, "max_sentences": 20, "max_words": 40, "lowercase": true,
//  "test_fraction": 0.2, "valid_fraction": 0.125, "min_freq": 2}
nlohmann::json default_document_task_config(const std::string& file);
bool is_document_task_file(const std::string& task);  // FILE.jsonl
// The class names a task config records ("classes"): ValueError naming `where` unless 2 or more strings.
std::vector<std::string> document_classes(const nlohmann::json& task, const std::string& where);

// The model a config describes, for `vocab` words and `classes` classes (ValueError naming an
// unknown or mistyped field, `where` saying where the config came from).
std::unique_ptr<models::DocumentClassifier> make_document_model(const nlohmann::json& model, std::size_t vocab,
                                                                std::size_t classes, const std::string& where);

// A task's documents: read, cut, split with `seed` (test_fraction of each class held out, then
// valid_fraction of the rest for choosing the epoch), and the vocabulary of the training split.
struct DocumentTask {
  nlohmann::json config;  // with the file's checksum and the class names
  std::vector<std::string> classes;
  std::vector<data::Document> train, valid, test;
  data::Vocab vocab;
  std::string warning;  // e.g. the documents without a sentence, left out
};
// `where` names the config in messages. A corpus whose checksum or classes differ from the
// ones recorded is an IOError: its held-out documents would not be the run's.
DocumentTask make_document_task(const nlohmann::json& config, std::uint64_t seed, const std::string& where);

// Trains into the run folder `out` (new or empty unless start.overwrite), or resumes the run there
// (start.resumed); everything is checked before anything is written. Prints each epoch and the final
// test evaluation.
struct RunStart;
void train_documents_run(nlohmann::json config, const std::string& out, const RunStart& start);

// The checkpoint's evaluation on its held-out documents, printed; with `predictions`, also
// page<TAB>true section<TAB>predicted section lines for that file.
void eval_documents(Run& run, const std::string& predictions_file, bool overwrite, const std::string& dir);

// One page read from a text file (paragraphs separated by blank lines, a paragraph's lines joined
// by spaces), cut and tokenized as the task's documents are, its class probabilities, and where
// the model looked. The pinned corpus holds each manual page's DESCRIPTION section only, so a page
// reads best the same way: MANWIDTH=78 man --nh --nj -P cat tar | sed -n '/^DESCRIPTION/,/^[A-Z]/{//!p}'
// An IOError for a file that is not a regular file of at most 8 MB of UTF-8 text.
struct PageReading {
  data::Document page;            // after the task's cuts (max_sentences, max_words)
  std::vector<double> probabilities;  // per class, in the run's class order
  std::size_t predicted = 0;
  xt::xarray<double> sentence_weights;  // [S] (han only; else 0-dimensional)
  xt::xarray<double> word_weights;      // han: [S, W]; flat-attention: [T] over the page's words; else 0-dimensional
};
PageReading read_page(Run& run, const std::string& file);

}  // namespace attn::cli
