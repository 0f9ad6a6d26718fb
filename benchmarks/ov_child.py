#!/usr/bin/env python3
"""Times one ONNX model with OpenVINO; one round of `benchmarks/run`. Course module 8.

Runs as a child process of benchmarks/run, so that the compile time and the peak memory
are OpenVINO's own. The model is read from the ONNX file and compiled for the CPU plugin
with float32 inference precision (on CPUs with AVX-512 BF16 or AMX it would otherwise
compute in bfloat16: not the same computation as minic's and ONNX Runtime's), `--threads`
inference threads, one stream and the latency hint: one inference at a time, as minic and
ONNX Runtime run. After `--warmup` untimed runs, each of `--repeat` runs is timed alone.
The outputs of the last run are checked against those of onnxruntime on the same inputs
(|ov - ort| <= 1e-4 + 1e-3 |ort|), so that a time is only reported for the computation
the other two do.

    ov_child.py MODEL.onnx --input NAME=FILE.npy ... --threads N --warmup W --repeat K
                --json OUT.json

The JSON holds session_ms (read and compile), samples_ms, peak_rss_mb (the whole Python
process), and the configuration.
"""

import argparse
import json
import sys
import time

import numpy as np
import onnxruntime as ort
import openvino as ov

from measure import latency_stats, peak_rss_mb

RTOL = 1e-3
ATOL = 1e-4


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("--input", action="append", default=[], help="NAME=FILE.npy")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--json", required=True)
    parser.add_argument("--quantized", action="store_true",
                        help="an int8 model: outputs agree when their cosine similarity to "
                             "ONNX Runtime's is at least 0.999 (check.py says why)")
    args = parser.parse_args()

    feeds = {}
    for item in args.input:
        name, path = item.split("=", 1)
        feeds[name] = np.load(path)
    baseline_rss_mb = peak_rss_mb()

    config = {
        "INFERENCE_PRECISION_HINT": "f32",
        "INFERENCE_NUM_THREADS": args.threads,
        "NUM_STREAMS": 1,
        "PERFORMANCE_HINT": "LATENCY",
    }
    core = ov.Core()
    start = time.perf_counter()
    compiled = core.compile_model(core.read_model(args.model), "CPU", config)
    session_ms = (time.perf_counter() - start) * 1e3
    request = compiled.create_infer_request()

    for _ in range(args.warmup):
        request.infer(feeds)
    samples = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        request.infer(feeds)
        samples.append((time.perf_counter() - start) * 1e3)
    rss_mb = peak_rss_mb()  # before the check's ONNX Runtime session exists

    session = ort.InferenceSession(args.model, providers=["CPUExecutionProvider"])
    expected = session.run(None, feeds)
    for index, reference in enumerate(expected):
        got = np.asarray(request.get_output_tensor(index).data)
        if args.quantized and got.shape == reference.shape:
            a = got.astype(np.float64).ravel()
            b = reference.astype(np.float64).ravel()
            agrees = np.dot(a, b) >= 0.999 * np.linalg.norm(a) * np.linalg.norm(b)
        else:
            agrees = got.shape == reference.shape and np.allclose(got, reference, rtol=RTOL,
                                                                  atol=ATOL)
        if not agrees:
            sys.exit(f"OpenVINO's output {index} disagrees with ONNX Runtime's")

    result = {
        "runtime": "openvino",
        "version": ov.__version__,
        "threads": args.threads,
        "config": config,
        "warmup": args.warmup,
        "repeat": args.repeat,
        "session_ms": session_ms,
        **latency_stats(samples),
        "peak_rss_mb": rss_mb,
        "baseline_rss_mb": baseline_rss_mb,
        "samples_ms": samples,
    }
    with open(args.json, "w") as f:
        json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
