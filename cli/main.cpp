// attn: train any chapter's model on any task, watch it learn, and see where it attends.
//   attn demo | train | eval | translate | heatmap | graph   (--help on each)
#include "commands.hpp"

#include "../core/blas.hpp"

#include <iostream>

int main(int argc, char** argv) {
  // The course's matrices are small: OpenBLAS's thread pool costs more than it
  // gains on them (measured 3x slower training on 2 cores), so use one thread.
  attn::blas::set_num_threads(1);
  CLI::App app{"attn: attention from scratch, in C++. Train the course's models and see where they attend."};
  app.require_subcommand(1);
  attn::cli::add_demo_command(app);
  attn::cli::add_train_command(app);
  attn::cli::add_eval_command(app);
  attn::cli::add_translate_command(app);
  attn::cli::add_heatmap_command(app);
  attn::cli::add_graph_command(app);
  try {
    app.parse(argc, argv);  // runs the chosen command's callback
  } catch (const CLI::ParseError& e) {
    return app.exit(e);  // --help exits 0; bad flags print one line and exit non-zero
  } catch (const std::exception& e) {
    std::cerr << "attn: error: " << e.what() << std::endl;
    return 1;
  }
  return 0;
}
