#!/usr/bin/env python3
"""Soak test of attn's Jupyter kernel (issue 62): a failed cell leaves the kernel
as it was, over many learner-like cells made from a seed.

A generator writes cells as a learner would, and knows what each should do:
definitions and redefinitions of ints, doubles, strings, vectors, functions,
structs and attn tensors; cells that end with a value to show; typos at random
places (a misspelt name or type, a missing parenthesis, an unknown call: a
compile error); run-time exceptions (std::runtime_error, attn's ShapeError) and
a code that fails only when linked; %undo; re-runs of earlier cells.

Two references check every reply:
  1. The generator's model of the kernel's state (which names each successful
     cell defined, the kernel's rules for running a cell again and %undo): each
     cell's status and error name must be the expected ones, and an int or a
     string shown must have the expected value.
  2. A replay: the successful cells alone, in a fresh kernel, must give the
     same output and shown values as in the kernel that also saw the failures.
     (A failed re-run of the most recent cell takes that cell back, as the
     kernel says in a note: the replay sends `%undo 1` there.)

Run from the build's meson test (a few hundred cells) or by hand:
  JUPYTER_PATH=build/kernel/share/jupyter python3 kernel/tests/soak.py --cells 10000 --seed 7
A mismatch prints the seed, the cell and both replies; the exit status is 1.
"""
import argparse
import os
import queue
import random
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_kernel import run, start, text  # noqa: E402


class Cell:
    def __init__(self, code, defs=(), refs=(), expect="ok", ename=None, shows=None, kind=""):
        self.code = code
        self.defs = dict(defs)      # name -> its kind, what the cell defines
        self.refs = set(refs)       # names it uses (not its own)
        self.expect = expect        # "ok" or "error" when every name it uses is defined
        self.ename = ename          # the error's name, when expect == "error"
        self.shows = shows          # the value's text/plain, when the generator knows it
        self.kind = kind            # what the generator made, for the report


class Model:
    """The kernel's state as the generator sees it: the cells that count (the
    kernel's own list: successful cells, most recent last), each with its names."""

    def __init__(self):
        self.cells = []  # [(code, {name: kind}, values)]

    def defined(self):
        names = {}
        for _, defs, _ in self.cells:
            names.update(defs)
        return names

    def values(self):
        vals = {}
        for _, _, v in self.cells:
            vals.update(v)
        return vals

    def outcome(self, cell):
        """What the kernel does with `cell`: (status, ename, rerun), rerun being
        whether it takes back the most recent cell first."""
        for k, (_, defs, _) in enumerate(self.cells[:-1]):
            if set(defs) & set(cell.defs):
                return "error", "RedefinitionError", False
        rerun = bool(self.cells) and bool(set(self.cells[-1][1]) & set(cell.defs))
        names = dict(self.defined())
        if rerun:
            for n in self.cells[-1][1]:
                names.pop(n, None)
        if not cell.refs <= set(names):
            return "error", "CompileError", rerun
        return cell.expect, cell.ename, rerun

    def apply(self, cell, status, rerun, values):
        if rerun:
            self.cells.pop()
        if status == "ok":
            self.cells.append((cell.code, cell.defs, values))

    def undo(self, n):
        del self.cells[len(self.cells) - n:]


