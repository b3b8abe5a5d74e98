// Loading costs what the model needs, never what a file claims (issue 28).
// Each bad file is built here, byte by byte (a small zip writer over zlib), and
// loaded in a child process limited to 512 MB of address space: it must be
// refused with an IOError naming the file and the array, not by the limit.
#include "../helpers.hpp"

#include "models/bahdanau.hpp"
#include "io/json_file.hpp"
#include "data/tasks.hpp"
#include "data/vocab.hpp"
#include "train/trainer.hpp"

#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

namespace fs = std::filesystem;
using attn::IOError;
using attn::Tensor;

namespace {

struct TempDir {
  TempDir() {
    static int n = 0;
    path = fs::temp_directory_path() / ("attn_test_load_limits_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
  fs::path path;
};

// ---- building .npz files by hand ---------------------------------------------

template <class Bits>
void put_le(std::string& out, Bits bits) {
  for (std::size_t i = 0; i < sizeof(Bits); ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

// A .npy header (version 1.0, padded to 128 bytes) declaring `shape` of `descr`.
std::string npy_header(const std::string& descr, const std::string& shape) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  dict += std::string(128 - 10 - dict.size() - 1, ' ') + "\n";
  std::string out("\x93NUMPY\x01\x00", 8);
  put_le(out, static_cast<std::uint16_t>(dict.size()));
  return out + dict;
}

// One member as it sits in the archive: what the zip directory declares
// (method, CRC, uncompressed size) and the bytes actually stored.
struct Member {
  std::string name;
  std::uint16_t method = 0;  // 0 stored, 8 deflated
  std::uint32_t crc = 0;
  std::uint32_t size = 0;    // declared uncompressed size
  std::string stored;        // the (compressed) bytes
};

Member stored_member(const std::string& name, const std::string& bytes) {
  Member m{name, 0, 0, static_cast<std::uint32_t>(bytes.size()), bytes};
  m.crc = static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
  return m;
}

// Raw deflate of `parts`, each repeated `times` (a full flush after each part
// makes its compressed form the same every time, so 3 GiB of zeros cost
// 3072 copies of one compressed MiB, not 3 GiB of compression).
Member deflated_member(const std::string& name, const std::vector<std::pair<std::string, std::size_t>>& parts) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY) == Z_OK);
  auto compress = [&](const std::string& in, int flush) {
    std::string out(in.size() + in.size() / 100 + 1024, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    z.next_out = reinterpret_cast<Bytef*>(&out[0]);
    z.avail_out = static_cast<uInt>(out.size());
    REQUIRE(deflate(&z, flush) != Z_STREAM_ERROR);
    REQUIRE(z.avail_in == 0);
    out.resize(out.size() - z.avail_out);
    return out;
  };
  Member m{name, 8, 0, 0, ""};
  std::uint64_t size = 0;
  uLong crc = crc32(0, Z_NULL, 0);
  for (const auto& [bytes, times] : parts) {
    const std::string once = compress(bytes, Z_FULL_FLUSH);
    if (times > 1) REQUIRE(compress(bytes, Z_FULL_FLUSH) == once);
    const uLong part_crc = crc32(0, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size());
    for (std::size_t i = 0; i < times; ++i) {
      m.stored += once;
      crc = crc32_combine(crc, part_crc, static_cast<z_off_t>(bytes.size()));
      size += bytes.size();
    }
  }
  m.stored += compress("", Z_FINISH);
  deflateEnd(&z);
  REQUIRE(size < (std::uint64_t(1) << 32));  // no zip64 here
  m.crc = static_cast<std::uint32_t>(crc);
  m.size = static_cast<std::uint32_t>(size);
  return m;
}

// The archive: local headers and data, the central directory, its end record.
void write_zip(const std::string& path, const std::vector<Member>& members) {
  std::string out, directory;
  for (const Member& m : members) {
    auto common = [&](std::string& s) {
      put_le<std::uint16_t>(s, 20);  // version needed: 2.0
      put_le<std::uint16_t>(s, 0);   // flags
      put_le<std::uint16_t>(s, m.method);
      put_le<std::uint16_t>(s, 0);     // time
      put_le<std::uint16_t>(s, 0x21);  // date: 1980-01-01
      put_le<std::uint32_t>(s, m.crc);
      put_le<std::uint32_t>(s, static_cast<std::uint32_t>(m.stored.size()));
      put_le<std::uint32_t>(s, m.size);
      put_le<std::uint16_t>(s, static_cast<std::uint16_t>(m.name.size()));
      put_le<std::uint16_t>(s, 0);  // extra field length
    };
    const auto offset = static_cast<std::uint32_t>(out.size());
    put_le<std::uint32_t>(out, 0x04034b50);
    common(out);
    out += m.name + m.stored;
    put_le<std::uint32_t>(directory, 0x02014b50);
    put_le<std::uint16_t>(directory, 20);  // made by
    common(directory);
    for (int i = 0; i < 3; ++i) put_le<std::uint16_t>(directory, 0);  // comment, disk, internal attributes
    put_le<std::uint32_t>(directory, 0);                                // external attributes
    put_le<std::uint32_t>(directory, offset);
    directory += m.name;
  }
  const auto directory_offset = static_cast<std::uint32_t>(out.size());
  out += directory;
  put_le<std::uint32_t>(out, 0x06054b50);
  put_le<std::uint16_t>(out, 0);
  put_le<std::uint16_t>(out, 0);
  put_le<std::uint16_t>(out, static_cast<std::uint16_t>(members.size()));
  put_le<std::uint16_t>(out, static_cast<std::uint16_t>(members.size()));
  put_le<std::uint32_t>(out, static_cast<std::uint32_t>(directory.size()));
  put_le<std::uint32_t>(out, directory_offset);
  put_le<std::uint16_t>(out, 0);
  std::ofstream(path, std::ios::binary) << out;
}

// 3 GiB of float64 zeros declared and really held, deflated into ~3 MB: the probe.
Member three_gib_of_zeros(const std::string& name) {
  return deflated_member(name, {{npy_header("<f8", "(402653184,)"), 1}, {std::string(1 << 20, '\0'), 3072}});
}

// ---- running a load in a child limited to 512 MB -------------------------------

struct Outcome {
  int code = -1;            // 0: an IOError, 1: no exception, 2: another exception, else the signal + 100
  std::string message;      // the exception's
  double seconds = 0;       // wall time of the child
  double max_rss_mb = 0;    // its peak resident memory
};

Outcome limited(const std::function<void()>& load) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    const rlimit limit{rlim_t(512) << 20, rlim_t(512) << 20};
    ::setrlimit(RLIMIT_AS, &limit);
    ::alarm(120);  // a safety net only: a runaway load is killed, and the test fails
    std::string message;
    int code = 1;
    try {
      load();
    } catch (const IOError& e) {
      message = e.what(), code = 0;
    } catch (const std::exception& e) {
      message = std::string("not an IOError: ") + e.what(), code = 2;
    }
    if (::write(fds[1], message.data(), message.size()) < 0) code = 3;
    ::_exit(code);
  }
  ::close(fds[1]);
  Outcome out;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof(buffer))) > 0;) out.message.append(buffer, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  rusage usage{};
  REQUIRE(::wait4(pid, &status, 0, &usage) == pid);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.max_rss_mb = usage.ru_maxrss / 1024.0;
  out.code = WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
  MESSAGE("refused in " << out.seconds << " s, peak RSS " << out.max_rss_mb << " MB: " << out.message);
  return out;
}

