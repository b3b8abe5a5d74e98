// The first cell of every chapter notebook: #include "attn_notebook.hpp"
//
// Three ways to run the notebooks, one header:
// - attn's own kernel (kernel/, `tools/notebooks.sh`, kernel xcpp17 on clang 19):
//   it loads libattn and puts the repository and notebooks/ on the include path
//   itself; xcpp/xdisplay.hpp comes from kernel/include.
// - conda's xeus-cling (also kernel xcpp17): the pragmas below find attn's
//   headers and load libattn from a local build (`tools/setup.sh && ninja -C build`).
#pragma once

#ifdef __CLING__
#pragma cling add_include_path("..")
#pragma cling add_library_path("../build")
#pragma cling load("attn")
#endif

#include "../attn.hpp"
#include "../viz/display.hpp"

#include <iostream>

#include "xcpp/xdisplay.hpp"
#include "../viz/quote.hpp"
