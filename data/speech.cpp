#include "speech.hpp"

#include "../core/backend/parallel.hpp"
#include "../core/errors.hpp"

#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <functional>
#include <set>

namespace attn::data {

namespace {

// Below this a band is flat (all frames at the log floor, say): CMVN only centres it, since
// dividing by a standard deviation of rounding errors would blow the rounding errors up.
constexpr double kFlatBand = 1e-10;

void check_options(const std::string& op, const SpeechOptions& o) {
  if (o.min_words < 1 || o.min_words > o.max_words)
    throw ValueError(op + ": expected 1 <= min_words <= max_words, got " + std::to_string(o.min_words) + " and " +
                     std::to_string(o.max_words));
  if (o.min_speed > o.max_speed)
    throw ValueError(op + ": expected min_speed <= max_speed, got " + std::to_string(o.min_speed) + " and " +
                     std::to_string(o.max_speed));
  if (o.min_pitch > o.max_pitch)
    throw ValueError(op + ": expected min_pitch <= max_pitch, got " + std::to_string(o.min_pitch) + " and " +
                     std::to_string(o.max_pitch));
  // audio::speak checks each drawn value too; checking the ranges first fails before any work.
  if (o.min_speed < 80 || o.max_speed > 450)
    throw ValueError(op + ": speeds must be in 80 .. 450 words per minute (espeak-ng -s), got " +
                     std::to_string(o.min_speed) + " .. " + std::to_string(o.max_speed));
  if (o.min_pitch < 0 || o.max_pitch > 99)
    throw ValueError(op + ": pitches must be in 0 .. 99 (espeak-ng -p), got " + std::to_string(o.min_pitch) + " .. " +
                     std::to_string(o.max_pitch));
  if (!(o.trim_db >= 0)) throw ValueError(op + ": trim_db must be >= 0 (0: no trimming), got " + std::to_string(o.trim_db));
  if (!(o.floor_db >= 0)) throw ValueError(op + ": floor_db must be >= 0 (0: no floor), got " + std::to_string(o.floor_db));
}

// Runs work(0), ..., work(n - 1) on attn's threads, each index on one thread. The work runs
// inside a parallel_for share even for one index, where attn's ops (log_mel's matmul) run on
// that thread alone: so an utterance's features are the same bits at any number of threads.
// If one throws, no new index starts, and the exception of the lowest index that threw is rethrown.
void run_on_threads(std::size_t n, const std::function<void(std::size_t)>& work) {
  // At least two shares, so that the pool (and its one-thread-per-share rule) is used.
  const std::size_t shares = std::max<std::size_t>(2, static_cast<std::size_t>(get_num_threads()));
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::vector<std::exception_ptr> errors(n);
  parallel_for(shares, 1, [&](std::size_t, std::size_t) {
    // Each share takes the next utterance until none is left: utterances differ in length.
    for (std::size_t i = next++; i < n && !failed; i = next++) {
      try {
        work(i);
      } catch (...) {
        errors[i] = std::current_exception();
        failed = true;
      }
    }
  });
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

SpeechExample synthesize(const std::string& op, const std::string& text, const audio::Voice& voice,
                         const SpeechOptions& options) {
  const std::string where = op + ": saying '" + text + "' in voice " + audio::voice_name(voice) + ": ";
  audio::Wave wave;
  try {
    wave = audio::speak(text, voice, options.program);
  } catch (const IOError& e) {
    throw IOError(where + e.what());
  } catch (const ValueError& e) {
    throw ValueError(where + e.what());
  }
  if (wave.sample_rate != options.features.sample_rate)
    throw ValueError(where + "the audio has " + std::to_string(wave.sample_rate) +
                     " samples a second, the features expect options.features.sample_rate = " +
                     std::to_string(options.features.sample_rate));
  SpeechExample example{text, voice, speech_features(wave.samples, options)};
  if (example.features.shape(0) == 0)
    throw ValueError(where + "the audio has " + std::to_string(wave.samples.size()) +
                     " samples, less than one frame of n_fft = " + std::to_string(options.features.n_fft) +
                     " once its silence is trimmed");
  return example;
}

// splitmix64's finalizer: nearby seeds give unrelated generators.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

struct Plan {
  std::string text;
  audio::Voice voice;
};

// n utterances' random choices, in a fixed order: words, language, variant, speed, pitch.
std::vector<Plan> draw_plans(std::size_t n, const std::vector<std::string>& variants, const SpeechOptions& o,
                             Generator& gen) {
  const auto pick = [&](std::size_t count) { return static_cast<std::size_t>(gen.randint(0, std::int64_t(count))); };
  std::vector<Plan> plans(n);
  for (Plan& p : plans) {
    const auto words = static_cast<std::size_t>(gen.randint(std::int64_t(o.min_words), std::int64_t(o.max_words) + 1));
    for (std::size_t w = 0; w < words; ++w) p.text += (w ? " " : "") + digit_words()[pick(10)];
    p.voice.language = speech_languages()[pick(speech_languages().size())];
    p.voice.variant = variants[pick(variants.size())];
    p.voice.speed = static_cast<int>(gen.randint(o.min_speed, std::int64_t(o.max_speed) + 1));
    p.voice.pitch = static_cast<int>(gen.randint(o.min_pitch, std::int64_t(o.max_pitch) + 1));
  }
  return plans;
}

}  // namespace

audio::LogMelOptions speech_log_mel_options() {
  audio::LogMelOptions o;
  o.sample_rate = 22050;
  o.win_length = 551;  // 25 ms
  o.hop_length = 220;  // 10 ms
  o.n_fft = 1024;
  o.n_mels = 40;
  o.f_min = 0.0;
  o.f_max = 8000.0;
  return o;
}

const std::vector<std::string>& digit_words() {
  static const std::vector<std::string> words{"zero", "one", "two",   "three", "four",
                                              "five", "six", "seven", "eight", "nine"};
  return words;
}

const std::vector<std::string>& speech_languages() {
  static const std::vector<std::string> languages{"en-us",          "en-gb",          "en-gb-scotland", "en-gb-x-rp",
                                                  "en-gb-x-gbclan", "en-gb-x-gbcwmd", "en-029"};
  return languages;
}

const std::vector<std::string>& training_variants() {
  // espeak-ng 1.51's !v/ files, left out: robots and echoes (robosoft*, UniRobot, anikaRobot,
  // announcer, RicishayMax*, Demonic), whispers (whisper, whisperf, caleb), klatt6 (says what
  // klatt says), fast (no change to the voice), "Mr serious" (a space in its name), and the
  // six of held_out_variants().
  static const std::vector<std::string> variants{
      "Alex", "Alicia", "Andy", "Annie", "AnxiousAndy", "Denis", "Diogo", "Gene", "Gene2", "Henrique", "Hugo",
      "Jacky", "Lee", "Marco", "Mario", "Michael", "Nguyen", "Storm", "Tweaky", "adam", "antonio", "aunty",
      "belinda", "benjamin", "boris", "croak", "david", "ed", "edward", "edward2", "f1", "f2", "f3", "f4",
      "grandma", "grandpa", "gustave", "iven", "iven2", "iven3", "iven4", "john", "kaukovalta", "klatt",
      "klatt2", "klatt3", "klatt4", "klatt5", "linda", "m1", "m2", "m3", "m4", "m5", "m7", "m8", "marcelo",
      "max", "michel", "miguel", "norbert", "pablo", "paul", "pedro", "rob", "robert", "sandro", "shelby",
      "steph", "steph2", "steph3", "travis", "victor", "zac"};
  return variants;
}

const std::vector<std::string>& held_out_variants() {
  // Three female (Andrea, anika, f5) and three male (Mike, m6, quincy) voices.
  static const std::vector<std::string> variants{"Andrea", "anika", "f5", "Mike", "m6", "quincy"};
  return variants;
}

xt::xarray<double> trim_silence(const xt::xarray<double>& samples, double trim_db) {
  if (samples.dimension() != 1)
    throw ShapeError("trim_silence: expected one channel of samples [S], got " + std::to_string(samples.dimension()) +
                     " dimensions");
  if (!(trim_db >= 0)) throw ValueError("trim_silence: trim_db must be >= 0 (0: no trimming), got " + std::to_string(trim_db));
  if (trim_db == 0 || samples.size() == 0) return samples;
  const double peak = xt::amax(xt::abs(samples))();
  if (peak == 0) return xt::zeros<double>({std::size_t(0)});  // nothing but silence
  // trim_db decibels below the peak's power: an amplitude 10^(-trim_db / 20) times the peak's.
  const double quiet = peak * std::pow(10.0, -trim_db / 20.0);
  std::size_t first = 0, end = samples.size();
  while (first < end && std::abs(samples(first)) < quiet) ++first;
  while (end > first && std::abs(samples(end - 1)) < quiet) --end;
  return xt::view(samples, xt::range(first, end));
}

xt::xarray<double> speech_features(const xt::xarray<double>& samples, const SpeechOptions& options) {
  check_options("speech_features", options);
  xt::xarray<double> F = audio::log_mel(trim_silence(samples, options.trim_db), options.features);  // [T, M]
  if (F.shape(0) == 0) return F;
  if (options.floor_db > 0) {
    // floor_db decibels of power are floor_db / 10 * ln(10) in the natural log of log_mel.
    const double floor = xt::amax(F)() - options.floor_db / 10.0 * std::log(10.0);
    F = xt::maximum(F, floor);
  }
  if (!options.normalize) return F;
  const std::size_t T = F.shape(0), M = F.shape(1);
  for (std::size_t m = 0; m < M; ++m) {
    auto band = xt::view(F, xt::all(), m);
    double mean = 0.0;
    for (double v : band) mean += v;
    mean /= double(T);
    double variance = 0.0;
    for (double v : band) variance += (v - mean) * (v - mean);
    const double sd = std::sqrt(variance / double(T));
    const double scale = sd > kFlatBand ? 1.0 / sd : 1.0;
    for (double& v : band) v = (v - mean) * scale;
  }
  return F;
}

SpeechExample speak_example(const std::string& text, const audio::Voice& voice, const SpeechOptions& options) {
  check_options("speak_example", options);
  SpeechExample example;
  // On attn's threads as spoken_digits does, so the same utterance gets the same bits.
  run_on_threads(1, [&](std::size_t) { example = synthesize("speak_example", text, voice, options); });
  return example;
}

SpeechSplit spoken_digits(std::size_t n_train, std::size_t n_valid, std::size_t n_test, std::uint64_t seed,
                          const SpeechOptions& options) {
  check_options("spoken_digits", options);
  // One generator per split, so that each split depends only on the seed and its own size.
  Generator train_gen(mix(mix(seed) ^ 1)), valid_gen(mix(mix(seed) ^ 2)), test_gen(mix(mix(seed) ^ 3));
  std::vector<Plan> plans = draw_plans(n_train, training_variants(), options, train_gen);
  const std::vector<Plan> valid = draw_plans(n_valid, training_variants(), options, valid_gen);
  const std::vector<Plan> test = draw_plans(n_test, held_out_variants(), options, test_gen);
  plans.insert(plans.end(), valid.begin(), valid.end());
  plans.insert(plans.end(), test.begin(), test.end());
  std::vector<SpeechExample> all(plans.size());
  run_on_threads(plans.size(), [&](std::size_t i) {
    all[i] = synthesize("spoken_digits", plans[i].text, plans[i].voice, options);
  });
  SpeechSplit split;
  const auto at = [&](std::size_t i) { return std::make_move_iterator(all.begin() + static_cast<long>(i)); };
  split.train.assign(at(0), at(n_train));
  split.valid.assign(at(n_train), at(n_train + n_valid));
  split.test.assign(at(n_train + n_valid), at(all.size()));
  return split;
}

Vocab speech_vocab() {
  std::set<std::string> chars{" "};  // sorted: " " comes before the letters
  for (const auto& word : digit_words())
    for (const auto& c : split_chars(word)) chars.insert(c);
  return Vocab(std::vector<std::string>(chars.begin(), chars.end()));
}

SpeechBatch make_speech_batch(const std::vector<SpeechExample>& examples, const std::vector<std::size_t>& indices,
                              const Vocab& vocab, Dtype dtype) {
  const std::string op = "make_speech_batch";
  if (indices.empty()) throw ValueError(op + ": expected at least one example, got none");
  std::size_t T = 0, U = 0, M = 0;
  for (std::size_t b = 0; b < indices.size(); ++b) {
    const std::size_t i = indices[b];
    if (i >= examples.size())
      throw ValueError(op + ": index " + std::to_string(i) + " is out of range for " + std::to_string(examples.size()) +
                       " examples");
    const auto& f = examples[i].features;
    if (f.dimension() != 2)
      throw ShapeError(op + ": expected features [T, n_mels], got " + std::to_string(f.dimension()) +
                       " dimensions for example " + std::to_string(i));
    if (f.shape(0) == 0) throw ValueError(op + ": example " + std::to_string(i) + " has no frames");
    if (b > 0 && f.shape(1) != M)
      throw ShapeError(op + ": expected every utterance to have " + std::to_string(M) + " bands, got " +
                       std::to_string(f.shape(1)) + " for example " + std::to_string(i));
    M = f.shape(1);
    T = std::max(T, f.shape(0));
    U = std::max(U, split_chars(examples[i].text).size() + 1);
  }
  const std::size_t B = indices.size();
  SpeechBatch batch;
  batch.indices = indices;
  xt::xarray<double> features = xt::zeros<double>({B, T, M});
  batch.tgt_in = Index(Shape{B, U}, Vocab::pad_id);
  batch.tgt_out = Index(Shape{B, U}, Vocab::pad_id);
  for (std::size_t b = 0; b < B; ++b) {
    const SpeechExample& e = examples[indices[b]];
    const std::size_t frames = e.features.shape(0);
    xt::view(features, b, xt::range(0, frames), xt::all()) = e.features;
    batch.lengths.push_back(frames);
    const std::vector<std::int64_t> ids = vocab.encode(split_chars(e.text));
    batch.tgt_in(b, 0) = Vocab::bos_id;  // <bos> c_1 .. c_n
    for (std::size_t u = 0; u < ids.size(); ++u) {
      batch.tgt_in(b, u + 1) = ids[u];
      batch.tgt_out(b, u) = ids[u];      // c_1 .. c_n <eos>
    }
    batch.tgt_out(b, ids.size()) = Vocab::eos_id;
    batch.tgt_lengths.push_back(ids.size() + 1);
  }
  batch.features = tensor(features, false, dtype);
  return batch;
}

std::vector<SpeechBatch> make_speech_batches(const std::vector<SpeechExample>& examples, const Vocab& vocab,
                                             const BatchOptions& options, Generator& gen, Dtype dtype) {
  std::vector<std::size_t> lengths;
  for (const auto& e : examples) lengths.push_back(e.features.dimension() == 2 ? e.features.shape(0) : 0);
  std::vector<SpeechBatch> batches;
  for (const auto& indices : batch_order(lengths, options, gen))
    batches.push_back(make_speech_batch(examples, indices, vocab, dtype));
  return batches;
}

}  // namespace attn::data
