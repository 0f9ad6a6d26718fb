#!/usr/bin/env python3
"""Checks minic on QDQ models that ONNX Runtime's quantiser writes, against ONNX Runtime.

Course module 7. Three example models (examples/models/build_models.py: the MLP, the small
CNN and the BERT-style encoder) are quantised with onnxruntime.quantization.quantize_static
in the QDQ format, on random calibration inputs, in several configurations (weights per
tensor and per channel, uint8 and int8 activations). ONNX Runtime runs each QDQ model on a
random input; minic runs it through the reference interpreter and compiled (the default
pipeline: qdq-to-integer turns its Conv, MatMul and Gemm into integer kernels).

ORT runs each model twice: without graph optimisations, as the model is written (every
DequantizeLinear, float op and QuantizeLinear in turn: the QDQ format's meaning), and with
all of them (its own integer kernels). The two disagree where a value lies near a rounding
boundary of a QuantizeLinear, and the difference grows through a deep model (by a few
steps in the encoder). A step is the scale of the DequantizeLinear that writes an output:
its resolution. The check, for every output: minic no farther from either ORT than
max(2 steps, ORT's own difference + 1 step) -- minic's integer arithmetic may move values
across rounding boundaries as ORT's does, no more -- and a cosine similarity to the
optimised ORT of at least 0.999. Exits 1 on a failure, naming the model, configuration and
backend.

    qdq_ort.py --minic BUILD/minic [--out DIR]
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime
from onnx import numpy_helper
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                      quantize_static)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples", "models"))
import build_models  # noqa: E402  (examples/models/build_models.py)
from compare_with_ort import cosine_similarity, random_inputs  # noqa: E402  (the model tests')

MODELS = ["mlp", "small_cnn", "bert_encoder"]
CONFIGS = {
    "per-tensor u8": dict(per_channel=False, activation_type=QuantType.QUInt8),
    "per-channel u8": dict(per_channel=True, activation_type=QuantType.QUInt8),
    "per-channel s8": dict(per_channel=True, activation_type=QuantType.QInt8),
}


class Calibration(CalibrationDataReader):
    def __init__(self, model, count):
        self.feeds = iter([random_inputs(model, seed) for seed in range(count)])

    def get_next(self):
        return next(self.feeds, None)


def output_steps(model):
    """For each graph output written by a DequantizeLinear, its scale: one output step."""
    constants = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    producers = {out: node for node in model.graph.node for out in node.output}
    steps = {}
    for output in model.graph.output:
        node = producers.get(output.name)
        if node is not None and node.op_type == "DequantizeLinear":
            steps[output.name] = float(np.max(constants[node.input[1]]))
    return steps


def run_ort(path, feed, level):
    """The outputs of ORT on `feed` at graph optimisation `level`, and their names."""
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = level
    session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    return session.run(None, feed), [o.name for o in session.get_outputs()]


def check(minic, path, feed, folder, backend):
    """Runs `path` on ORT and on minic's `backend`; returns a problem, or None."""
    levels = onnxruntime.GraphOptimizationLevel
    reference, names = run_ort(path, feed, levels.ORT_DISABLE_ALL)
    optimised, _ = run_ort(path, feed, levels.ORT_ENABLE_ALL)
    command = [minic, "run", path, "--backend", backend, "--passes", "default",
               "--output-dir", folder]
    for name, value in feed.items():
        np.save(os.path.join(folder, f"{name}.npy"), value)
        command += ["--input", f"{name}={os.path.join(folder, name + '.npy')}"]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        return f"minic exited with {result.returncode}: {result.stderr.strip()}"
    steps = output_steps(onnx.load(path))
    for k, (name, want, fast) in enumerate(zip(names, reference, optimised)):
        got = np.load(os.path.join(folder, f"output_{k}.npy"))
        step = steps.get(name, 1e-2 * float(np.max(np.abs(want))))
        to_reference = float(np.max(np.abs(got - want))) / step
        to_optimised = float(np.max(np.abs(got - fast))) / step
        ort_itself = float(np.max(np.abs(want - fast))) / step
        cosine = cosine_similarity(got, fast)
        print(f"    {backend:6} {name}: max |minic - ort| {to_reference:.2f} steps "
              f"(unoptimised ORT), {to_optimised:.2f} (optimised ORT, which differs from "
              f"the unoptimised by {ort_itself:.2f}); cosine {cosine:.6f}")
        allowed = max(2.0, ort_itself + 1.0) + 1e-3
        if to_reference > allowed or to_optimised > allowed or cosine < 0.999:
            return f"output {name} differs: {to_reference:.2f} and {to_optimised:.2f} steps, " \
                   f"cosine {cosine:.6f}"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minic", required=True)
    parser.add_argument("--out", default=None, help="keep the models here")
    args = parser.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="minic-qdq-")
    os.makedirs(out, exist_ok=True)
    failures = []
    for name in MODELS:
        float_path = os.path.join(out, f"{name}.onnx")
        model = build_models.MODELS[name]()
        onnx.save(model, float_path)
        feed = random_inputs(model, 100)
        for config, options in CONFIGS.items():
            path = os.path.join(out, f"{name}.{config.replace(' ', '-')}.onnx")
            quantize_static(float_path, path, Calibration(model, 8),
                            quant_format=QuantFormat.QDQ, weight_type=QuantType.QInt8,
                            **options)
            print(f"{name}, {config}:")
            for backend in ["interp", "llvm"]:
                folder = os.path.join(out, f"{name}.{config.replace(' ', '-')}.{backend}")
                os.makedirs(folder, exist_ok=True)
                problem = check(args.minic, path, feed, folder, backend)
                if problem:
                    failures.append(f"{name}, {config}, {backend}: {problem}")
    for failure in failures:
        print("FAIL", failure)
    print(f"{len(MODELS) * len(CONFIGS) * 2 - len(failures)} of "
          f"{len(MODELS) * len(CONFIGS) * 2} runs agree with ONNX Runtime")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