// Refused with an IOError containing every one of `parts`, within the limit.
void check_refused(const std::function<void()>& load, const std::vector<std::string>& parts) {
  const Outcome out = limited(load);
  CHECK(out.code == 0);
  for (const auto& part : parts) {
    INFO("expected in the message: " << part);
    CHECK(out.message.find(part) != std::string::npos);
  }
  CHECK(out.max_rss_mb < 256);  // far below the limit: nothing was decompressed for the claim
}

// A module holding one parameter, "src_embed.weight" [14, 32], as the seq2seq run.
class Embedding : public attn::nn::Module {
 public:
  Embedding() : Module("Embedding") { register_parameter("weight", weight); }
  Tensor weight = attn::zeros({14, 32});
};
class Model : public attn::nn::Module {
 public:
  Model() : Module("Model") { register_module("src_embed", src_embed); }
  Embedding src_embed;
};

}  // namespace

TEST_CASE("a small file declaring 3 GiB is refused from its header, in a 512 MB address space") {
  TempDir dir;
  const std::string path = dir.file("model.npz");
  write_zip(path, {three_gib_of_zeros("src_embed.weight.npy")});
  CHECK(fs::file_size(path) < 4 << 20);  // a small file, a huge claim

  Model model;
  check_refused([&] { attn::io::load(model, path); },
                {path, "src_embed.weight (checkpoint [402653184], module [14, 32])", "nothing was loaded"});
  // Without a module to compare with, the claim is honest (the stream holds
  // 3 GiB) but cannot be met: a named error, not std::bad_alloc.
  check_refused([&] { attn::io::load_npz(path); },
                {path + ": src_embed.weight.npy: cannot allocate", "[402653184]"});
  // An optimizer's state (the trainer's --resume) is checked against the parameters.
  attn::nn::Adam adam({model.src_embed.weight});
  check_refused([&] { attn::io::load_npz(path, [&](const std::string&) { return adam.state_spec("exp_avg.0"); }); },
                {path + ": src_embed.weight.npy: expected shape [14, 32], found [402653184]"});
}

