#!/usr/bin/python3
"""A notebook's run records what it used (kernel/src/usage.hpp, tools/freshness.py): a small
notebook, run through the course's kernel by tools/execute_notebooks.py --record-usage, must
record the header and the compiled file behind the function its cells call, the umbrella
header it includes, a data file it reads, and the cells' hash; and not record a model it never
names, a header only the precompiled header read, nor a file it wrote itself."""
import json
import os
import subprocess
import sys
import tempfile

import nbformat

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
failures = []


def expect(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def main():
    data = os.path.join(ROOT, "docs", "reference-results.json")
    with tempfile.TemporaryDirectory(prefix="attn-usage-test-") as tmp:
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {"name": "xcpp17", "display_name": "C++17", "language": "C++17"}
        nb.cells = [
            nbformat.v4.new_code_cell('#include "attn_notebook.hpp"\n#include <fstream>'),
            nbformat.v4.new_code_cell("attn::Tensor x = attn::tensor({1.0, 2.0, 3.0});\n"
                                      "attn::Tensor y = attn::softmax(x, 0);\ny"),
            nbformat.v4.new_code_cell('std::ifstream in("%s");\nstd::string first;\nstd::getline(in, first);\n'
                                      'first.size() > 0' % data),
        ]
        path = os.path.join(tmp, "usage.ipynb")
        nbformat.write(nb, path)
        out = os.path.join(tmp, "out")
        p = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", "execute_notebooks.py"), "--out", out,
                            "--record-usage", path], capture_output=True, text=True)
        print(p.stdout[-2000:], p.stderr[-2000:])
        expect(p.returncode == 0, "the notebook ran")
        meta = nbformat.read(os.path.join(out, "usage.ipynb"), as_version=4).metadata.get("attn", {})
        uses = meta.get("uses", {})
        print("uses %d files: %s" % (len(uses), " ".join(sorted(uses))))
        for rel in ["core/ops.hpp", "core/tensor.hpp", "core/ops/softmax.cpp", "notebooks/attn_notebook.hpp",
                    "docs/reference-results.json"]:
            expect(rel in uses, "records %s" % rel)
        # Showing y instantiates show_result<Tensor> (kernel/include), whose body finds the tensor's
        # display by argument-dependent lookup in a header the kernel's header does not include.
        expect("viz/display.hpp" in uses, "records viz/display.hpp, reached through show_result<Tensor>'s body")
        for rel in ["models/copynet.cpp", "models/copynet.hpp", "nn/attention/multihead.hpp", "attn.hpp"]:
            expect(rel not in uses, "does not record %s" % rel)
        expect(all(v.startswith("c:") for k, v in uses.items() if k.endswith((".hpp", ".cpp"))),
               "sources are hashed as code")
        expect(bool(meta.get("cells_hash")), "records the cells' hash")
    print("test_record_usage: %s" % ("%d checks failed" % len(failures) if failures else "every check holds"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
