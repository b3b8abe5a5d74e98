#include "../helpers.hpp"
#include "../reference.hpp"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include <unistd.h>  // getpid

namespace fs = std::filesystem;
using attn::Dtype;
using attn::IOError;
using attn::Tensor;
using attn::io::load;
using attn::io::save;

namespace {

// A fresh directory for one test case, removed with everything in it afterwards.
struct TempDir {
  TempDir() {
    static int n = 0;
    path = fs::temp_directory_path() / ("attn_test_checkpoint_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(path)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  fs::path path;
};

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string reference_file(const std::string& name) { return std::string(ATTN_REFERENCE_DIR) + "/" + name; }

// Same dtype, shape and bit pattern (so -0.0 and NaN payloads count).
bool bit_identical(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (a.dtype() == Dtype::Float64)
    return std::memcmp(a.data<double>().data(), b.data<double>().data(), a.numel() * sizeof(double)) == 0;
  return std::memcmp(a.data<float>().data(), b.data<float>().data(), a.numel() * sizeof(float)) == 0;
}

// A linear layer made of elementwise ops, so that this test needs nothing
// but core: y = sum_i x_i W_oi + b_o, as torch.nn.Linear(in, out).
class Fc : public attn::nn::Module {
 public:
  Fc(std::size_t in, std::size_t out, attn::Generator& gen) : Module("Fc") {
    weight = attn::uniform({out, in}, -1.0, 1.0, Dtype::Float64, gen);
    bias = attn::uniform({out}, -1.0, 1.0, Dtype::Float64, gen);
    register_parameter("weight", weight);
    register_parameter("bias", bias);
  }
  // [B, 1, in] * [out, in] -> [B, out, in], summed over in -> [B, out]
  Tensor forward(const Tensor& x) const { return attn::sum(x * weight, {-1}) + bias; }
  Tensor weight, bias;
};

// A small model: parameters in a child ("fc.weight", "fc.bias"), one of its
// own ("scale") and a buffer ("running"), as a learner would write it.
class Net : public attn::nn::Module {
 public:
  explicit Net(std::uint64_t seed, std::size_t out = 2) : Module("Net"), gen(seed), fc(3, out, gen) {
    register_module("fc", fc);
    register_parameter("scale", scale);
    register_buffer("running", running);
  }
  Tensor forward(const Tensor& x) const { return attn::tanh(fc.forward(x)) * scale + running; }  // [B, 1, 3] -> [B, out]

  attn::Generator gen;
  Fc fc;
  Tensor scale = attn::uniform({1}, 0.5, 1.5, Dtype::Float64, gen);
  Tensor running = attn::uniform({fc.bias.numel()}, -1.0, 1.0, Dtype::Float64, gen);
};

// A module shaped like the PyTorch one of tools/reference/checkpoint.py.
class Parent : public attn::nn::Module {
 public:
  Parent() : Module("Parent"), fc(3, 2, gen) { register_module("fc", fc); }
  attn::Generator gen{5};
  Fc fc;
};

}  // namespace

// ---- the .npy format ---------------------------------------------------------

TEST_CASE("to_npy writes numpy's version 1.0 header, padded to 64 bytes (here 128)") {
  const std::string bytes = attn::io::to_npy(attn::zeros({2, 3}));
  // 10 bytes of preamble + 59 of dict + '\n' = 70, padded to 128 as numpy does.
  REQUIRE(bytes.size() == 128 + 6 * 8);
  CHECK(bytes.compare(0, 8, std::string("\x93NUMPY\x01\x00", 8)) == 0);
  CHECK(static_cast<unsigned char>(bytes[8]) + 256 * static_cast<unsigned char>(bytes[9]) == 128 - 10);
  CHECK(bytes.compare(10, 59, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }") == 0);
  CHECK(bytes.find_first_not_of(' ', 69) == 127);
  CHECK(bytes[127] == '\n');
  const std::string f4 = attn::io::to_npy(attn::zeros({3}, Dtype::Float32));
  CHECK(f4.find("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }") == 10);
  CHECK(attn::io::to_npy(attn::tensor(5.0)).find("'shape': (), }") != std::string::npos);
}

TEST_CASE("to_npy / from_npy round trip is bit-identical in float64 and float32") {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor f8 = attn::tensor({{1.0 / 3.0, -0.0, 1e-310}, {inf, -inf, std::nan("")}});
  Tensor f4 = attn::tensor({0.1, -1e-40, 3e38}, false, Dtype::Float32);
  for (const Tensor& t : {f8, f4, test::randn({2, 3, 4}, 7, false), attn::tensor(2.5), attn::zeros({0, 3})}) {
    Tensor back = attn::io::from_npy(attn::io::to_npy(t), "t.npy");
    CHECK(bit_identical(back, t));
    CHECK_FALSE(back.requires_grad());
  }
}

TEST_CASE("from_npy refuses a bad magic, version, header, dtype, order or data size") {
  const std::string good = attn::io::to_npy(attn::tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}));
  auto with_header = [](const std::string& dict) {  // 2 float64 values of data
    std::string header = dict + std::string(128 - 10 - dict.size() - 1, ' ') + "\n";
    return std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header + std::string(16, '\0');
  };
  std::string magic = good;
  magic[1] = 'X';
  CHECK_THROWS_WITH_SUBSTR(attn::io::from_npy(magic, "m.npz: a.npy"), IOError, "m.npz: a.npy: not a .npy array");
  CHECK_THROWS_WITH_SUBSTR(attn::io::from_npy("", "a.npy"), IOError, "not a .npy array");
  std::string version = good;
  version[6] = 9;
  CHECK_THROWS_WITH_SUBSTR(attn::io::from_npy(version, "a.npy"), IOError, "unsupported .npy version 9");
  CHECK_THROWS_WITH_SUBSTR(attn::io::from_npy(good.substr(0, 9), "a.npy"), IOError, "truncated inside its preamble");
  CHECK_THROWS_WITH_SUBSTR(attn::io::from_npy(good.substr(0, 100), "a.npy"), IOError, "truncated inside its header");
  CHECK_THROWS_WITH_SUBSTR(attn::io::from_npy(good.substr(0, 134), "a.npy"), IOError,
                           "needs 48 bytes of data, the file has 6 (truncated)");
  CHECK_THROWS_WITH_SUBSTR(attn::io::from_npy(good + "x", "a.npy"), IOError, "the file has 49");
  // Headers: the first one is fine (2 float64 values), the others are not.
  CHECK(attn::io::from_npy(with_header("{\"descr\": '<f8', 'shape': (2,), 'fortran_order': False}"), "a.npy").numel() == 2);
  const char* bad_headers[] = {
      "{'descr': '<f8', 'fortran_order': False, 'shape': (2, }",  // unclosed tuple
      "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (2,), }",
      "{'descr': '<f8', 'shape': (2,), }",                          // a key is missing
      "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x': 1}",
      "{'descr': '<f8, 'fortran_order': False, 'shape': (2,), }",   // quotes
      "{'descr': '<f8', 'fortran_order': False, 'shape': (-2,), }",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999999,), }",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), } x",
      "['descr', '<f8']",
  };
  for (const char* header : bad_headers) {
    INFO(header);
    CHECK_THROWS_WITH_SUBSTR(attn::io::from_npy(with_header(header), "a.npy"), IOError, "a.npy: the .npy header does not parse");
  }
  CHECK_THROWS_WITH_SUBSTR(
      attn::io::from_npy(with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }"), "a.npy"),
      IOError, "impossibly large");
  CHECK_THROWS_WITH_SUBSTR(attn::io::from_npy(with_header("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }"), "a.npy"),
                           IOError, "unsupported dtype '|b1'");
  CHECK_THROWS_WITH_SUBSTR(attn::io::from_npy(with_header("{'descr': '<f8', 'fortran_order': True, 'shape': (2,), }"), "a.npy"),
                           IOError, "fortran_order True");
}