class Generator:
    KINDS = ["int", "double", "string", "vector", "tensor", "function", "struct"]

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.serial = 0

    def name(self, kind):
        self.serial += 1
        return {"int": "i", "double": "d", "string": "s", "vector": "w", "tensor": "t", "function": "f",
                "struct": "S", "object": "o"}[kind] + "_%d" % self.serial

    def pick(self, names, kind):
        have = [n for n, k in names.items() if k == kind]
        return self.rng.choice(sorted(have)) if have else None

    def definition(self, model, name=None, kind=None):
        """A cell defining one name (new, or `name` again), maybe showing a value."""
        r, names, values = self.rng, model.defined(), model.values()
        kind = kind or r.choice(self.KINDS)
        name = name or self.name(kind)
        show = r.random() < 0.6
        refs, shows, vals = set(), None, {}
        if kind == "int":
            other = self.pick({n: k for n, k in names.items() if n != name}, "int")
            base = r.randint(-50, 50)
            if other and other in values and r.random() < 0.5:
                code = "int %s = %s + %d;" % (name, other, base)
                refs.add(other)
                value = values[other] + base
            else:
                code = "int %s = %d;" % (name, base)
                value = base
            vals[name] = value
            if show:
                code += "\n%s" % name
                shows = str(value)
        elif kind == "double":
            code = "double %s = %d.5;" % (name, r.randint(0, 9))
            if show:
                code += "\n%s * 2" % name
        elif kind == "string":
            word = r.choice(["attention", "query", "key", "value", "softmax"])
            code = 'std::string %s = "%s";' % (name, word)
            if show:
                code += '\n%s + "!"' % name
                shows = word + "!"
        elif kind == "vector":
            code = "std::vector<double> %s = {%s};" % (name, ", ".join("%d.0" % r.randint(0, 9) for _ in range(r.randint(1, 4))))
            if show:
                code += "\n" + r.choice([name, "%s.size()" % name])
        elif kind == "tensor":
            source = self.pick({n: k for n, k in names.items() if n != name}, "tensor")
            if source and r.random() < 0.5:
                code = "attn::Tensor %s = attn::softmax(%s, 0);" % (name, source)
                refs.add(source)
            else:
                code = "attn::Tensor %s = attn::tensor({%s});" % (name, ", ".join("%d.0" % r.randint(0, 9) for _ in range(3)))
            if show:
                code += "\n%s" % name
        elif kind == "function":
            code = "int %s(int a) { return a * %d + 1; }" % (name, r.randint(2, 9))
            if show:
                code += "\n%s(%d)" % (name, r.randint(0, 9))
        else:  # a struct, and an object of it: a value with no display shows its type's name
            obj = self.name("object")
            code = "struct %s { int a; double b; };\n%s %s = %s{%d, 1.5};" % (name, name, obj, name, r.randint(0, 9))
            if show:
                code += "\n%s" % obj
            return Cell(code, {name: kind, obj: "object"}, refs, shows=shows, kind="struct"), vals
        return Cell(code, {name: kind}, refs, shows=shows, kind=kind), vals

    def use(self, model):
        """A cell that defines nothing: prints or shows what earlier cells made."""
        r, names = self.rng, model.defined()
        if not names:
            return Cell('std::cout << "nothing yet\\n";', kind="print"), {}
        n = r.choice(sorted(names))
        k = names[n]
        expr = {"int": n, "double": n, "string": n, "vector": "%s.size()" % n, "tensor": "%s.shape()[0]" % n,
                "function": "%s(3)" % n, "struct": "sizeof(%s)" % n, "object": "%s.a" % n}[k]
        if r.random() < 0.5:
            return Cell('std::cout << %s << "\\n";' % expr, refs={n}, kind="print"), {}
        shows = str(model.values()[n]) if k == "int" and n in model.values() else None
        return Cell(expr, refs={n}, shows=shows, kind="show"), {}

    def typo(self, cell):
        """The same cell with one mistake that clang refuses."""
        r = self.rng
        lines = cell.code.split("\n")
        i = r.randrange(len(lines))
        way = r.choice(["name", "type", "call", "paren"])
        line = lines[i]
        uses = [m for m in re.finditer(r"\b[a-zA-Z]_\d+\b", line)
                if m.group(0) in cell.refs or cell.code.find(m.group(0)) < sum(len(l) + 1 for l in lines[:i]) + m.start()]
        if way == "name" and uses:  # a name used (not the one declared), misspelt: i_3 -> i_3x
            m = r.choice(uses)
            line = line[:m.end()] + "x" + line[m.end():]
        elif way == "type" and re.search(r"\b(int|double|std::string|attn::Tensor|std::vector)\b", line):
            line = re.sub(r"\b(int|double|std::string|attn::Tensor|std::vector)\b",
                          lambda m: {"int": "itn", "double": "dobule", "std::string": "std::strng",
                                     "attn::Tensor": "attn::Tensr", "std::vector": "std::vectr"}[m.group(1)], line, count=1)
        elif way == "paren" and "(" in line:
            line = line.replace(")", "", 1) if ")" in line else line + ")"
        else:
            lines.insert(i, "not_a_function_%d(1);" % r.randint(0, 99))
            line = lines[i]
        lines[i] = line
        return Cell("\n".join(lines), cell.defs, cell.refs, expect="error", ename="CompileError", kind="typo " + way)

    def runtime_failure(self, cell):
        """The same definitions, then a failure at run time."""
        r = self.rng
        way = r.choice(["throw", "shape", "link"])
        body = cell.code
        if re.search(r"\n[^\n;{}]*$", body):  # drop a shown value: the failure comes first
            body = body[:body.rfind("\n")]
        if way == "throw":
            code = body + '\nstd::cout << "before the throw\\n";\nthrow std::runtime_error("learner\'s error");'
            return Cell(code, cell.defs, cell.refs, "error", "std::runtime_error", kind="throw")
        if way == "shape":
            code = body + "\nattn::softmax(attn::tensor({1.0, 2.0}), 3);"
            return Cell(code, cell.defs, cell.refs, "error", "attn::ShapeError", kind="shape error")
        fn = "declared_only_%d" % r.randint(0, 999)
        code = body + "\nint %s(int);\n%s(1)" % (fn, fn)
        defs = dict(cell.defs)
        defs[fn] = "function"
        return Cell(code, defs, cell.refs, "error", "LinkError", kind="link error")

    def next(self, model, history):
        """The next cell, and the values its definitions give (for the model)."""
        r = self.rng
        x = r.random()
        names = model.defined()
        if x < 0.30:
            return self.definition(model)
        if x < 0.45:
            return self.use(model)
        if x < 0.60:  # a typo in a new cell (or in a redefinition)
            cell, vals = self.definition(model) if r.random() < 0.7 else self.use(model)
            return self.typo(cell), {}
        if x < 0.68:
            cell, vals = self.definition(model)
            return self.runtime_failure(cell), {}
        if x < 0.78 and names:  # a redefinition of a name: the most recent cell's (run again), or any
            if model.cells and model.cells[-1][1] and r.random() < 0.7:
                name = r.choice(sorted(model.cells[-1][1]))
            else:
                name = r.choice(sorted(names))
            kind = names[name]
            if kind in ("object", "struct"):
                return self.use(model)
            return self.definition(model, name, kind)
        if x < 0.86 and history:  # an earlier cell, sent again as it was
            return r.choice(history[-12:]), None
        if x < 0.92 and len(model.cells) > 1:
            n = r.randint(1, min(3, len(model.cells) - 1))  # never the first cell (the #include)
            return Cell("%%undo %d" % n if n > 1 or r.random() < 0.5 else "%undo", kind="undo"), {"undo": n}
        return self.use(model)


