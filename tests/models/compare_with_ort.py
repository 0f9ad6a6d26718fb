#!/usr/bin/env python3
"""Runs one model through `minic run` and through onnxruntime and compares the outputs.

Course module 8 (end-to-end testing). Differential testing at the scale of a whole
model: random inputs (numpy, fixed seed) are written as .npy files, minic's reference
interpreter runs the model on them, onnxruntime (every graph optimisation on) runs it on
the same arrays, and each output must agree elementwise within
|minic - ort| <= atol + rtol * |ort|. Prints the max abs/rel error per output and the
interpreter's wall time; exits 1 on a mismatch, 2 when minic fails.

    compare_with_ort.py --minic BUILD/minic MODEL.onnx
    compare_with_ort.py --minic BUILD/minic --build resnet18 [--build-dir DIR]

Inputs: floats are normal(0, 1); an integer input read by a Gather (token ids) is
uniform in [0, rows of the gathered table); an input named like "*mask*" is ones with
the last few positions zero (padding).
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD_MODELS = os.path.join(HERE, "..", "..", "examples", "models", "build_models.py")

NUMPY_TYPES = {
    TensorProto.FLOAT: np.float32,
    TensorProto.DOUBLE: np.float64,
    TensorProto.INT64: np.int64,
    TensorProto.INT32: np.int32,
    TensorProto.BOOL: np.bool_,
}


def gather_table_rows(model, input_name):
    """Rows of the initializer that a Gather indexes with input_name, or None."""
    tables = {init.name: init for init in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Gather" and len(node.input) == 2 and node.input[1] == input_name:
            table = tables.get(node.input[0])
            if table is not None and table.dims:
                return int(table.dims[0])
    return None


def random_inputs(model, seed):
    """One array per graph input that is not an initializer, in graph order."""
    rng = np.random.default_rng(seed)
    initializers = {init.name for init in model.graph.initializer}
    inputs = {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        tensor = value.type.tensor_type
        if tensor.elem_type not in NUMPY_TYPES:
            sys.exit(f"input '{value.name}': element type {tensor.elem_type} is not handled")
        dtype = NUMPY_TYPES[tensor.elem_type]
        # Symbolic dimensions become 1 (batch 1).
        shape = [d.dim_value if d.HasField("dim_value") else 1 for d in tensor.shape.dim]
        if np.issubdtype(dtype, np.floating):
            array = rng.normal(0.0, 1.0, size=shape).astype(dtype)
        elif "mask" in value.name.lower():
            array = np.ones(shape, dtype=dtype)
            if array.ndim > 0 and array.shape[-1] > 4:
                array[..., -max(1, array.shape[-1] // 16):] = 0
        elif dtype == np.bool_:
            array = rng.integers(0, 2, size=shape).astype(np.bool_)
        else:
            rows = gather_table_rows(model, value.name) or 10
            array = rng.integers(0, rows, size=shape).astype(dtype)
        inputs[value.name] = array
    return inputs


def input_args(inputs, folder):
    """Saves each input as folder/input_K.npy; returns `minic run`'s --input arguments."""
    args = []
    for index, (name, array) in enumerate(inputs.items()):
        path = os.path.join(folder, f"input_{index}.npy")
        np.save(path, array)
        args += ["--input", f"{name}={path}"]
    return args


def read_outputs(out_dir):
    """The outputs `minic run --output-dir` wrote (output_K.npy), in graph order."""
    outputs = []
    while os.path.exists(os.path.join(out_dir, f"output_{len(outputs)}.npy")):
        outputs.append(np.load(os.path.join(out_dir, f"output_{len(outputs)}.npy")))
    return outputs


def run_minic(minic, model_path, inputs, work_dir, timeout, passes, backend):
    """Runs `minic run` on the inputs; returns (outputs in graph order, seconds)."""
    if backend == "cuda-emulate":  # the GPU schedules and CUDA kernels, on the interpreter
        command = [minic, "run", model_path, "--target", "cuda", "--emulate", "--passes", passes]
    else:
        command = [minic, "run", model_path, "--backend", backend, "--passes", passes]
    command += input_args(inputs, work_dir)
    out_dir = os.path.join(work_dir, "out")
    os.makedirs(out_dir, exist_ok=True)
    command += ["--output-dir", out_dir]
    print("$ " + " ".join(command), flush=True)
    start = time.monotonic()
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"FAIL: minic took longer than {timeout:g} s")
        sys.exit(2)
    seconds = time.monotonic() - start
    if result.returncode != 0:
        sys.stdout.write(result.stdout)
        sys.stderr.write(result.stderr)
        print(f"FAIL: minic exited with status {result.returncode}")
        sys.exit(2)
    return read_outputs(out_dir), seconds


def run_onnxruntime(model_path, inputs):
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return names, session.run(None, inputs)