TEST_CASE("a member whose zip directory size disagrees with its .npy header is named as damaged") {
  TempDir dir;
  const std::string path = dir.file("m.npz");
  Model model;
  // Stored: the header declares [14, 32] float64 (3584 bytes), the directory 40.
  write_zip(path, {stored_member("src_embed.weight.npy", npy_header("<f8", "(14, 32)") + std::string(40, '\0'))});
  check_refused([&] { attn::io::load(model, path); },
                {path + ": src_embed.weight.npy: damaged: its .npy header declares a <f8 array of shape [14, 32] (3584 "
                        "bytes of data), the zip directory 40 bytes"});
  // Deflated: the directory claims 3 GiB from a stream of a few hundred bytes.
  Member member = deflated_member("src_embed.weight.npy", {{npy_header("<f8", "(14, 32)") + std::string(3584, '\0'), 1}});
  member.size = 3u << 30;
  write_zip(path, {member});
  check_refused([&] { attn::io::load(model, path); },
                {path + ": src_embed.weight.npy: damaged: a deflated stream of", "cannot expand to the 3221225472 bytes"});
  // Stored, with a compressed size that is not its size.
  member = stored_member("src_embed.weight.npy", npy_header("<f8", "(14, 32)") + std::string(3584, '\0'));
  member.size = 3u << 30;
  write_zip(path, {member});
  check_refused([&] { attn::io::load_npz(path); }, {path + ": src_embed.weight.npy: damaged: stored uncompressed in"});
}

TEST_CASE("a header and directory claiming more bytes than the stream holds: the read stops where the stream ends") {
  TempDir dir;
  const std::string path = dir.file("m.npz");
  Model model;
  // Header and directory agree on [14, 32] float64, but the deflated stream
  // holds 48 bytes of values: nothing is read past its end.
  Member member = deflated_member("src_embed.weight.npy", {{npy_header("<f8", "(14, 32)") + std::string(48, '\x11'), 1}});
  member.size = 128 + 3584;
  write_zip(path, {member});
  const Tensor before = model.src_embed.weight.detach();
  check_refused([&] { attn::io::load(model, path); }, {path + ": src_embed.weight.npy: damaged"});
  check_refused([&] { attn::io::load_npz(path); }, {path + ": src_embed.weight.npy: damaged"});
  CHECK_THROWS_WITH_SUBSTR(attn::io::load(model, path), IOError, "src_embed.weight.npy: damaged");
  CHECK(model.src_embed.weight.to_array() == before.to_array());  // nothing was half-loaded
}

