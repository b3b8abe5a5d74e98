"""PyTorch timings of the ops in bench/ops_bench.cpp, for bench/run_ops.sh.

Same work as the attn rows: forward + backward with a fixed grad_output on a
32x128 input (matmul by a 128x128 weight), float32 and float64; then matmul
forward only at 512 and 1024 in GFLOP/s. Prints JSON: {"threads": ..., "rows": {name: us}}.
Run with OPENBLAS_NUM_THREADS=1 (run_ops.sh does). Every row is timed with
torch.set_num_threads(2) ("<name>@2") and again with 1 thread ("<name>@1"): on a
2-core machine shared with other work, OpenMP's second thread can make small ops
wait for the scheduler, so both are reported.
"""
import json
import os
import sys
import timeit

import torch

def per_call_us(fn, min_time=0.2, repeats=5):
    """Best of `repeats` runs, each long enough to last min_time seconds."""
    number = 1
    while timeit.timeit(fn, number=number) < min_time / 10:
        number *= 2
    number *= 10
    return min(timeit.repeat(fn, number=number, repeat=repeats)) / number * 1e6


def forward_backward(op, *inputs, grad):
    def step():
        y = op(*inputs)
        y.backward(grad)
        for t in inputs:
            t.grad = None
    return step


def time_all(threads, rows):
    torch.set_num_threads(threads)
    at = "@%d" % threads
    g = torch.Generator().manual_seed(0)
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        def randn(*shape, grad=True):
            return torch.randn(*shape, generator=g, dtype=dtype).requires_grad_(grad)
        x, b, w = randn(32, 128), randn(32, 128), randn(128, 128)
        go = randn(32, 128, grad=False)
        rows["add/" + tag + at] = per_call_us(forward_backward(torch.add, x, b, grad=go))
        rows["tanh/" + tag + at] = per_call_us(forward_backward(torch.tanh, x, grad=go))
        rows["softmax/" + tag + at] = per_call_us(forward_backward(lambda t: torch.softmax(t, -1), x, grad=go))
        rows["matmul128/" + tag + at] = per_call_us(forward_backward(torch.matmul, x, w, grad=go))
        with torch.no_grad():
            for n in (512, 1024):
                a, c = randn(n, n, grad=False), randn(n, n, grad=False)
                us = per_call_us(lambda: torch.matmul(a, c), min_time=0.5, repeats=3)
                rows["gemm%d/%s%s" % (n, tag, at)] = us
                rows["gemm%d/%s/gflops%s" % (n, tag, at)] = 2.0 * n ** 3 / us * 1e-3


def main():
    rows = {}
    torch_threads = [int(os.environ["ATTN_TORCH_THREADS"])] if "ATTN_TORCH_THREADS" in os.environ else [2, 1]
    for threads in torch_threads:
        time_all(threads, rows)
    threads = {"torch.set_num_threads": torch_threads,
               "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "unset"),
               "torch": torch.__version__}
    json.dump({"threads": threads, "rows": rows}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
