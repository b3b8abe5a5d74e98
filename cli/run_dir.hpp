// A run folder, as `attn train --out DIR` writes it:
//   DIR/checkpoint/          the latest checkpoint: ONE unit, always replaced whole
//       config.json          {"format": "attn-checkpoint", "model": {...}, "task": {...}, "train": {...}, ...}
//       vocab.json           {"src": <Vocab>, "tgt": <Vocab>}
//       model.npz            the model's parameters (io/checkpoint.hpp, numpy's format)
//       model.trainer.npz    optimizer moments, step and random state, for --resume (not for "grid")
//       bpe.codes            only for a run trained with --bpe: its subword codes (cli/bpe.hpp)
//       manifest.json        written last: every other file's size and FNV-1a hash
//   DIR/lock                 locked (flock) by the process writing the run; holds its process id
// A checkpoint is written into a fresh DIR/checkpoint.tmp.<pid>.<n>/ and then swapped
// with DIR/checkpoint by one rename (renameat2's RENAME_EXCHANGE): a kill at any moment
// leaves the previous checkpoint or the new one, never a mix. Readers check the manifest.
// The grid captioner (chapter 4, "model": {"model": "grid"}) has no source
// sentences: its "src" vocabulary holds the special tokens only, and it is
// not a Seq2Seq, so a Run holds it apart (cli/grid.hpp). Neither is a document classifier
// (chapter 18, cli/documents.hpp): its "src" vocabulary holds the words, "tgt" is empty, and
// its class names are in config.json's task. Nor is Listen, Attend and Spell (chapter 16,
// cli/speech.hpp): it hears audio, so "src" is empty and "tgt" holds its characters. A language model
// (cli/language_model.hpp) reads and writes the same tokens: "src" holds them, "tgt" the special tokens only.
#pragma once

#include "../attn.hpp"
#include "../decode/decode.hpp"
#include "../eval/evaluate.hpp"
#include "../models/document_classifier.hpp"
#include "../models/grid_captioner.hpp"
#include "../models/las.hpp"
#include "../models/registry.hpp"
#include "../models/show_attend_tell.hpp"
#include "../train/trainer.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace attn::cli {

struct Run {
  nlohmann::json config;
  std::string config_file;  // where config was read, as messages name it: "DIR/checkpoint/config.json"
  data::Vocab src_vocab, tgt_vocab;
  // The words the last translate() wrote its hypotheses in: tgt_vocab, and for a copying model the
  // source words it lacks, at their extended ids (models/extended_source.hpp).
  data::Vocab output_vocab;
  // The extended source of the last translate() (copying models only; copy_ids empty otherwise).
  models::ExtendedSource extended;
  bool has_bpe = false;  // trained on subwords of these codes (bpe.codes; config.json's task.bpe)
  data::Bpe bpe;
  const data::Bpe* codes() const { return has_bpe ? &bpe : nullptr; }
  std::unique_ptr<models::Seq2Seq> model;            // null for the grid captioner
  std::unique_ptr<models::GridCaptioner> captioner;  // only for the grid captioner
  std::unique_ptr<models::ShowAttendTell> image_captioner;  // only for show-attend-tell (cli/scenes.hpp)
  std::unique_ptr<models::DocumentClassifier> classifier;  // only for a document classifier (cli/documents.hpp)
  std::vector<std::string> classes;                        // its class names (config.json's task.classes)
  bool is_grid() const { return captioner != nullptr; }
  std::unique_ptr<models::ListenAttendSpell> speller;      // only for Listen, Attend and Spell (cli/speech.hpp)
  std::unique_ptr<models::LanguageModel> language_model;   // only for a language model (cli/language_model.hpp)
  bool is_classifier() const { return classifier != nullptr; }
  bool is_speller() const { return speller != nullptr; }
  bool is_language_model() const { return language_model != nullptr; }
  bool is_image_captioner() const { return image_captioner != nullptr; }
  nn::Module& module() {
    if (captioner) return *captioner;
    if (image_captioner) return *image_captioner;
    if (classifier) return *classifier;
    if (speller) return *speller;
    if (language_model) return language_model->module();
    return *model;
  }
  std::string model_name() const;                     // config.model.model: "bahdanau", "grid", ...
};

