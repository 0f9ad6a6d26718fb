#!/usr/bin/env python3
"""Times one ONNX model with ONNX Runtime; one round of `benchmarks/run`. Course module 8.

Runs as a child process of benchmarks/run, so that the session-creation time and the
peak memory are ONNX Runtime's own. The session has every graph optimisation on
(ORT_ENABLE_ALL), the CPU execution provider, `--threads` intra-op threads and one
inter-op thread, sequential execution: the same thread count minic is given. After
`--warmup` untimed runs, each of `--repeat` runs is timed alone.

    ort_child.py MODEL.onnx --input NAME=FILE.npy ... --threads N --warmup W --repeat K
                 --json OUT.json

The JSON holds session_ms, samples_ms, peak_rss_mb (the whole Python process: interpreter,
numpy and onnxruntime included; baseline_rss_mb is the peak before the session was made),
and the configuration.
"""

import argparse
import json
import time

import numpy as np
import onnxruntime as ort

from measure import latency_stats, peak_rss_mb


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("--input", action="append", default=[], help="NAME=FILE.npy")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--json", required=True)
    args = parser.parse_args()

    feeds = {}
    for item in args.input:
        name, path = item.split("=", 1)
        feeds[name] = np.load(path)
    baseline_rss_mb = peak_rss_mb()

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only: no warnings about unused initializers
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    start = time.perf_counter()
    session = ort.InferenceSession(args.model, options, providers=["CPUExecutionProvider"])
    session_ms = (time.perf_counter() - start) * 1e3

    for _ in range(args.warmup):
        session.run(None, feeds)
    samples = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        session.run(None, feeds)
        samples.append((time.perf_counter() - start) * 1e3)

    result = {
        "runtime": "onnxruntime",
        "version": ort.__version__,
        "threads": args.threads,
        "inter_op_threads": 1,
        "graph_optimization_level": "ORT_ENABLE_ALL",
        "warmup": args.warmup,
        "repeat": args.repeat,
        "session_ms": session_ms,
        **latency_stats(samples),
        "peak_rss_mb": peak_rss_mb(),
        "baseline_rss_mb": baseline_rss_mb,
        "samples_ms": samples,
    }
    with open(args.json, "w") as f:
        json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
