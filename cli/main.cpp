// attn: train any chapter's model on any task, watch it learn, and see where it attends.
//   attn demo | train | eval | translate | heatmap | classify | graph | corpus | bpe | batches   (--help on each)
//
// Exit status: 0 on success, 1 when a command fails (a missing or corrupted
// checkpoint, unknown tokens, a malformed corpus...), 2 for a bad command line.
// Either way the error is ONE line on standard error, starting "attn: error:".
#include "commands.hpp"

#include "../core/backend/memory.hpp"

#include <algorithm>
#include <iostream>

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

}  // namespace

int main(int argc, char** argv) {
  attn::reuse_freed_memory();  // every training step allocates the same arrays: keep them (core/memory.hpp)
  CLI::App app{"attn: attention from scratch, in C++. Train the course's models and see where they attend."};
  app.require_subcommand(1);
  attn::cli::add_demo_command(app);
  attn::cli::add_train_command(app);
  attn::cli::add_eval_command(app);
  attn::cli::add_translate_command(app);
  attn::cli::add_heatmap_command(app);
  attn::cli::add_classify_command(app);
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
    if (!known) return fail(std::string("unknown command '") + argv[1] + "' (commands: " + names + "; see attn --help)", 2);
  }
  try {
    app.parse(argc, argv);  // runs the chosen command's callback
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help: the help text, exit status 0
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
