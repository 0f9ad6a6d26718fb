#!/usr/bin/env python3
"""TVM MetaSchedule on one task, for benchmarks/tuning.py's `tvm` part. Course module 5.

    PYTHON_WITH_TVM benchmarks/tvm_tune.py TASK --trials N --threads T --out RESULT.json

Run it with TVM_NUM_THREADS=T in the environment (TVM's thread pool reads it when it
starts). It runs under a Python that has TVM (benchmarks/README.md says how to make one: apache-tvm
from PyPI in a virtual environment), not under the one minic's scripts use. TASK is one of
the tasks minic's tuning part builds as single-kernel ONNX models (tuning.py build_models):

  matmul_1024  C[1024,1024] = A[1024,1024] B[1024,1024]
  conv3x3_64   Y = Relu(Conv(X[1,64,56,56], W[64,64,3,3], B[64], pads 1)), ResNet-50's
               first 3x3 convolution

The task is written in TVM's tensor expressions, tuned with `meta_schedule.tune_tir`
(evolutionary search, XGBoost cost model, N trials in rounds of 16), and the best schedule
is compiled again and timed with TVM's time evaluator. The output is checked against
NumPy before anything is written. RESULT.json holds the tuner's latency of each trial in
the order they ran, the final median and GFLOP/s.
"""

import argparse
import json
import tempfile
import time

import numpy as np
import tvm
from tvm import te
from tvm.s_tir import meta_schedule as ms


def matmul_1024():
    n = 1024
    a = te.placeholder((n, n), name="A")
    b = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    c = te.compute((n, n), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    rng = np.random.default_rng(1)
    inputs = [rng.uniform(-1, 1, (n, n)).astype("float32") for _ in range(2)]
    return [a, b, c], inputs, inputs[0] @ inputs[1], 2.0 * n ** 3


def conv3x3_64():
    channels, size = 64, 56
    x = te.placeholder((1, channels, size, size), name="X")
    w = te.placeholder((channels, channels, 3, 3), name="W")
    bias = te.placeholder((channels,), name="Bias")
    padded = te.compute(
        (1, channels, size + 2, size + 2),
        lambda n, c, h, v: te.if_then_else(
            te.all(h >= 1, h <= size, v >= 1, v <= size), x[n, c, h - 1, v - 1], 0.0),
        name="padded")
    rc = te.reduce_axis((0, channels), name="rc")
    ry = te.reduce_axis((0, 3), name="ry")
    rx = te.reduce_axis((0, 3), name="rx")
    conv = te.compute(
        (1, channels, size, size),
        lambda n, k, h, v: te.sum(padded[n, rc, h + ry, v + rx] * w[k, rc, ry, rx],
                                  axis=[rc, ry, rx]), name="conv")
    y = te.compute((1, channels, size, size),
                   lambda n, k, h, v: te.max(conv[n, k, h, v] + bias[k], 0.0), name="Y")
    rng = np.random.default_rng(1)
    xs = rng.uniform(-1, 1, (1, channels, size, size)).astype("float32")
    ws = rng.uniform(-0.1, 0.1, (channels, channels, 3, 3)).astype("float32")
    bs = rng.uniform(-0.1, 0.1, (channels,)).astype("float32")
    padded_x = np.pad(xs, ((0, 0), (0, 0), (1, 1), (1, 1)))
    expected = np.zeros((1, channels, size, size), "float32")
    for dy in range(3):
        for dx in range(3):
            window = padded_x[0, :, dy:dy + size, dx:dx + size]
            expected[0] += np.einsum("kc,chw->khw", ws[:, :, dy, dx], window)
    expected = np.maximum(expected + bs[None, :, None, None], 0.0)
    return [x, w, bias, y], [xs, ws, bs], expected, 2.0 * channels * channels * 9 * size * size


TASKS = {"matmul_1024": matmul_1024, "conv3x3_64": conv3x3_64}


def trial_latencies(database):
    """The tuner's latency (us) of every measured trial, in the order they were run."""
    records = database.get_all_tuning_records()
    return [1e6 * float(np.median([float(s) for s in r.run_secs])) if r.run_secs else -1.0
            for r in records]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("task", choices=sorted(TASKS))
    parser.add_argument("--trials", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--mcpu", default="native",
                        help="the CPU name for LLVM (TVM's wheel cannot take 'native': give "
                             "the name `llc --version` prints as Host CPU)")
    parser.add_argument("--out", required=True)
    options = parser.parse_args()

    tensors, inputs, expected, flops = TASKS[options.task]()
    module = tvm.IRModule({"main": te.create_prim_func(tensors)})
    target = tvm.target.Target({"kind": "llvm", "mtriple": "x86_64-unknown-linux-gnu",
                                "mcpu": options.mcpu, "num-cores": options.threads})
    start = time.time()
    with tempfile.TemporaryDirectory() as work_dir:
        database = ms.tune_tir(module, target, work_dir, max_trials_global=options.trials,
                               num_trials_per_iter=16, database="memory", seed=1)
        latencies = trial_latencies(database)
        schedule = ms.tir_integration.compile_tir(database, module, target)
    tuning_s = time.time() - start

    device = tvm.cpu()
    executable = tvm.compile(schedule.mod, target=target).jit()
    arguments = [tvm.runtime.tensor(a, device) for a in inputs]
    arguments.append(tvm.runtime.tensor(np.zeros(expected.shape, "float32"), device))
    evaluator = executable.time_evaluator(executable.entry_name, device, number=5, repeat=15)
    seconds = evaluator(*arguments).results
    got = arguments[-1].numpy()
    error = float(np.max(np.abs(got - expected)))
    scale = float(np.max(np.abs(expected)))
    if error > 1e-3 * max(1.0, scale):
        raise SystemExit(f"tvm_tune.py: {options.task}: the tuned kernel's output differs "
                         f"from NumPy's (max abs error {error:g})")
    median_ms = 1e3 * float(np.median(seconds))
    result = {"task": options.task, "tvm": tvm.__version__, "trials": options.trials,
              "threads": options.threads, "tuning_s": tuning_s,
              "trial_us": latencies, "median_ms": median_ms,
              "gflops": flops / (median_ms * 1e-3) / 1e9, "max_abs_error": error}
    with open(options.out, "w") as f:
        json.dump(result, f, indent=1)
    print(f"{options.task}: TVM {tvm.__version__} MetaSchedule, {options.trials} trials in "
          f"{tuning_s:.0f} s, best {median_ms:.3f} ms ({result['gflops']:.1f} GFLOP/s)")


if __name__ == "__main__":
    main()