def send(kc, km, code):
    reply, outputs = run(kc, code, km=km, timeout=120)
    results = [c["data"].get("text/plain") for k, c in outputs if k == "execute_result"]
    return {
        "status": reply["status"],
        "ename": reply.get("ename"),
        "evalue": reply.get("evalue", ""),
        "stdout": text(outputs, "stdout"),
        "stderr": text(outputs, "stderr"),
        "result": results[0] if results else None,
    }


def same_counts(s):
    """Texts that name cells (`undid In [12]`) compare without the numbers."""
    return re.sub(r"In \[\d+\]", "In [n]", s)


def soak(seed, cells, log=None, replay=True, trace=False):
    gen = Generator(seed)
    model = Model()
    km, kc = start()
    first = Cell('#include "attn_notebook.hpp"\nint i_0 = 0;', {"i_0": "int"}, kind="include")
    sent = []           # (code, reply) in order
    history = []        # cells sent, for re-runs
    mismatches = []
    injected = 0
    t0 = time.time()
    try:
        for index in range(cells):
            if index == 0:
                cell, vals = first, {"i_0": 0}
            else:
                cell, vals = gen.next(model, history)
            rerun_of_earlier = vals is None
            if rerun_of_earlier:  # the values it gives now depend on the names it uses: not modelled
                vals = {}
            if cell.kind == "undo":
                n = vals["undo"]
                expect_status, expect_ename, rerun = "ok", None, False
            else:
                expect_status, expect_ename, rerun = model.outcome(cell)
            injected += expect_status == "error"
            if trace:
                print("cell %d (%s, expect %s %s): %r" % (index, cell.kind, expect_status, expect_ename or "", cell.code),
                      flush=True)
            try:
                got = send(kc, km, cell.code)
            except queue.Empty:
                problem = "the kernel %s" % ("hung" if km.is_alive() else "died")
                mismatches.append((index, cell.code, problem))
                print("MISMATCH seed %d cell %d (%s):\n%s\n-> %s" % (seed, index, cell.kind, cell.code, problem),
                      flush=True)
                break
            sent.append((cell.code, got, rerun))
            problem = None
            if got["status"] != expect_status or (expect_ename and got["ename"] != expect_ename):
                problem = "expected %s %s, got %s %s: %s" % (expect_status, expect_ename or "", got["status"],
                                                             got["ename"] or "", got["evalue"][:300])
            elif got["status"] == "ok" and cell.shows is not None and not rerun_of_earlier and got["result"] != cell.shows:
                problem = "expected the value %r, got %r" % (cell.shows, got["result"])
            if problem:
                mismatches.append((index, cell.code, problem))
                print("MISMATCH seed %d cell %d (%s):\n%s\n-> %s" % (seed, index, cell.kind, cell.code, problem),
                      flush=True)
            if cell.kind == "undo":
                model.undo(n)
            else:
                model.apply(cell, got["status"] if not problem else expect_status, rerun, vals)
                history.append(cell)
            if log:
                log.write("%d %s %s\n" % (index, got["status"], cell.kind))
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    t_first = time.time() - t0

    replayed = 0
    if replay and not mismatches:
        km, kc = start()
        try:
            for index, (code, got, rerun) in enumerate(sent):
                if got["status"] != "ok":
                    if rerun and "was taken back to run this cell again" in got["stderr"]:
                        send(kc, km, "%undo 1")
                    continue
                replayed += 1
                try:
                    again = send(kc, km, code)
                except queue.Empty:
                    again = {"status": "the kernel died or hung", "stdout": "", "result": None}
                keys = ("status", "stdout", "result")
                if any(same_counts(str(again[k])) != same_counts(str(got[k])) for k in keys):
                    problem = "replay differs: %r vs %r" % ({k: got[k] for k in keys}, {k: again[k] for k in keys})
                    mismatches.append((index, code, problem))
                    print("MISMATCH seed %d cell %d (replay of the successful cells):\n%s\n-> %s" %
                          (seed, index, code, problem), flush=True)
                    break
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
    return {"seed": seed, "cells": cells, "injected": injected, "mismatches": len(mismatches),
            "replayed": replayed, "seconds": round(time.time() - t0, 1), "first_pass_seconds": round(t_first, 1)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, action="append", help="seed (repeat for several runs); default 1")
    ap.add_argument("--cells", type=int, default=300, help="cells per seed (default 300)")
    ap.add_argument("--no-replay", action="store_true", help="check against the model only")
    ap.add_argument("--trace", action="store_true", help="print every cell before it is sent")
    args = ap.parse_args()
    failed = False
    total = {"cells": 0, "injected": 0, "mismatches": 0, "seconds": 0.0}
    for seed in args.seed or [1]:
        result = soak(seed, args.cells, replay=not args.no_replay, trace=args.trace)
        print("seed %(seed)d: %(cells)d cells, %(injected)d failures injected, %(mismatches)d mismatches, "
              "%(replayed)d successful cells replayed, %(seconds)s s" % result, flush=True)
        for k in total:
            total[k] += result[k]
        if result["mismatches"]:
            failed = True
            print("replay it: JUPYTER_PATH=build/kernel/share/jupyter python3 kernel/tests/soak.py --seed %d --cells %d"
                  % (seed, args.cells))
    if len(args.seed or [1]) > 1:
        print("total: %(cells)d cells, %(injected)d failures injected, %(mismatches)d mismatches, %(seconds).0f s" % total)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
