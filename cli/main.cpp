// attn: train any chapter's model on any task, watch it learn, and see where it attends.
//   attn demo | train | eval | translate | heatmap | classify | graph | corpus | bpe | batches   (--help on each)
//
// Exit status: 0 on success, 1 when a command fails (a missing or corrupted
// checkpoint, unknown tokens, a malformed corpus...), 2 for a bad command line.
// Either way the error is ONE line on standard error, starting "attn: error:".
#include "commands.hpp"
#include "language_model.hpp"
#include "scenes.hpp"

#include "../core/backend/memory.hpp"

#ifndef ATTN_VERSION
#define ATTN_VERSION "(version unknown)"  // meson defines it from the project's version
#endif

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

namespace {

// Error messages of the library may span lines (e.g. every mismatched weight of a
// checkpoint): the command line prints them as one line.
std::string one_line(std::string message) {
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  std::string out;
  for (std::size_t i = 0; i < message.size(); ++i) {
    if (message[i] != '\n') {
      out += message[i];
      continue;
    }
    while (i + 1 < message.size() && message[i + 1] == ' ') ++i;  // the indent of the next line
    out += out.empty() || out.back() == ':' ? " " : "; ";
  }
  return out;
}

int fail(const std::string& message, int status) {
  std::cerr << "attn: error: " << one_line(message) << std::endl;
  return status;
}

// Levenshtein's distance, with a swap of two neighbours counted as one edit ("--modle" -> "--model").
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// The name closest to `typed` if it is close enough to be a typing slip (a third of its letters at most), else "".
std::string closest(const std::string& typed, const std::vector<std::string>& names) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(1, typed.size() / 3) + 1;
  for (const std::string& name : names) {
    const std::size_t d = edit_distance(typed, name);
    if (d < best_distance) best = name, best_distance = d;
  }
  return best;
}

// After CLI11 refused arguments it did not expect: the first unknown --flag of the command,
// named with the command and the flag it most likely meant, or "" if none is found.
std::string unknown_flag(CLI::App& app, int argc, char** argv) {
  CLI::App* cmd = &app;
  std::string path = "attn";
  int i = 1;
  for (; i < argc; ++i) {  // the command, and its own command (attn corpus gettext)
    CLI::App* sub = nullptr;
    for (CLI::App* s : cmd->get_subcommands(std::function<bool(CLI::App*)>{}))
      if (s->get_name() == argv[i]) sub = s;
    if (!sub) break;
    cmd = sub;
    path += " " + cmd->get_name();
  }
  std::vector<std::string> flags;
  for (const CLI::Option* option : cmd->get_options())
    for (const std::string& name : option->get_lnames()) flags.push_back("--" + name);
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.size() < 3 || arg.rfind("--", 0) != 0) continue;
    const std::string name = arg.substr(0, arg.find('='));
    if (cmd->get_option_no_throw(name)) continue;
    const std::string guess = closest(name, flags);
    return "'" + path + "' has no flag " + name + (guess.empty() ? "" : "; did you mean " + guess + "?") + " (see " +
           path + " --help)";
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  attn::reuse_freed_memory();  // every training step allocates the same arrays: keep them (core/memory.hpp)
  CLI::App app{"attn: attention from scratch, in C++. Train the course's models and see where they attend."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "attn " ATTN_VERSION);
  app.get_formatter()->column_width(32);  // "--checkpoint-every UINT=500" and its description apart
  attn::cli::add_demo_command(app);
  attn::cli::add_train_command(app);
  attn::cli::add_eval_command(app);
  attn::cli::add_translate_command(app);
  attn::cli::add_heatmap_command(app);
  attn::cli::add_classify_command(app);
  attn::cli::add_caption_command(app);
  attn::cli::add_generate_command(app);
  attn::cli::add_score_command(app);
  attn::cli::add_graph_command(app);
  attn::cli::add_corpus_command(app);
  attn::cli::add_bpe_command(app);
  attn::cli::add_batches_command(app);

  // `attn trian`: CLI11 would only say "A subcommand is required".
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    const CLI::App& top = app;
    for (const CLI::App* sub : top.get_subcommands(std::function<bool(const CLI::App*)>{})) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::vector<std::string> commands;
      for (const CLI::App* sub : top.get_subcommands(std::function<bool(const CLI::App*)>{}))
        commands.push_back(sub->get_name());
      const std::string guess = closest(argv[1], commands);
      return fail(std::string("unknown command '") + argv[1] + "'" +
                      (guess.empty() ? "" : "; did you mean '" + guess + "'?") + " (commands: " + names +
                      "; see attn --help)",
                  2);
    }
  }
  if (argc > 0) attn::cli::program_name = argv[0];
  try {
    app.parse(argc, argv);  // runs the chosen command's callback
  } catch (const attn::cli::Stopped& stopped) {
    std::cerr << stopped.message << std::endl;
    return stopped.status;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version: their text, exit status 0
    // an unknown flag is named first: a missing required flag is often the one mistyped ("--merge 3")
    if (dynamic_cast<const CLI::ExtrasError*>(&e) || dynamic_cast<const CLI::RequiredError*>(&e)) {
      const std::string unknown = unknown_flag(app, argc, argv);
      if (!unknown.empty()) return fail(unknown, 2);
    }
    return fail(std::string(e.what()) + " (see --help)", 2);
  } catch (const std::bad_alloc&) {  // sizes are checked first; this is the last line of defence
    return fail("out of memory: the settings ask for more memory than this machine has (try smaller --batch-size, "
                "--n-train or model sizes)", 1);
  } catch (const nlohmann::json::exception& e) {  // JSON is read through checked helpers; this should not happen
    return fail(std::string("unexpected JSON content (") + e.what() + ")", 1);
  } catch (const std::exception& e) {
    return fail(e.what(), 1);
  } catch (...) {
    return fail("an unexpected error (not a std::exception)", 1);
  }
  return 0;
}
