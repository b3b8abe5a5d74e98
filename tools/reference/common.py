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


def set_named_weights(named, seed):
    """Uniform(-0.5, 0.5) values, reproducible, for the (name, parameter) pairs in the order given."""
    with torch.no_grad():
        for i, (name, p) in enumerate(named):
            p.copy_(fixed(p.shape, seed + i, -0.5, 0.5, requires_grad=False))


def run_packed(rnn, x, lengths):
    """A recurrent layer over a padded batch-first x as packed sequences, so the padding is never
    read: returns the output padded back to x's length, and the final state."""
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    packed = pack_padded_sequence(x, torch.tensor(lengths), batch_first=True, enforce_sorted=False)
    out, state = rnn(packed)
    out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
    return out, state


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