def cosine_similarity(a, b):
    """The cosine similarity of two arrays' values, computed in double; where either is all
    zeros, 1 if both are equal and 0 otherwise."""
    a64 = np.asarray(a, dtype=np.float64).ravel()
    b64 = np.asarray(b, dtype=np.float64).ravel()
    norms = np.linalg.norm(a64) * np.linalg.norm(b64)
    return float(np.dot(a64, b64) / norms) if norms > 0 else float(np.array_equal(a64, b64))


def compare(names, expected, actual, rtol, atol):
    """Prints one line per output; returns True when all match."""
    if len(actual) != len(expected):
        print(f"FAIL: minic wrote {len(actual)} outputs, onnxruntime gave {len(expected)}")
        return False
    ok = True
    for name, want, got in zip(names, expected, actual):
        if got.shape != want.shape or got.dtype != want.dtype:
            print(f"  {name}: FAIL shape/dtype minic {got.dtype}{list(got.shape)} vs "
                  f"onnxruntime {want.dtype}{list(want.shape)}")
            ok = False
            continue
        if want.dtype.kind not in "fc":
            bad = int(np.count_nonzero(got != want))
            print(f"  {name}: {want.dtype}{list(want.shape)} mismatched {bad} "
                  f"{'ok' if bad == 0 else 'FAIL'}")
            ok = ok and bad == 0
            continue
        want64 = want.astype(np.float64)
        got64 = got.astype(np.float64)
        abs_err = np.abs(got64 - want64)
        # Relative to |ort|, but not below atol: near-zero values say nothing about rtol.
        rel_err = abs_err / np.maximum(np.abs(want64), atol)
        close = np.isclose(got64, want64, rtol=rtol, atol=atol)
        close |= np.isnan(got64) & np.isnan(want64)
        bad = int(close.size - np.count_nonzero(close))
        max_abs = float(np.nanmax(abs_err)) if abs_err.size else 0.0
        max_rel = float(np.nanmax(rel_err)) if rel_err.size else 0.0
        print(f"  {name}: {want.dtype}{list(want.shape)} max abs err {max_abs:.3g}, "
              f"max rel err {max_rel:.3g}, mismatched {bad}/{close.size} "
              f"{'ok' if bad == 0 else 'FAIL'}")
        if bad:
            index = np.unravel_index(int(np.argmin(close)), close.shape)
            print(f"    first mismatch at {[int(i) for i in index]}: minic {str(got[index])}, "
                  f"onnxruntime {str(want[index])}")
        ok = ok and bad == 0
    return ok


def build_model(name, build_dir):
    command = [sys.executable, BUILD_MODELS, "--out", build_dir, name]
    subprocess.run(command, check=True)
    return os.path.join(build_dir, f"{name}.onnx")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", nargs="?", help="the .onnx file (or use --build)")
    parser.add_argument("--minic", required=True, help="path of the minic binary")
    parser.add_argument("--build", metavar="NAME",
                        help="build this example model with build_models.py first")
    parser.add_argument("--build-dir", help="where --build writes (default: a temp folder)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--passes", default="none",
                        help="graph passes minic runs first: none, default, or a list")
    parser.add_argument("--backend", default="interp", choices=["interp", "llvm", "cuda-emulate"],
                        help="how minic runs the model (default: its reference interpreter; "
                        "cuda-emulate: compiled for the GPU, run on the loop interpreter)")
    parser.add_argument("--rtol", type=float, default=1e-3)
    parser.add_argument("--atol", type=float, default=1e-4)
    parser.add_argument("--timeout", type=float, default=600,
                        help="seconds minic may take before it counts as failed")
    args = parser.parse_args()
    if (args.model is None) == (args.build is None):
        parser.error("give either MODEL or --build NAME")

    with tempfile.TemporaryDirectory(prefix="minic-compare-") as work_dir:
        model_path = args.model
        if args.build:
            model_path = build_model(args.build, args.build_dir or work_dir)
        try:
            model = onnx.load(model_path, load_external_data=False)
        except Exception as e:  # onnx raises protobuf's DecodeError, OSError, ...
            sys.exit(f"{model_path}: not a readable ONNX model ({e})")
        inputs = random_inputs(model, args.seed)
        for name, array in inputs.items():
            print(f"input {name}: {array.dtype}{list(array.shape)}")
        actual, seconds = run_minic(args.minic, model_path, inputs, work_dir, args.timeout,
                                    args.passes, args.backend)
        names, expected = run_onnxruntime(model_path, inputs)

    print(f"{os.path.basename(model_path)}: `minic run` ({args.backend}, load included) {seconds:.2f} s "
          f"(rtol {args.rtol:g}, atol {args.atol:g})")
    if not compare(names, expected, actual, args.rtol, args.atol):
        print("FAIL")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
