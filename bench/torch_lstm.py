"""attn's LSTM against torch.nn.LSTM, alternating in one run (bench/run_lstm.sh).

    /usr/bin/python3 bench/torch_lstm.py <path to lstm_bench> [rounds]

The work on both sides: an LSTM(128, 128, batch_first) over x [32, 20, 128]
(batch 32, length 20, input 128), forward + backward from a fixed grad_output,
gradients for x and every weight; float32 and float64. lstm_bench runs as a
child process (--serve). Each round times a few runs of each contender in turn
(attn, torch with 2 threads, torch with 1 thread) for each dtype, so that the
machine's other load falls on all alike. After one warm-up round, the table
gives the median time per forward + backward.
Threads: attn's OpenBLAS runs 1 (OPENBLAS_NUM_THREADS=1); torch runs with
torch.set_num_threads(2), and again with 1 for comparison.
"""
import statistics
import subprocess
import sys
import time

import torch

B, T, IN, H = 32, 20, 128, 128
RUNS_PER_ROUND = 5


class Torch:
    def __init__(self, dtype):
        torch.manual_seed(0)
        self.lstm = torch.nn.LSTM(IN, H, batch_first=True).to(dtype)
        g = torch.Generator().manual_seed(1)
        self.x = torch.randn(B, T, IN, generator=g, dtype=dtype).requires_grad_(True)
        self.grad_output = torch.randn(B, T, H, generator=g, dtype=dtype)

    def run(self):
        start = time.perf_counter()
        output, _ = self.lstm(self.x)
        output.backward(self.grad_output)
        end = time.perf_counter()
        self.lstm.zero_grad(set_to_none=True)
        self.x.grad = None
        return (end - start) * 1e6


def main():
    binary = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    attn = subprocess.Popen([binary, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def attn_runs(tag, n):
        attn.stdin.write("%s %d\n" % (tag, n))
        attn.stdin.flush()
        return [float(v) for v in attn.stdout.readline().split()]

    dtypes = {"f32": torch.float32, "f64": torch.float64}
    models = {tag: Torch(dt) for tag, dt in dtypes.items()}
    times = {(tag, who): [] for tag in dtypes for who in ("attn", "torch@2", "torch@1")}
    for r in range(rounds + 1):  # round 0 is the warm-up
        for tag in dtypes:
            got = {"attn": attn_runs(tag, RUNS_PER_ROUND)}
            for threads in (2, 1):
                torch.set_num_threads(threads)
                got["torch@%d" % threads] = [models[tag].run() for _ in range(RUNS_PER_ROUND)]
            if r > 0:
                for who, ts in got.items():
                    times[(tag, who)] += ts
    attn.stdin.close()
    attn.wait()

    print("LSTM(128 -> 128) forward + backward over [32, 20, 128] (batch, length, input), batch_first")
    print("median of %d runs each, alternating attn / torch in %d rounds after a warm-up round"
          % (rounds * RUNS_PER_ROUND, rounds))
    print("threads: attn OpenBLAS 1; torch %s with set_num_threads(2) and (1)" % torch.__version__)
    print("%-6s %10s %12s %12s %14s %14s" % ("dtype", "attn ms", "torch@2 ms", "torch@1 ms",
                                              "attn/torch@2", "attn/torch@1"))
    for tag in dtypes:
        a, t2, t1 = (statistics.median(times[(tag, who)]) / 1000 for who in ("attn", "torch@2", "torch@1"))
        print("%-6s %10.2f %12.2f %12.2f %14.2f %14.2f" % (tag, a, t2, t1, a / t2, a / t1))
    print("ratio above 1: attn is slower.")


if __name__ == "__main__":
    main()
