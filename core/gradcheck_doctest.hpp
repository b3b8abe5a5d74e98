// One-line gradient checks in doctest tests:
//   CHECK_GRADCHECK([&](const std::vector<attn::Tensor>& in) { return layer(in[0]); }, {x});
// On failure doctest prints the per-input report.
#pragma once

#include "gradcheck.hpp"

#include <doctest/doctest.h>

#define CHECK_GRADCHECK(...)                                          \
  do {                                                                \
    const ::attn::GradcheckReport attn_report_ = ::attn::gradcheck(__VA_ARGS__); \
    INFO(attn_report_.str());                                         \
    CHECK(attn_report_.ok);                                           \
  } while (false)