TEST_CASE("a deflated checkpoint (np.savez_compressed) loads exactly, converted to the module's dtype") {
  TempDir dir;
  const std::string path = dir.file("m.npz");
  xt::xarray<double> values = xt::xarray<double>::from_shape({14, 32});
  for (std::size_t i = 0; i < values.size(); ++i) values.flat(i) = 0.25 * static_cast<double>(i) - 7.0;
  std::string npy = npy_header("<f8", "(14, 32)");
  for (double v : values) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, 8);
    put_le(npy, bits);
  }
  write_zip(path, {deflated_member("src_embed.weight.npy", {{npy, 1}})});
  Model model;
  attn::io::load(model, path);
  CHECK(model.src_embed.weight.to_array() == values);
  model.to(attn::Dtype::Float32);
  attn::io::load(model, path);
  CHECK(model.src_embed.weight.dtype() == attn::Dtype::Float32);
  CHECK(model.src_embed.weight.to_array() == values);  // quarters: exact in float32
  CHECK(attn::io::load_npz(path)[0].second.to_array() == values);
}

TEST_CASE("--resume: a trainer state whose optimizer array claims 3 GiB is refused from its header") {
  attn::Generator gen(3);
  attn::data::SequenceTaskOptions options;
  options.vocab_size = 6;
  options.min_length = 2;
  options.max_length = 5;
  const auto split = attn::data::sequence_split(attn::data::SequenceTask::reverse, 40, 5, options, gen);
  const auto vocab = attn::data::task_vocab(6);
  attn::models::BahdanauConfig c;
  c.src_vocab = c.tgt_vocab = vocab.size();
  c.embed_dim = c.encoder_dim = c.decoder_dim = c.attention_dim = 4;
  attn::models::BahdanauSeq2Seq model(c);
  attn::models::TrainerOptions o;
  o.steps = 2;
  o.batch_size = 8;
  o.log_every = 0;
  attn::models::Trainer trainer(model, split.train, vocab, vocab, o);
  trainer.train();
  TempDir dir;
  const std::string path = dir.file("run");
  trainer.save_checkpoint(path);
  trainer.load_checkpoint(path);  // the honest state loads
  CHECK(trainer.step() == 2);

  // Put the 3 GiB claim in place of optimizer.exp_avg.0, keeping every other array.
  std::vector<Member> honest, members;
  for (const auto& [name, t] : attn::io::load_npz(path + ".trainer.npz")) {
    honest.push_back(stored_member(name + ".npy", attn::io::to_npy(t)));
    members.push_back(name == "optimizer.exp_avg.0" ? three_gib_of_zeros(name + ".npy") : honest.back());
  }
  write_zip(path + ".trainer.npz", members);
  const std::string expected = "expected shape " + attn::shape_str(model.parameters()[0].shape()) + ", found [402653184]";
  check_refused([&] { trainer.load_checkpoint(path); }, {path + ".trainer.npz: optimizer.exp_avg.0.npy: " + expected});
  // A name the optimizer does not keep is named too.
  members = honest;
  members.push_back(stored_member("optimizer.exp_avg.999.npy", attn::io::to_npy(attn::zeros({1}))));
  write_zip(path + ".trainer.npz", members);
  CHECK_THROWS_WITH_SUBSTR(trainer.load_checkpoint(path), IOError, "optimizer.exp_avg.999.npy: Adam::load_state: unexpected entry");
}

