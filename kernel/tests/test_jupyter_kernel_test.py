#!/usr/bin/env python3
"""Jupyter's own kernel test suite (jupyter_kernel_test, Debian's
python3-jupyter-kernel-test; the suite xeus-cling and xeus-cpp test
themselves with) run against attn's kernel, with samples for each feature
the kernel has.

Run by `meson test -C build --suite kernel`; by hand:
  JUPYTER_PATH=build/kernel/share/jupyter /usr/bin/python3 kernel/tests/test_jupyter_kernel_test.py -v
"""
import unittest

import jupyter_kernel_test
from jupyter_client.manager import start_new_kernel


class AttnKernelTests(jupyter_kernel_test.KernelTests):
    kernel_name = "xcpp17"
    language_name = "c++"
    file_extension = ".cpp"

    @classmethod
    def setUpClass(cls):
        # The suite's own start waits 60 s; attn's first header read is slow on a busy machine.
        cls.km, cls.kc = start_new_kernel(kernel_name=cls.kernel_name, startup_timeout=120)
        # Samples below read attn's header; reading it once here keeps each sample within the suite's 15 s.
        cls.kc.execute_interactive('#include "attn_notebook.hpp"', timeout=120)

    code_hello_world = '#include <iostream>\nstd::cout << "hello, world" << std::endl;'
    code_stderr = '#include <iostream>\nstd::cerr << "oops" << std::endl;'

    complete_code_samples = [
        "int complete_a = 1;",
        "int f(int x) {\n  return x;\n}",
        'std::cout << "{ not a brace" << 1;',
        "6 * 7",
    ]
    incomplete_code_samples = ["int f(int x) {", "auto t = attn::tensor({1.0,\n", "#define TWICE(x) \\"]
    invalid_code_samples = ["}", "int g() { return 1; }}"]

    code_page_something = "?std::vector"
    code_generate_error = "int broken = not_declared_anywhere + 1;"

    # A cell's last expression without ';' is its result (execute_result).
    code_execute_result = [
        {"code": "6 * 7", "result": "42"},
        {"code": '#include <string>\nstd::string("hello") + ", world"', "result": "hello, world"},
        {"code": "attn::tensor({1.0, 2.0})", "mime": "text/html"},
    ]
    code_display_data = [
        {"code": '#include <string>\n#include "xcpp/xdisplay.hpp"\nxcpp::display(std::string("foobar"));',
         "mime": "text/plain"},
        {"code": "xcpp::display(attn::tensor({1.0, 2.0}));", "mime": "text/html"},
        # an SVG picture is an <img> of its data URI in text/html (viz/display.hpp: untrusted notebooks keep it)
        {"code": 'xcpp::display(attn::viz::Svg{"<svg xmlns=\\"http://www.w3.org/2000/svg\\"/>"});',
         "mime": "text/html"},
    ]
    code_clear_output = '#include "xcpp/xdisplay.hpp"\nxcpp::clear_output();'

    # Must match exactly one of code_execute_result's codes (glob: `*` is a wildcard here).
    code_history_pattern = "6 * 7"
    supported_history_operations = ("tail", "range", "search")

    code_inspect_sample = "attn::softmax"
    completion_samples = [
        {"text": "attn::layer_no", "matches": {"layer_norm"}},
    ]


if __name__ == "__main__":
    unittest.main(verbosity=2)