// The checkpoint unit of a run folder, opened once: its files are read through
// a handle on the folder, so a checkpoint committed meanwhile cannot mix in.
// Opening verifies the manifest (every file present, of the recorded size and hash).
class Checkpoint {
 public:
  explicit Checkpoint(const std::string& dir);  // DIR (a run folder) or DIR/checkpoint itself
  ~Checkpoint();
  Checkpoint(const Checkpoint&) = delete;
  Checkpoint& operator=(const Checkpoint&) = delete;

  std::string path(const std::string& file) const;  // where to open `file` from (stable)
  std::string name(const std::string& file) const;  // how messages call it: "DIR/checkpoint/model.npz"
  bool has(const std::string& file) const;
  bool lists(const std::string& file) const;  // manifest.json lists it (so it was checked)
  nlohmann::json read_json(const std::string& file) const;  // IOError naming the file
  // An IOError from the library names path(file): name(file) reads better.
  [[noreturn]] void rethrow_named(const std::exception& e) const;

 private:
  std::string shown_;  // the unit folder as the user would write it
  int fd_ = -1;
  nlohmann::json manifest_;
};

// Rebuilds the model of a run folder and loads its weights. A missing folder or
// file, a file that does not parse or does not match the manifest, a config.json
// field of the wrong type or range, or weights that do not fit the described
// model each give an error naming the file (and key) and what was expected.
Run load_run(const std::string& dir);

// `train --out DIR` may write into DIR only if it is new, empty, or the user said --overwrite.
void check_out_folder(const std::string& dir, bool overwrite);
// Does DIR hold a run (a checkpoint/ folder)?
bool holds_run(const std::string& dir);

// Exclusive right to write a run folder (creates it), released when destroyed or when the
// process dies. A second process gets an IOError naming the holder's process id.
// Leftover temporary folders of killed writers are removed once the lock is held.
class RunLock {
 public:
  explicit RunLock(const std::string& dir);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  int fd_ = -1;
};

// Writes a new checkpoint unit: config.json, vocab.json, the `texts` (file name -> content,
// e.g. bpe.codes), then write_weights(unit_folder) (model.npz, model.trainer.npz), then the
// manifest; then swaps it into DIR/checkpoint.
// Call while holding the RunLock. On failure the previous checkpoint is untouched.
void commit_checkpoint(const std::string& dir, nlohmann::json config, const data::Vocab& src_vocab,
                       const data::Vocab& tgt_vocab, const std::function<void(const std::string&)>& write_weights,
                       const std::map<std::string, std::string>& texts = {});

// Reads a JSON file, or throws IOError naming it (`shown`: how to call it, default `path`).
nlohmann::json read_json(const std::string& path, const std::string& shown = "");

// A file's FNV-1a 64-bit hash in hex: the manifest's fingerprint of a checkpoint's
// parts, and the checksum a corpus run records. An IOError naming `shown` (or the
// path) if the file cannot be read.
std::string file_fnv1a64(const std::string& path, const std::string& shown = "");

// A file's bytes and their checksum (as file_fnv1a64 gives it) from one read, with file_fnv1a64's errors: what
// a run checks, records and parses is then the same bytes, even if the file changes while it runs (a pipe,
// readable once, works too).
struct ChecksummedFile {
  std::string bytes;
  std::string checksum;
};
ChecksummedFile read_checksummed(const std::string& path, const std::string& shown = "");

// A count as messages write it: 102412345 -> "102,412,345".
std::string with_commas(std::size_t n);

// Builds the model a config describes; out of memory is an error naming the largest size.
std::unique_ptr<models::Seq2Seq> build_model(const nlohmann::json& model, std::size_t src_vocab, std::size_t tgt_vocab,
                                             const std::string& where);
// The same checks around a language model (models/language_model.hpp) over `vocab` tokens.
std::unique_ptr<models::LanguageModel> build_language_model(const nlohmann::json& model, std::size_t vocab,
                                                            const std::string& where);

}  // namespace attn::cli
