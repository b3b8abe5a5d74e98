// The files a command writes for the user: `eval --predictions FILE`, the `--out FILE`
// of heatmap, graph and corpus gettext, and the plots of a run folder. The rules:
//   - an output is never one of the files the command reads, nor a file of a run
//     (resolved paths, then device and inode, so another name of the same file is caught),
//     nor a new file inside a checkpoint folder (attn replaces that folder whole), nor the
//     corpus of any run: one found next to it or under the current folder (3 levels down), or one
//     of the user's runs anywhere, listed in the user's run list (remember_run_corpora);
//   - an output is never a symbolic link: attn writes no file through a link;
//   - an existing file is replaced only with --overwrite (attn cannot tell a file it
//     made from the user's own, so it asks);
//   - the text goes to a new temporary file next to the output (O_CREAT | O_EXCL |
//     O_NOFOLLOW), forced to disk, then renamed over it: a kill, or a full disk, leaves
//     the previous file as it was and no temporary file behind.
//
//   const Output predictions{"--predictions", o->predictions, o->overwrite};
//   check_output(predictions, {}, {run_dir});   // before any work: refused with a message
//   write_output(predictions, text, {}, {run_dir});  // checked again, then written
#pragma once

#include "../data/text_file.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace attn::cli {

struct Output {
  std::string flag;        // "--predictions", "--out": how messages name it
  std::string path;
  bool overwrite = false;  // may replace an existing regular file (never a link or an input)
};

// An input file of the command, and how messages call it ("one of the catalogs it reads").
struct Input {
  std::string path, what;
};

// Throws a ValueError naming the flag, the file and the reason if `out` may not be written:
// it is an input, a file of one of the `runs` (run folders, or their checkpoint folders)
// or of any run, inside a checkpoint folder, a link, a directory, in a folder that does not
// exist, or an existing file without --overwrite.
void check_output(const Output& out, const std::vector<Input>& inputs, const std::vector<std::string>& runs);

// Whether `path` ends with `extension` (".svg"), in any case.
bool has_extension(const std::string& path, const std::string& extension);
// Throws a ValueError naming the flag and the file unless it ends with one of `extensions`:
// a command writes one format, and a file named for another would mislead whoever opens it.
void check_extension(const Output& out, const std::vector<std::string>& extensions, const std::string& format);

// check_output, then writes `text` atomically. An IOError naming the flag, the file and the
// cause (no space left on the device, ...) if writing fails; the temporary file is removed.
void write_output(const Output& out, const std::string& text, const std::vector<Input>& inputs = {},
                  const std::vector<std::string>& runs = {});

// The user's run list, ${XDG_STATE_HOME:-~/.local/state}/attn/corpora.tsv: one line "CORPUS<TAB>RUN" for
// every corpus file a run reads again in eval and --resume (config.json's task "file" and "test_file"),
// by absolute path. commit_checkpoint adds a run's lines; check_output refuses to write over a listed
// corpus while its run still names it, wherever the command is started. A line whose run is gone is
// ignored, and dropped when the list is next rewritten (it is kept under 1 MiB). The list is a guard,
// not a record: if it cannot be written (a read-only home), the run is made all the same.
std::string run_list_path();
void remember_run_corpora(const std::string& run, const nlohmann::json& config);

// Text from a user's files (pages, labels, transcripts) as a terminal or an SVG may show it: control
// characters (ESC, NUL, C1 controls such as U+009B) become visible escapes "\x1b", so no terminal
// escape reaches the screen and no SVG holds a character XML forbids.
std::string visible_text(const std::string& text);

// The first control character of `text` named as a reader knows it, or "" (data/text_file.hpp).
using data::control_character;

// Writes a file attn owns (a run's plots, the demo's pictures): replaced atomically, never
// through a link (a link in its place is replaced, not followed). Errors name `path` and the cause.
void write_own_file(const std::string& path, const std::string& text);

}  // namespace attn::cli
