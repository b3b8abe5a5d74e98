#include "dot.hpp"

#include "record.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

namespace attn {

namespace {

constexpr std::size_t kMaxShownElements = 6;

// Record labels treat { } | < > " and \ as syntax: escape them.
std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::string("{}|<>\"\\").find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

// Values nested in brackets as the shape says, 4 significant digits: [[1, 2.5], [-3, 0.1235]].
void print_nested(std::ostream& os, const std::vector<double>& v, const Shape& shape, std::size_t dim,
                  std::size_t& next) {
  if (dim == shape.size()) {
    os << v[next++];
    return;
  }
  os << "[";
  for (std::size_t i = 0; i < shape[dim]; ++i) {
    if (i) os << ", ";
    print_nested(os, v, shape, dim + 1, next);
  }
  os << "]";
}

std::string format(const std::vector<double>& v, const Shape& shape) {
  std::ostringstream os;
  os.precision(4);
  std::size_t next = 0;
  print_nested(os, v, shape, 0, next);
  return os.str();
}

template <class T>
std::vector<double> flat(const xt::xarray<T>& a) {
  return std::vector<double>(a.begin(), a.end());
}

// "{ tanh | [2] | value [0.7616, -0.964] | grad [0.42, 0.07] }"
template <class T>
std::string label(const Node<T>& node) {
  std::string s = "{ " + escape(node.op) + " | " + escape(shape_str(node.shape()));
  if (node.numel() <= kMaxShownElements) {
    s += " | value " + escape(format(flat(node.value), node.shape()));
    if (node.has_grad) s += " | grad " + escape(format(flat(node.grad), node.shape()));
  }
  return s + " }";
}

std::string label_of(const NodeBase& node) {
  if (node.dtype() == Dtype::Float32) return label(static_cast<const Node<float>&>(node));
  return label(static_cast<const Node<double>&>(node));
}

}  // namespace

std::string to_dot(const Tensor& t) {
  check_inputs("to_dot", {&t});
  // Number the nodes in the order a depth-first walk (explicit stack, no recursion) meets them.
  std::unordered_map<const NodeBase*, std::size_t> id;
  std::vector<const NodeBase*> nodes, stack{t.node().get()};
  id[t.node().get()] = 0;
  nodes.push_back(t.node().get());
  while (!stack.empty()) {
    const NodeBase* node = stack.back();
    stack.pop_back();
    for (const auto& in : node->inputs)
      if (id.emplace(in.get(), nodes.size()).second) {
        nodes.push_back(in.get());
        stack.push_back(in.get());
      }
  }

  std::ostringstream dot;
  dot << "digraph attn {\n  rankdir=LR;\n  node [shape=record, fontname=\"monospace\"];\n";
  for (const NodeBase* node : nodes) {
    dot << "  n" << id[node] << " [label=\"" << label_of(*node) << "\"";
    if (node->is_leaf && node->requires_grad) dot << ", style=filled, fillcolor=lightblue";  // trainable inputs
    dot << "];\n";
  }
  for (const NodeBase* node : nodes)
    for (const auto& in : node->inputs) dot << "  n" << id[in.get()] << " -> n" << id[node] << ";\n";
  dot << "}\n";
  return dot.str();
}

std::string to_svg(const Tensor& t) {
  const std::string text = to_dot(t);
  // dot reads the graph from a temporary file and writes SVG to our pipe; its
  // error messages go to a second file, so they cannot mix with the SVG.
  std::string input = (std::filesystem::temp_directory_path() / "attn_graph_XXXXXX").string();
  const int fd = mkstemp(input.data());
  if (fd < 0) throw IOError("to_svg: cannot create a temporary file in " + std::filesystem::temp_directory_path().string());
  close(fd);
  const std::string errors = input + ".err";
  std::ofstream(input) << text;

  const std::string command = "dot -Tsvg '" + input + "' 2>'" + errors + "'";
  std::string svg;
  int status = -1;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) svg.append(buffer, n);
    status = pclose(pipe);
  }
  std::ostringstream message;
  message << std::ifstream(errors).rdbuf();
  std::remove(input.c_str());
  std::remove(errors.c_str());

  if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 127)
    throw IOError("to_svg: the Graphviz program 'dot' was not found; install Graphviz (e.g. apt install graphviz) "
                  "or render the text of to_dot() elsewhere");
  if (status != 0) throw IOError("to_svg: 'dot -Tsvg' failed (status " + std::to_string(status) + "): " + message.str());
  return svg;
}

}  // namespace attn
