#!/usr/bin/python3
"""Writes the lab notebooks, notebooks/labs/NN_name.ipynb, from each lab's files:
its README.md (what to write), the code of its stub labs/NN_name/lab.cpp (the cell the
learner edits) and the grading call of that stub's main(). One source for both ways in.

    /usr/bin/python3 labs/make_notebooks.py

Notebooks are written without outputs (a learner runs them); an existing notebook is
replaced only when its content changed, by a rename (never half written).
"""
import glob
import json
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "notebooks", "labs")


def source(text):
    lines = text.strip("\n").split("\n")
    return [l + "\n" for l in lines[:-1]] + [lines[-1]]


def cell(kind, text, editable=False):
    c = {"cell_type": kind, "metadata": {}, "source": source(text)}
    if kind == "code":
        c["execution_count"] = None
        c["outputs"] = []
        if editable:
            c["metadata"]["attn"] = {"editable": True}
    return c


def notebook(lab_dir):
    name = os.path.basename(lab_dir)
    number = int(name.split("_")[0])
    readme = open(os.path.join(lab_dir, "README.md")).read()
    stub = open(os.path.join(lab_dir, "lab.cpp")).read()
    include = re.search(r'^#include "(labs/grader/[^"]+)"$', stub, re.M).group(1)
    body = stub[stub.index("\n", stub.index("#include")) + 1:stub.index("// ---- end of your code ----")].strip("\n")
    main = re.search(r"int main\(\) \{\n\s*(\S+) mine\{(.*?)\};\n\s*return (\S+)\(mine\)\.exit_code\(\);", stub, re.S)
    kind, args, grade = main.group(1), " ".join(main.group(2).split()), main.group(3)
    how = (
        "## Your turn\n\n"
        "Edit the next cell and run it (Shift-Enter): it defines your functions and grades them at once, "
        "printing each check and ending with `lab %d: k of M checks pass`. Run it again after each edit "
        "(the kernel redefines the functions of the cell it ran last). The untouched stub throws "
        "\"not implemented\" and passes nothing.\n\n"
        "From your editor instead: `tools/lab.sh %d` grades your copy `labs/work/%s.cpp`; `tools/lab.sh` lists "
        "every lab with its state (untouched, k of M, passed) and the next one to do. The worked solution is `labs/solutions/%s.hpp`: "
        "read it when you are done, or stuck."
        % (number, number, name, name))
    setup = (
        "#ifdef __CLING__  // conda's xeus-cling; attn's own kernel has the repository on its include path\n"
        '#pragma cling add_include_path("../..")\n'
        '#pragma cling add_include_path("..")\n'
        "#endif\n"
        '#include "attn_notebook.hpp"\n'
        '#include "%s"  // loads the compiled graders, build/labs/libattn_labs.so' % include)
    code = body + "\n\n// ---- grade it ----\n%s(%s{%s});" % (grade, kind, args)
    cells = [cell("markdown", readme), cell("code", setup), cell("markdown", how), cell("code", code, editable=True)]
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "C++17", "language": "C++17", "name": "xcpp17"},
            "language_info": {"codemirror_mode": "text/x-c++src", "file_extension": ".cpp",
                              "mimetype": "text/x-c++src", "name": "c++", "version": "17"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def main():
    os.makedirs(OUT, exist_ok=True)
    for lab_dir in sorted(glob.glob(os.path.join(ROOT, "labs", "[0-9][0-9]_*"))):
        if not os.path.exists(os.path.join(lab_dir, "lab.cpp")):
            continue
        nb = notebook(lab_dir)
        for i, c in enumerate(nb["cells"]):
            c["id"] = "lab-%s-%d" % (os.path.basename(lab_dir)[:2], i)
        path = os.path.join(OUT, os.path.basename(lab_dir) + ".ipynb")
        text = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
        if os.path.exists(path) and open(path).read() == text:
            continue
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.replace(path + ".tmp", path)
        print("wrote", os.path.relpath(path, ROOT))


if __name__ == "__main__":
    main()
