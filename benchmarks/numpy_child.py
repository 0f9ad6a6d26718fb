#!/usr/bin/env python3
"""Times numpy's float32 matmul for one GEMM shape; one round of `benchmarks/run`.

Course module 8. numpy hands np.matmul of float32 matrices to its BLAS library (OpenBLAS
in the wheels on PyPI), whose thread count is fixed when numpy is imported: the parent
sets OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and MKL_NUM_THREADS to the benchmark's thread
count in this process's environment, and this script records what it found.

    numpy_child.py M K N --warmup W --repeat K --json OUT.json

C[M,N] = A[M,K] @ B[K,N] on uniform [-1, 1) data, into a preallocated C (out=), so that
the time is the multiplication's and not the allocation's.
"""

import argparse
import json
import os
import time

import numpy as np

from measure import latency_stats, peak_rss_mb

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def blas_description():
    """The BLAS library numpy was built with, as numpy reports it."""
    try:
        config = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
        return f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except Exception:  # older numpy has no mode= or a different layout
        return "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("m", type=int)
    parser.add_argument("k", type=int)
    parser.add_argument("n", type=int)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--json", required=True)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (args.m, args.k)).astype(np.float32)
    b = rng.uniform(-1, 1, (args.k, args.n)).astype(np.float32)
    c = np.empty((args.m, args.n), np.float32)
    for _ in range(args.warmup):
        np.matmul(a, b, out=c)
    samples = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        np.matmul(a, b, out=c)
        samples.append((time.perf_counter() - start) * 1e3)

    result = {
        "runtime": "numpy",
        "version": np.__version__,
        "blas": blas_description(),
        "thread_environment": {v: os.environ.get(v) for v in THREAD_VARIABLES},
        "warmup": args.warmup,
        "repeat": args.repeat,
        **latency_stats(samples),
        "peak_rss_mb": peak_rss_mb(),
        "samples_ms": samples,
    }
    with open(args.json, "w") as f:
        json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