// ---- .npz archives -------------------------------------------------------------

TEST_CASE("save_npz / load_npz keep names, order, dtypes and bits") {
  TempDir dir;
  const std::vector<std::pair<std::string, Tensor>> arrays = {
      {"zeta", test::randn({4, 5}, 1, false)},
      {"alpha.weight", test::randn({3}, 2, false).to(Dtype::Float32)},
      {"m", attn::tensor(-0.0)},
  };
  attn::io::save_npz(dir.file("a.npz"), arrays);
  const auto back = attn::io::load_npz(dir.file("a.npz"));
  REQUIRE(back.size() == arrays.size());
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    CHECK(back[i].first == arrays[i].first);
    CHECK(bit_identical(back[i].second, arrays[i].second));
  }
  CHECK(dir.listing() == std::vector<std::string>{"a.npz"});  // no temporary left behind
  CHECK_THROWS_AS(attn::io::save_npz(dir.file("b.npz"), {}), attn::ValueError);
  CHECK_THROWS_WITH_SUBSTR(attn::io::save_npz(dir.file("b.npz"), {{"x", arrays[0].second}, {"x", arrays[1].second}}),
                           attn::ValueError, "'x' appears twice");
  CHECK(dir.listing() == std::vector<std::string>{"a.npz"});
}

