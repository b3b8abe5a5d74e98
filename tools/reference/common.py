"""Shared helpers for the PyTorch reference scripts.

Each script in this folder builds fixed inputs, runs PyTorch in float64, and
writes tests/reference/<name>.json with every input, output and gradient.
The C++ tests (tests/reference.hpp) read those files, so the tests never need
Python. Regenerate with:  /usr/bin/python3 tools/reference/<script>.py

File format:
  {"generator": "...", "torch": "1.13.0", "cases": {
     "<case>": {"<tensor name>": {"shape": [2, 3], "data": [... row-major ...]}, ...}}}
Python's float repr round-trips float64 exactly, so nothing is lost.
"""
import json
import os

import torch

torch.set_default_dtype(torch.float64)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT_DIR = os.path.join(ROOT, "tests", "reference")


def fixed(shape, seed, low=-1.0, high=1.0, requires_grad=True):
    """A reproducible float64 tensor of uniform values in [low, high)."""
    g = torch.Generator().manual_seed(seed)
    t = torch.rand(*shape, generator=g, dtype=torch.float64) * (high - low) + low
    return t.requires_grad_(requires_grad)


def encode(t):
    t = torch.as_tensor(t).detach().to(torch.float64)
    return {"shape": list(t.shape), "data": [float(v) for v in t.reshape(-1).tolist()]}


class Writer:
    """Collects named cases and writes them as one JSON file."""

    def __init__(self, name):
        self.name = name
        self.cases = {}

    def case(self, case_name, **tensors):
        if case_name in self.cases:
            raise ValueError("case written twice: " + case_name)
        self.cases[case_name] = {k: encode(v) for k, v in tensors.items()}

    def save(self):
        os.makedirs(OUT_DIR, exist_ok=True)
        path = os.path.join(OUT_DIR, self.name + ".json")
        with open(path, "w") as f:
            json.dump({"generator": "tools/reference/" + self.name + ".py",
                       "torch": torch.__version__, "cases": self.cases}, f, indent=0)
            f.write("\n")
        print("wrote", path, len(self.cases), "cases")
