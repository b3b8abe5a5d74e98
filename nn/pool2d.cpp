#include "pool2d.hpp"

namespace attn::nn {

namespace {

std::string pair_str(Size2 s) { return "(" + std::to_string(s[0]) + ", " + std::to_string(s[1]) + ")"; }

std::string settings(Size2 kernel, Size2 stride, Size2 padding) {
  return "kernel_size=" + pair_str(kernel) + ", stride=" + pair_str(stride) + ", padding=" + pair_str(padding);
}

// Refused here, when the layer is built, rather than at its first forward.
void check(const char* layer, Size2 kernel, Size2 stride, Size2 padding) {
  if (kernel[0] == 0 || kernel[1] == 0 || stride[0] == 0 || stride[1] == 0)
    throw ValueError(std::string(layer) + ": kernel_size and stride must be >= 1, got " + settings(kernel, stride, padding));
  if (2 * padding[0] > kernel[0] || 2 * padding[1] > kernel[1])
    throw ValueError(std::string(layer) + ": padding must be at most half the kernel, got " +
                     settings(kernel, stride, padding));
}

std::optional<Size2> both(std::optional<std::size_t> s) {
  return s ? std::optional<Size2>(Size2{*s, *s}) : std::nullopt;
}

}  // namespace

MaxPool2d::MaxPool2d(Size2 kernel_size, std::optional<Size2> stride, Size2 padding)
    : Module("MaxPool2d"), kernel_size(kernel_size), stride(stride.value_or(kernel_size)), padding(padding) {
  check("MaxPool2d", this->kernel_size, this->stride, this->padding);
}

MaxPool2d::MaxPool2d(std::size_t kernel_size, std::optional<std::size_t> stride, std::size_t padding)
    : MaxPool2d(Size2{kernel_size, kernel_size}, both(stride), Size2{padding, padding}) {}

std::string MaxPool2d::extra_repr() const { return settings(kernel_size, stride, padding); }

AvgPool2d::AvgPool2d(Size2 kernel_size, std::optional<Size2> stride, Size2 padding)
    : Module("AvgPool2d"), kernel_size(kernel_size), stride(stride.value_or(kernel_size)), padding(padding) {
  check("AvgPool2d", this->kernel_size, this->stride, this->padding);
}

AvgPool2d::AvgPool2d(std::size_t kernel_size, std::optional<std::size_t> stride, std::size_t padding)
    : AvgPool2d(Size2{kernel_size, kernel_size}, both(stride), Size2{padding, padding}) {}

std::string AvgPool2d::extra_repr() const { return settings(kernel_size, stride, padding); }

}  // namespace attn::nn