TEST_CASE("JSON files: a huge vocab.json and a deeply nested config.json are refused before they cost memory") {
  TempDir dir;
  // 4 GiB, sparse: refused from its size without being read.
  const std::string huge = dir.file("vocab.json");
  std::ofstream(huge) << "{\"src\": {\"tokens\": [";
  fs::resize_file(huge, std::uintmax_t(4) << 30);
  check_refused([&] { attn::io::read_json_file(huge); }, {huge + ": 4294967296 bytes, larger than the 8388608 bytes"});
  // Just over the limit, really written: still refused.
  std::ofstream(huge, std::ios::trunc) << "[" << std::string((8 << 20) + 10, ' ') << "]";
  check_refused([&] { attn::io::read_json_file(huge); }, {huge + ": 8388620 bytes, larger than"});
  CHECK_THROWS_WITH_SUBSTR(attn::data::Vocab::from_json(std::string(9 << 20, ' ')), IOError, "Vocab::from_json: 9437184 bytes");

  // Nesting: 64 levels parse, 65 do not; a million are refused at once.
  auto nested = [](std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  CHECK(attn::io::parse_json(nested(64), "x.json").is_array());
  CHECK_THROWS_WITH_SUBSTR(attn::io::parse_json(nested(65), "x.json"), IOError, "x.json: nested more than 64 levels deep");
  const std::string config = dir.file("config.json");
  std::ofstream(config) << "{\"model\": " << nested(1000000) << "}";
  check_refused([&] { attn::io::read_json_file(config); }, {config + ": nested more than 64 levels deep"});
  CHECK_THROWS_WITH_SUBSTR(attn::data::Vocab::from_json("{\"tokens\": " + nested(100) + "}"), IOError,
                           "Vocab::from_json: nested more than 64");

  // What attn writes still reads, and bad JSON keeps its message.
  std::ofstream(config, std::ios::trunc) << "{\"format\": \"attn-checkpoint\", \"model\": {\"model\": \"bahdanau\"}}";
  CHECK(attn::io::read_json_file(config).at("model").at("model") == "bahdanau");
  std::ofstream(config, std::ios::trunc) << "{\"format\": ";
  CHECK_THROWS_WITH_SUBSTR(attn::io::read_json_file(config), IOError, config + ": not valid JSON (");
  CHECK_THROWS_WITH_SUBSTR(attn::io::read_json_file(dir.file("missing.json")), IOError, "cannot open (missing or unreadable)");
}

TEST_CASE("JSON files: a control character, raw or escaped, is refused with the file and line") {
  TempDir dir;
  const std::string vocab = dir.file("vocab.json");
  auto refused = [&](const std::string& text, const std::string& expected) {
    std::ofstream(vocab, std::ios::trunc | std::ios::binary) << text;
    CHECK_THROWS_WITH_SUBSTR(attn::io::read_json_file(vocab), IOError, vocab + expected);
  };
  refused("{\"tokens\": [\n\"<pad>\",\n\"a\\u0000b\"]}", ":3: a control character (NUL)");
  refused("{\"tokens\": [\n\"a\\u001B\"]}", ":2: a control character (0x1b)");
  refused("{\"tokens\": [\"a\\nb\"]}", ":1: a control character (0x0a)");
  refused("{\"tokens\": [\"a\\u007f\"]}", ":1: a control character (0x7f)");
  refused(std::string("{\"tokens\":\n\n [\"a\x01\"]}"), ":3: a control character (0x01)");
  refused(std::string("{\"tokens\": []}\x00", 16), ":1: a control character (NUL)");
  // Escaped backslashes and printable escapes are text; JSON's blanks between values are allowed.
  std::ofstream(vocab, std::ios::trunc) << "{\r\n\t\"tokens\": [\"a\\\\n\", \"\\u00e9\", \"\\\"\", \"\\/\"]\r\n}";
  const auto tokens = attn::io::read_json_file(vocab).at("tokens");
  CHECK(tokens.at(0) == "a\\n");
  CHECK(tokens.at(1) == "\xC3\xA9");
}

TEST_CASE("npz: an archive with two members of one name is refused, naming the member") {
  TempDir dir;
  const std::string path = dir.file("twice.npz");
  const std::string npy = attn::io::to_npy(attn::zeros({2}));
  write_zip(path, {stored_member("w.npy", npy), stored_member("b.npy", npy), stored_member("w.npy", npy)});
  CHECK_THROWS_WITH_SUBSTR(attn::io::load_npz(path), IOError,
                           "'" + path + "': the archive holds two members named 'w.npy'");
}
