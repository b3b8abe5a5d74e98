#include "tasks.hpp"

#include "../core/errors.hpp"

#include <algorithm>
#include <numeric>
#include <set>

namespace attn::data {

const char* task_name(SequenceTask task) {
  switch (task) {
    case SequenceTask::copy: return "copy";
    case SequenceTask::reverse: return "reverse";
    case SequenceTask::sort: return "sort";
  }
  return "?";
}

SequenceTask sequence_task_from_name(const std::string& name) {
  for (auto task : {SequenceTask::copy, SequenceTask::reverse, SequenceTask::sort})
    if (name == task_name(task)) return task;
  throw ValueError("sequence_task_from_name: unknown task '" + name + "' (expected copy, reverse or sort)");
}

Tokens task_symbols(std::size_t vocab_size) {
  Tokens symbols;
  for (std::size_t k = 0; k < vocab_size; ++k) symbols.push_back(std::to_string(k));
  return symbols;
}

Vocab task_vocab(std::size_t vocab_size) { return Vocab(task_symbols(vocab_size)); }

Example copy_example(const Tokens& src) {
  std::vector<std::int64_t> alignment(src.size());
  std::iota(alignment.begin(), alignment.end(), 0);  // target t copies source t
  return {src, src, alignment};
}

Example reverse_example(const Tokens& src) {
  Example e{src, Tokens(src.rbegin(), src.rend()), {}};
  for (std::size_t t = 0; t < src.size(); ++t) e.alignment.push_back(static_cast<std::int64_t>(src.size() - 1 - t));
  return e;
}

Example sort_example(const Tokens& src) {
  std::vector<long long> value(src.size());
  for (std::size_t j = 0; j < src.size(); ++j) {
    const bool digits = !src[j].empty() && src[j].find_first_not_of("0123456789") == std::string::npos;
    if (!digits) throw ValueError("sort_example: expected number tokens, got '" + src[j] + "'");
    value[j] = std::stoll(src[j]);
  }
  // Sort the source positions by their value; stable, so equal values keep their order.
  std::vector<std::int64_t> order(src.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return value[a] < value[b]; });
  Example e{src, {}, order};
  for (std::int64_t j : order) e.tgt.push_back(src[static_cast<std::size_t>(j)]);
  return e;
}

Example make_example(SequenceTask task, const Tokens& src) {
  switch (task) {
    case SequenceTask::copy: return copy_example(src);
    case SequenceTask::reverse: return reverse_example(src);
    case SequenceTask::sort: return sort_example(src);
  }
  throw ValueError("make_example: unknown task");
}

namespace {

void check_options(const char* op, const SequenceTaskOptions& o) {
  if (o.vocab_size == 0 || o.min_length == 0 || o.min_length > o.max_length)
    throw ValueError(std::string(op) + ": expected vocab_size >= 1 and 1 <= min_length <= max_length, got vocab_size " +
                     std::to_string(o.vocab_size) + ", lengths " + std::to_string(o.min_length) + ".." +
                     std::to_string(o.max_length));
}

Tokens random_source(const SequenceTaskOptions& o, Generator& gen) {
  const auto length = gen.randint(static_cast<std::int64_t>(o.min_length), static_cast<std::int64_t>(o.max_length) + 1);
  Tokens src;
  for (std::int64_t i = 0; i < length; ++i)
    src.push_back(std::to_string(gen.randint(0, static_cast<std::int64_t>(o.vocab_size))));
  return src;
}

// How many different sources the options allow: sum over lengths of vocab_size^length
// (saturating, since only "is it at least n" matters).
std::size_t count_sources(const SequenceTaskOptions& o) {
  const std::size_t cap = std::size_t(1) << 40;
  std::size_t total = 0, power = 1;
  for (std::size_t length = 1; length <= o.max_length && total < cap; ++length) {
    power = std::min(cap, power * o.vocab_size);
    if (length >= o.min_length) total = std::min(cap, total + power);
  }
  return total;
}

}  // namespace

std::vector<Example> sequence_task(SequenceTask task, std::size_t n, const SequenceTaskOptions& options,
                                   Generator& gen) {
  check_options("sequence_task", options);
  std::vector<Example> examples;
  for (std::size_t i = 0; i < n; ++i) examples.push_back(make_example(task, random_source(options, gen)));
  return examples;
}

std::vector<Example> copy_task(std::size_t n, const SequenceTaskOptions& options, Generator& gen) {
  return sequence_task(SequenceTask::copy, n, options, gen);
}
std::vector<Example> reverse_task(std::size_t n, const SequenceTaskOptions& options, Generator& gen) {
  return sequence_task(SequenceTask::reverse, n, options, gen);
}
std::vector<Example> sort_task(std::size_t n, const SequenceTaskOptions& options, Generator& gen) {
  return sequence_task(SequenceTask::sort, n, options, gen);
}

Split sequence_split(SequenceTask task, std::size_t n_train, std::size_t n_test,
                     const SequenceTaskOptions& options, Generator& gen) {
  check_options("sequence_split", options);
  const std::size_t available = count_sources(options);
  if (n_test > available || (n_train > 0 && n_test == available))
    throw ValueError("sequence_split: only " + std::to_string(available) + " distinct sources of length " +
                     std::to_string(options.min_length) + ".." + std::to_string(options.max_length) + " over " +
                     std::to_string(options.vocab_size) + " symbols, too few for " + std::to_string(n_test) +
                     " test examples plus a training set");
  // Rejection sampling; when the test set fills most of the space this could take
  // long, so give up after many tries rather than loop for ever.
  const std::size_t max_tries = 1000 * (n_train + n_test) + 100000;
  std::size_t tries = 0;
  auto draw = [&] {
    if (++tries > max_tries) throw ValueError("sequence_split: could not draw enough distinct sources; use longer sequences or more symbols");
    return random_source(options, gen);
  };
  Split split;
  std::set<Tokens> held_out;
  while (held_out.size() < n_test) {
    Tokens src = draw();
    if (held_out.insert(src).second) split.test.push_back(make_example(task, src));
  }
  while (split.train.size() < n_train) {
    Tokens src = draw();
    if (!held_out.count(src)) split.train.push_back(make_example(task, src));
  }
  return split;
}

}  // namespace attn::data
