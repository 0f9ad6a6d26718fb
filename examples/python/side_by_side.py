#!/usr/bin/env python3
"""One ONNX model through minic, ONNX Runtime and TVM (Relax), from Python, side by side.

Course module 8: docs/module8-deployment.md#5-minic-from-python. Each API loads the
model, compiles (or prepares) it, runs it on the same random input and is timed the same
way: 3 warm-up runs, then the median of 20, one thread each. The outputs are compared
with ONNX Runtime's. TVM is run where it is installed (`pip install apache-tvm`); the
tests run the rest.

    PYTHONPATH=build/python python3 examples/python/side_by_side.py [MODEL.onnx]
"""

import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
os.environ.setdefault("TVM_NUM_THREADS", "1")  # TVM's thread pool reads it when it starts


def median_ms(run, warmup=3, repeat=20):
    for _ in range(warmup):
        run()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        samples.append((time.perf_counter() - start) * 1e3)
    return float(np.median(samples))


def with_minic(path, x):
    import minic
    start = time.perf_counter()
    model = minic.load(path)
    compiled = minic.compile(model, threads=1)
    name = model.inputs[0].name
    ready = time.perf_counter() - start
    return compiled(**{name: x}), ready, median_ms(lambda: compiled(**{name: x}))


def with_onnxruntime(path, x):
    import onnxruntime as ort
    start = time.perf_counter()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    ready = time.perf_counter() - start
    return session.run(None, {name: x})[0], ready, median_ms(lambda: session.run(None, {name: x}))


def with_tvm(path, x):
    import onnx
    import tvm
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx
    start = time.perf_counter()
    module = from_onnx(onnx.load(path), keep_params_in_input=False)
    executable = tvm.compile(module, target="llvm")
    vm = relax.VirtualMachine(executable, tvm.cpu())
    ready = time.perf_counter() - start
    data = tvm.runtime.tensor(x)
    output = vm["main"](data)
    return output.numpy(), ready, median_ms(lambda: vm["main"](data))


def main():
    if len(sys.argv) > 1:
        path = sys.argv[1]
    else:  # ResNet-18 with random weights (examples/models/build_models.py)
        scratch = tempfile.mkdtemp()
        subprocess.run([sys.executable, os.path.join(ROOT, "examples", "models",
                                                     "build_models.py"),
                        "--out", scratch, "resnet18"], check=True, stdout=subprocess.DEVNULL)
        path = os.path.join(scratch, "resnet18.onnx")
    import minic
    x = minic.load(path).random_inputs(seed=0)
    x = next(iter(x.values()))
    reference, _, _ = with_onnxruntime(path, x)
    print(f"{os.path.basename(path)}, input {x.shape}, one thread")
    print(f"{'':<14} {'ready in ms':>12} {'median ms':>10} {'max abs diff to ORT':>20}")
    runners = [("minic", with_minic), ("ONNX Runtime", with_onnxruntime), ("TVM Relax", with_tvm)]
    for name, run in runners:
        try:
            output, ready, median = run(path, x)
        except ImportError as error:
            print(f"{name:<14} not installed ({error.name})")
            continue
        diff = float(np.max(np.abs(np.asarray(output, np.float64) - reference)))
        print(f"{name:<14} {ready * 1e3:>12.1f} {median:>10.3f} {diff:>20.2e}")
        if name != "TVM Relax":  # the suite checks minic; TVM's numbers are shown, not judged
            np.testing.assert_allclose(output, reference, rtol=1e-3, atol=1e-3)


if __name__ == "__main__":
    main()