TEST_CASE("numpy's np.savez arrays load with their names, in order, exactly") {
  test::Reference ref("checkpoint");
  const auto arrays = attn::io::load_npz(reference_file("numpy_arrays.npz"));
  const std::vector<std::string> names = {"f8_matrix", "f4_vector", "i8_matrix", "f8_scalar", "f8_cube", "f8_empty"};
  REQUIRE(arrays.size() == names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    INFO(names[i]);
    CHECK(arrays[i].first == names[i]);
    CHECK(arrays[i].second.dtype() == (names[i] == "f4_vector" ? Dtype::Float32 : Dtype::Float64));
    const xt::xarray<double> expected = ref.array("numpy_arrays", names[i]);
    CHECK(arrays[i].second.shape() == attn::Shape(expected.shape().begin(), expected.shape().end()));
    CHECK(arrays[i].second.to_array() == expected);  // exact
  }
  CHECK(std::signbit(arrays[0].second.to_array()(1, 2)));  // -0.0 survived
}

// ---- module checkpoints ----------------------------------------------------------

TEST_CASE("a module rebuilt from a checkpoint has bit-identical values and outputs") {
  TempDir dir;
  const std::string path = dir.file("net.npz");
  Net a(1), b(2);
  save(a, path);
  CHECK(dir.listing() == std::vector<std::string>{"net.npz"});
  std::vector<std::string> keys;
  for (const auto& entry : attn::io::load_npz(path)) keys.push_back(entry.first);
  CHECK(keys == std::vector<std::string>{"scale", "fc.weight", "fc.bias", "running"});

  Tensor handle = b.fc.weight;  // e.g. an optimizer's: must see the loaded values
  CHECK_FALSE(bit_identical(b.fc.weight, a.fc.weight));
  load(b, path);
  CHECK(handle.node() == b.fc.weight.node());
  CHECK(bit_identical(b.fc.weight, a.fc.weight));
  CHECK(bit_identical(b.fc.bias, a.fc.bias));
  CHECK(bit_identical(b.scale, a.scale));
  CHECK(bit_identical(b.running, a.running));
  CHECK(b.fc.weight.requires_grad());
  CHECK(b.scale.requires_grad());
  CHECK_FALSE(b.running.requires_grad());
  const Tensor x = test::randn({5, 1, 3}, 3, false);
  CHECK(bit_identical(a.forward(x), b.forward(x)));
}

TEST_CASE("float32 checkpoints round trip, and load converts to the module's dtype") {
  TempDir dir;
  Net a(1), b(2), c(3);
  a.to(Dtype::Float32);
  b.to(Dtype::Float32);
  save(a, dir.file("f4.npz"));
  CHECK(attn::io::load_npz(dir.file("f4.npz"))[1].second.dtype() == Dtype::Float32);
  load(b, dir.file("f4.npz"));
  const Tensor x = test::randn({5, 1, 3}, 3, false).to(Dtype::Float32);
  CHECK(bit_identical(a.forward(x), b.forward(x)));

  load(c, dir.file("f4.npz"));  // float32 file into a float64 module: widened exactly
  CHECK(c.fc.weight.dtype() == Dtype::Float64);
  CHECK(c.fc.weight.requires_grad());
  CHECK(bit_identical(c.fc.weight, a.fc.weight.to(Dtype::Float64)));

  save(c, dir.file("f8.npz"));
  load(b, dir.file("f8.npz"));  // float64 file into a float32 module: rounded to nearest
  CHECK(b.fc.bias.dtype() == Dtype::Float32);
  CHECK(bit_identical(b.fc.bias, a.fc.bias));
}

