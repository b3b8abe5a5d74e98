// Reads the PyTorch reference values in tests/reference/*.json (written by
// tools/reference/*.py) so tests can compare against PyTorch without Python.
//
//   test::Reference ref("core_math");
//   Tensor x = ref.tensor("softmax_dim1", "x", /*requires_grad=*/true);
//   CHECK(test::allclose(attn::softmax(x, 1), ref.tensor("softmax_dim1", "y"), 1e-12));
#pragma once

#include "attn.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef ATTN_REFERENCE_DIR
#error "tests/meson.build defines ATTN_REFERENCE_DIR"
#endif

namespace test {

class Reference {
 public:
  explicit Reference(const std::string& name) : path_(std::string(ATTN_REFERENCE_DIR) + "/" + name + ".json") {
    std::ifstream in(path_);
    if (!in) throw std::runtime_error("reference file missing: " + path_);
    json_ = nlohmann::json::parse(in);
  }

  bool has(const std::string& case_name, const std::string& tensor_name) const {
    const auto& cases = json_.at("cases");
    return cases.contains(case_name) && cases.at(case_name).contains(tensor_name);
  }

  // A float64 tensor of the recorded values.
  attn::Tensor tensor(const std::string& case_name, const std::string& tensor_name,
                      bool requires_grad = false) const {
    return attn::Tensor(array(case_name, tensor_name), requires_grad);
  }

  xt::xarray<double> array(const std::string& case_name, const std::string& tensor_name) const {
    const auto& cases = json_.at("cases");
    if (!cases.contains(case_name)) throw std::runtime_error(path_ + ": no case '" + case_name + "'");
    const auto& c = cases.at(case_name);
    if (!c.contains(tensor_name))
      throw std::runtime_error(path_ + ": case '" + case_name + "' has no tensor '" + tensor_name + "'");
    const auto& entry = c.at(tensor_name);
    attn::Shape shape = entry.at("shape").get<attn::Shape>();
    std::vector<double> data = entry.at("data").get<std::vector<double>>();
    xt::xarray<double> a = xt::xarray<double>::from_shape(shape);
    if (data.size() != a.size()) throw std::runtime_error(path_ + ": size mismatch in " + case_name + "." + tensor_name);
    std::copy(data.begin(), data.end(), a.begin());
    return a;
  }

  // A case as recorded, for what is not a tensor (the strings of tests/reference/error_rate.json).
  const nlohmann::json& entries(const std::string& case_name) const {
    const auto& cases = json_.at("cases");
    if (!cases.contains(case_name)) throw std::runtime_error(path_ + ": no case '" + case_name + "'");
    return cases.at(case_name);
  }

  // The names of the cases, sorted (nlohmann::json keeps an object's keys sorted).
  std::vector<std::string> case_names() const {
    std::vector<std::string> names;
    for (const auto& item : json_.at("cases").items()) names.push_back(item.key());
    return names;
  }

  // Integer data (token ids, targets) recorded as floats.
  attn::Index index(const std::string& case_name, const std::string& tensor_name) const {
    return xt::cast<std::int64_t>(array(case_name, tensor_name));
  }

  // A boolean mask recorded as 1.0 (true) and 0.0.
  attn::Mask mask(const std::string& case_name, const std::string& tensor_name) const {
    return xt::not_equal(array(case_name, tensor_name), 0.0);
  }

 private:
  std::string path_;
  nlohmann::json json_;
};

}  // namespace test
