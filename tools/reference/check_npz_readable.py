"""One-off check, by hand, that numpy reads the .npz files attn writes.

The C++ tests must not need Python, so this is not a test. Run:

  ATTN_SAMPLE_NPZ=/tmp/attn_sample.npz build/tests/test_nn_checkpoint -tc='*sample*'
  /usr/bin/python3 tools/reference/check_npz_readable.py /tmp/attn_sample.npz

It loads the sample with np.load, compares every value bit for bit with what
the test wrote, and checks that each .npy member is byte-identical to the one
np.save writes for the same array.
"""
import io
import sys
import zipfile

import numpy as np

EXPECTED = {
    "f8_arange": np.arange(6.0).reshape(2, 3) / 4.0,
    "f4_third": np.full(3, 1.0 / 3.0, dtype=np.float32),
    "f8_scalar": np.array(-0.0),
    "fc.weight": np.array([[1e-310, -2.5]]),
}


def main(path):
    loaded = np.load(path)
    assert list(loaded.keys()) == list(EXPECTED), (list(loaded.keys()), list(EXPECTED))
    for name, want in EXPECTED.items():
        got = loaded[name]
        assert got.dtype == want.dtype and got.shape == want.shape, (name, got.dtype, got.shape)
        assert got.tobytes() == want.tobytes(), (name, got, want)
        print(f"{name}: {got.dtype} {got.shape} values identical")
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            buffer = io.BytesIO()
            np.save(buffer, EXPECTED[info.filename[:-4]])
            assert z.read(info) == buffer.getvalue(), info.filename
            assert info.compress_type == zipfile.ZIP_STORED, info.filename
        print("every .npy member is byte-identical to np.save's, stored uncompressed as np.savez does")
    print("OK:", path)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/attn_sample.npz")
