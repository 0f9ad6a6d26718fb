#!/usr/bin/env python3
"""Where a quantised model loses accuracy, layer by layer, for each calibration method.

Course module 7, section 5. The float model is quantised by `minic quantize` once per
calibration method, on the same calibration inputs each time (the model tests' random
inputs, `random_inputs` in tests/models/compare_with_ort.py, seeds 0 to N - 1, written as
.npy files for `--calibrate`); then the float model and each
quantised one run on held-out random inputs in ONNX Runtime with the output of every
Conv, MatMul and Gemm made a graph output, and the error of each such layer is the root
mean square of (quantised - float) over that of the float output, over all the held-out
inputs. The error a layer shows is everything quantised before it, accumulated: the
activations its ancestors read rounded, and their weights. Prints a table and, with
--plot, draws one line per method.

    examples/int8/calibration_layers.py MODEL.onnx [--minic build/minic]
        [--methods minmax,percentile,entropy] [--calibration-sets 8] [--held-out 4]
        [--plot OUT.png]
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "models"))
from compare_with_ort import random_inputs  # noqa: E402  (the model tests' inputs)

LAYER_OPS = {"Conv", "MatMul", "Gemm"}


def layer_outputs(model):
    """The outputs of the model's Conv, MatMul and Gemm nodes, in graph order."""
    return [node.output[0] for node in model.graph.node if node.op_type in LAYER_OPS]


def run_with_layers(path, names, feeds):
    """Runs the model at `path` with `names` as extra outputs; name -> array."""
    model = onnx.load(path)
    present = {o.name for o in model.graph.output}
    for name in names:
        if name not in present:
            model.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                                    None))
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    wanted = list(dict.fromkeys(names))
    return dict(zip(wanted, session.run(wanted, feeds)))


def layer_errors(float_path, quantised_path, names, input_sets):
    """Relative RMS error of every layer's output, over all the input sets."""
    squared = dict.fromkeys(names, 0.0)
    total = dict.fromkeys(names, 0.0)
    for feeds in input_sets:
        reference = run_with_layers(float_path, names, feeds)
        quantised = run_with_layers(quantised_path, names, feeds)
        for name in names:
            r = reference[name].astype(np.float64)
            squared[name] += float(np.sum((quantised[name] - r) ** 2))
            total[name] += float(np.sum(r ** 2))
    return [np.sqrt(squared[n] / total[n]) if total[n] > 0 else 0.0 for n in names]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("--minic", default=os.path.join(REPO, "build", "minic"))
    parser.add_argument("--methods", default="minmax,percentile,entropy")
    parser.add_argument("--calibration-sets", type=int, default=8)
    parser.add_argument("--held-out", type=int, default=4)
    parser.add_argument("--plot", help="a PNG to draw the errors in")
    args = parser.parse_args()

    model = onnx.load(args.model)
    names = layer_outputs(model)
    # Seeds 1000 on: not those of minic quantize's calibration inputs.
    input_sets = [random_inputs(model, 1000 + i) for i in range(args.held_out)]
    methods = [m for m in args.methods.split(",") if m]
    errors = {}
    with tempfile.TemporaryDirectory() as work:
        calibration = os.path.join(work, "calibration")
        for seed in range(args.calibration_sets):
            folder = os.path.join(calibration, f"set_{seed}")
            os.makedirs(folder)
            for index, array in enumerate(random_inputs(model, seed).values()):
                np.save(os.path.join(folder, f"input_{index}.npy"), array)
        for method in methods:
            quantised = os.path.join(work, f"{method}.onnx")
            subprocess.run([args.minic, "quantize", args.model, "-o", quantised,
                            "--per-channel", "--method", method, "--calibrate", calibration,
                            "--held-out", "0"],
                           check=True, stdout=subprocess.DEVNULL)
            errors[method] = layer_errors(args.model, quantised, names, input_sets)

    print(f"relative RMS error of each layer's output, {args.held_out} held-out inputs")
    print(f"{'layer':<40}" + "".join(f"{m:>12}" for m in methods))
    for i, name in enumerate(names):
        print(f"{name[-40:]:<40}" + "".join(f"{errors[m][i]:>12.4f}" for m in methods))

    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        figure, axes = plt.subplots(figsize=(9, 4.5))
        for method in methods:
            axes.plot(range(1, len(names) + 1), errors[method], marker="o", markersize=3,
                      label=method)
        axes.set_yscale("log")
        axes.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        axes.set_xlabel("layer (Conv, MatMul or Gemm, in graph order)")
        axes.set_ylabel("relative RMS error of its output")
        axes.set_title(f"{os.path.basename(args.model)} quantised by minic, per calibration "
                       "method")
        axes.grid(True, which="both", alpha=0.3)
        axes.legend()
        figure.tight_layout()
        figure.savefig(args.plot, dpi=110)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