TEST_CASE("missing, unexpected and mis-shaped keys are all named in one error, and nothing is loaded") {
  TempDir dir;
  const std::string path = dir.file("net.npz");
  Net a(1);
  save(a, path);

  class Other : public attn::nn::Module {
   public:
    Other() : Module("Other"), fc(3, 4, gen) {
      register_module("fc", fc);
      register_parameter("gain", gain);
      register_buffer("running", running);
    }
    attn::Generator gen{9};
    Fc fc;  // [4, 3] and [4] where the file has [2, 3] and [2]
    Tensor gain = attn::ones({2});
    Tensor running = attn::zeros({2});
  } other;
  const Tensor weight_before = other.fc.weight.detach().to(Dtype::Float64);
  try {
    load(other, path);
    FAIL("load did not throw");
  } catch (const IOError& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(message.find(path) != std::string::npos);
    CHECK(message.find("nothing was loaded") != std::string::npos);
    CHECK(message.find("missing keys: gain") != std::string::npos);
    CHECK(message.find("unexpected keys: scale") != std::string::npos);
    CHECK(message.find("fc.weight (checkpoint [2, 3], module [4, 3])") != std::string::npos);
    CHECK(message.find("fc.bias (checkpoint [2], module [4])") != std::string::npos);
  }
  CHECK(bit_identical(other.fc.weight, weight_before));
  CHECK(other.running.to_array() == xt::xarray<double>({0.0, 0.0}));  // matched, but not loaded either
}

TEST_CASE("strict = false loads the keys both have and returns the missing and unexpected ones, as PyTorch's") {
  TempDir dir;
  const std::string path = dir.file("net.npz");
  Net a(1);  // scale, fc.weight, fc.bias, running
  save(a, path);

  class Partial : public attn::nn::Module {
   public:
    Partial() : Module("Partial"), fc(3, 2, gen) {
      register_module("fc", fc);
      register_parameter("gain", gain);
      register_buffer("running", running);
    }
    attn::Generator gen{9};
    Fc fc;
    Tensor gain = attn::full({2}, 3.0);
    Tensor running = attn::zeros({2});
  } partial;

  // strict (the default) refuses, and says what to write.
  CHECK_THROWS_WITH_SUBSTR(load(partial, path), IOError, "missing keys: gain");
  CHECK_THROWS_WITH_SUBSTR(load(partial, path), IOError, "write io::load(module, path, /*strict=*/false)");
  CHECK_FALSE(bit_identical(partial.fc.weight, a.fc.weight));

  const attn::io::IncompatibleKeys keys = load(partial, path, /*strict=*/false);
  CHECK(keys.missing_keys == std::vector<std::string>{"gain"});
  CHECK(keys.unexpected_keys == std::vector<std::string>{"scale"});
  CHECK(bit_identical(partial.fc.weight, a.fc.weight));
  CHECK(bit_identical(partial.fc.bias, a.fc.bias));
  CHECK(bit_identical(partial.running, a.running));
  CHECK(partial.gain.to_array() == xt::xarray<double>({3.0, 3.0}));  // missing: kept

  // A matching file gives two empty lists, strict or not.
  Net b(2);
  const attn::io::IncompatibleKeys none = load(b, path, false);
  CHECK(none.missing_keys.empty());
  CHECK(none.unexpected_keys.empty());
  CHECK(bit_identical(b.fc.weight, a.fc.weight));
  CHECK(load(b, path).missing_keys.empty());

  // A shape mismatch still throws, naming the key and both shapes, and loads nothing.
  Net wide(3, /*out=*/4);
  const Tensor before = wide.scale.detach();
  try {
    load(wide, path, /*strict=*/false);
    FAIL("load did not throw");
  } catch (const IOError& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(message.find("fc.weight (checkpoint [2, 3], module [4, 3])") != std::string::npos);
    CHECK(message.find("nothing was loaded") != std::string::npos);
  }
  CHECK(bit_identical(wide.scale, before));
}

TEST_CASE("a PyTorch state_dict exported with np.savez loads, and the outputs match PyTorch") {
  test::Reference ref("checkpoint");
  Parent model;
  load(model, reference_file("torch_linear.npz"));
  CHECK(model.fc.weight.to_array() == ref.array("torch_linear", "fc.weight"));  // exact
  CHECK(model.fc.bias.to_array() == ref.array("torch_linear", "fc.bias"));
  xt::xarray<double> x = ref.array("torch_linear", "x");  // [4, 3]
  x.reshape({4, 1, 3});
  const Tensor y = model.fc.forward(Tensor(x));  // [4, 2]
  CHECK(test::allclose(y, ref.tensor("torch_linear", "y"), 1e-12));
}

// ---- broken files ------------------------------------------------------------------

