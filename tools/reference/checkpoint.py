"""Fixtures for tests/nn/test_checkpoint.cpp: .npz files written by numpy and PyTorch.

Writes into tests/reference/:
  numpy_arrays.npz   np.savez of a few float64, float32, int64, 0-d and empty arrays
  torch_linear.npz   the state_dict of a seeded module holding torch.nn.Linear(3, 2) as "fc"
  checkpoint.json    the values of both (exact: float32 values widen to float64 exactly)
                     and the module's output for a fixed input
  bad_*.npz          archives attn must refuse with an IOError

Run: /usr/bin/python3 tools/reference/checkpoint.py
"""
import os
import zipfile

import numpy as np
import torch

from common import OUT_DIR, Writer, fixed


def out(name):
    return os.path.join(OUT_DIR, name)


def numpy_arrays(w):
    arrays = {
        "f8_matrix": np.array([[1.5, -2.25, 3.0], [1e-300, np.pi, -0.0]]),
        "f4_vector": np.array([0.1, -1.0 / 3.0, 1e30, 7.0], dtype=np.float32),
        "i8_matrix": np.arange(-3, 3, dtype=np.int64).reshape(3, 2),
        "f8_scalar": np.array(42.5),
        "f8_cube": np.linspace(-1.0, 1.0, 24).reshape(2, 3, 4),
        "f8_empty": np.zeros((0, 3)),
    }
    np.savez(out("numpy_arrays.npz"), **arrays)
    w.case("numpy_arrays", **{k: torch.from_numpy(v.astype(np.float64)) for k, v in arrays.items()})


class Parent(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x)


def torch_linear(w):
    torch.manual_seed(0)
    model = Parent()  # float64: common.py sets the default dtype
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    assert list(state) == ["fc.weight", "fc.bias"]
    np.savez(out("torch_linear.npz"), **state)
    x = fixed((4, 3), seed=1, requires_grad=False)
    with torch.no_grad():
        y = model(x)
    w.case("torch_linear", x=x, y=y, **{"fc.weight": model.fc.weight, "fc.bias": model.fc.bias})


def bad_archives():
    np.savez(out("bad_fortran.npz"), a=np.asfortranarray(np.arange(6.0).reshape(2, 3)))
    np.savez(out("bad_big_endian.npz"), a=np.arange(3.0, dtype=">f8"))
    with zipfile.ZipFile(out("bad_not_npy.npz"), "w") as z:
        z.writestr("readme.txt", "a zip archive without any .npy file\n")
    with zipfile.ZipFile(out("bad_magic.npz"), "w") as z:
        z.writestr("a.npy", b"PK but not an array at all")


if __name__ == "__main__":
    w = Writer("checkpoint")
    numpy_arrays(w)
    torch_linear(w)
    bad_archives()
    w.save()