TEST_CASE("missing, empty, garbage, truncated and foreign files give an IOError naming the file") {
  TempDir dir;
  Parent model;
  const Tensor before = model.fc.weight.detach().to(Dtype::Float64);
  const std::string missing = dir.file("missing.npz");
  CHECK_THROWS_WITH_SUBSTR(load(model, missing), IOError, missing);
  CHECK_THROWS_WITH_SUBSTR(attn::io::load_npz(missing), IOError, "No such file");
  CHECK_THROWS_WITH_SUBSTR(attn::io::load_npz(dir.path.string()), IOError, dir.path.string());  // a directory

  const std::string garbage = dir.file("garbage.npz");
  std::string noise;
  for (int i = 0; i < 5000; ++i) noise += static_cast<char>((i * 7919 + 13) % 251);
  write_bytes(garbage, noise);
  CHECK_THROWS_WITH_SUBSTR(load(model, garbage), IOError, garbage);
  write_bytes(garbage, "");
  CHECK_THROWS_WITH_SUBSTR(load(model, garbage), IOError, garbage);

  // Cut a good checkpoint at many points: never a crash, always an IOError with the path.
  save(model, dir.file("good.npz"));
  const std::string good = read_bytes(dir.file("good.npz"));
  const std::string cut = dir.file("cut.npz");
  for (std::size_t size : {std::size_t(1), std::size_t(4), std::size_t(30), std::size_t(100), good.size() / 2,
                           good.size() - 30, good.size() - 1}) {
    INFO("cut at " << size << " of " << good.size());
    write_bytes(cut, good.substr(0, size));
    CHECK_THROWS_WITH_SUBSTR(load(model, cut), IOError, cut);
  }
  // Flip bytes inside the stored data: the zip's CRC check catches it.
  std::string flipped = good;
  const std::size_t at = flipped.find("\x93NUMPY") + 140;  // in fc.weight's values
  flipped[at] = static_cast<char>(flipped[at] ^ 0x5a);
  write_bytes(cut, flipped);
  CHECK_THROWS_WITH_SUBSTR(load(model, cut), IOError, "CRC error");

  const std::pair<const char*, const char*> foreign[] = {
      {"bad_not_npy.npz", "readme.txt: not a .npy file"},
      {"bad_magic.npz", "a.npy: not a .npy array"},
      {"bad_fortran.npz", "a.npy: fortran_order True"},
      {"bad_big_endian.npz", "a.npy: unsupported dtype '>f8'"},
  };
  for (const auto& [name, what] : foreign) {
    INFO(name);
    CHECK_THROWS_WITH_SUBSTR(load(model, reference_file(name)), IOError, reference_file(name) + ": " + what);
  }
  CHECK(bit_identical(model.fc.weight, before));
}

TEST_CASE("a failed save leaves the old checkpoint intact and no temporary file") {
  TempDir dir;
  const std::string path = dir.file("net.npz");
  Net a(1), b(2);
  save(a, path);
  const std::string old_bytes = read_bytes(path);

  // A directory that doesn't exist: nothing can be created.
  const std::string nowhere = dir.file("no/such/dir/net.npz");
  CHECK_THROWS_WITH_SUBSTR(save(b, nowhere), IOError, nowhere);

  // The target is a directory: the archive is written, then rename() fails.
  fs::create_directory(dir.file("taken"));
  CHECK_THROWS_WITH_SUBSTR(save(b, dir.file("taken")), IOError, "cannot rename");
  CHECK(fs::is_empty(dir.path / "taken"));

  // An undefined tensor: refused before any file is touched.
  b.fc.bias = Tensor();
  CHECK_THROWS_WITH_SUBSTR(save(b, path), attn::ValueError, "'fc.bias' is undefined");

  CHECK(dir.listing() == std::vector<std::string>{"net.npz", "taken"});
  CHECK(read_bytes(path) == old_bytes);
  Net c(3);
  load(c, path);
  CHECK(bit_identical(c.fc.weight, a.fc.weight));
}

// For the one-off check that numpy reads what attn writes (tools/reference/check_npz_readable.py):
//   ATTN_SAMPLE_NPZ=/tmp/attn_sample.npz build/tests/test_nn_checkpoint -tc='*sample*'
TEST_CASE("write the sample for check_npz_readable.py when asked") {
  const char* target = std::getenv("ATTN_SAMPLE_NPZ");
  if (!target) return;
  attn::io::save_npz(target, {{"f8_arange", attn::tensor({{0.0, 0.25, 0.5}, {0.75, 1.0, 1.25}})},
                              {"f4_third", attn::full({3}, 1.0 / 3.0, Dtype::Float32)},
                              {"f8_scalar", attn::tensor(-0.0)},
                              {"fc.weight", attn::tensor({{1e-310, -2.5}})}});
  MESSAGE("wrote " << std::string(target));
}
