#!/usr/bin/env python3
"""Checks `minic quantize` against ONNX Runtime: its QDQ models, and its accuracy beside
ONNX Runtime's own quantiser on the same calibration data.

Course module 7. For the MLP, the small CNN and the BERT-style encoder
(examples/models/build_models.py), weights per tensor and per channel:

1. 8 random calibration input sets are written in `minic quantize --calibrate`'s layout
   (one subfolder per set, NAME.npy files);
2. `minic quantize --calibrate DIR` writes a QDQ model; onnx.checker must accept it;
3. onnxruntime.quantization.quantize_static quantises the same float model on the same
   sets (QDQ, uint8 activations, int8 weights, min-max);
4. on 4 held-out random input sets: the float model on ONNX Runtime is the reference; each
   quantised model runs on ONNX Runtime and its outputs are compared with the reference
   (cosine similarity, max abs error), side by side; minic's model also runs on minic,
   which must agree with ONNX Runtime running it (cosine similarity at least 0.999).

Fails (exit 1) when ONNX Runtime cannot load minic's model, when minic and ONNX Runtime
disagree on it, or when its cosine similarity to the float model is below 0.99 (the issue's
bar for int8 models).

    quantize_ort.py --minic BUILD/minic [--out DIR]
"""

import argparse
import logging
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                      quantize_static)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples", "models"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_models  # noqa: E402  (examples/models/build_models.py)
from compare_with_ort import cosine_similarity, random_inputs  # noqa: E402  (the model tests')

MODELS = ["mlp", "small_cnn", "bert_encoder"]


def cosine(a, b):
    """The cosine similarity of two runs' outputs, all outputs together, and the largest
    absolute difference."""
    a = np.concatenate([x.ravel() for x in a]).astype(np.float64)
    b = np.concatenate([x.ravel() for x in b]).astype(np.float64)
    return cosine_similarity(a, b), float(np.max(np.abs(a - b)))


def ort_run(path, feeds):
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    return [session.run(None, feed) for feed in feeds]


def minic_run(minic, path, feeds, folder):
    outputs = []
    for index, feed in enumerate(feeds):
        out = os.path.join(folder, f"held_out_{index}")
        os.makedirs(out, exist_ok=True)
        command = [minic, "run", path, "--output-dir", out]
        for name, value in feed.items():
            np.save(os.path.join(out, f"{name}.npy"), value)
            command += ["--input", f"{name}={os.path.join(out, name + '.npy')}"]
        subprocess.run(command, check=True, capture_output=True, text=True)
        k, one = 0, []
        while os.path.exists(os.path.join(out, f"output_{k}.npy")):
            one.append(np.load(os.path.join(out, f"output_{k}.npy")))
            k += 1
        outputs.append(one)
    return outputs


class Calibration(CalibrationDataReader):
    def __init__(self, feeds):
        self.feeds = iter(feeds)

    def get_next(self):
        return next(self.feeds, None)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minic", required=True)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    logging.getLogger().setLevel(logging.ERROR)  # the quantiser's advice on preprocessing
    out = args.out or tempfile.mkdtemp(prefix="minic-quantize-")
    os.makedirs(out, exist_ok=True)
    failures = []
    print(f"{'model':<14} {'weights':<12} {'minic quantize':>26} {'ORT quantize_static':>26}")
    for name in MODELS:
        model = build_models.MODELS[name]()
        float_path = os.path.join(out, f"{name}.onnx")
        onnx.save(model, float_path)
        calibration = [random_inputs(model, seed) for seed in range(8)]
        held_out = [random_inputs(model, 100 + seed) for seed in range(4)]
        folder = os.path.join(out, f"{name}_calibration")
        for index, feed in enumerate(calibration):
            os.makedirs(os.path.join(folder, f"set_{index}"), exist_ok=True)
            for input_name, value in feed.items():
                np.save(os.path.join(folder, f"set_{index}", f"{input_name}.npy"), value)
        reference = ort_run(float_path, held_out)
        for per_channel in [False, True]:
            label = "per channel" if per_channel else "per tensor"
            minic_path = os.path.join(out, f"{name}.minic.{label.replace(' ', '-')}.onnx")
            command = [args.minic, "quantize", float_path, "-o", minic_path, "--calibrate",
                       folder, "--held-out", "0"] + (["--per-channel"] if per_channel else [])
            result = subprocess.run(command, capture_output=True, text=True)
            if result.returncode != 0:
                failures.append(f"{name}, {label}: minic quantize failed: {result.stderr}")
                continue
            onnx.checker.check_model(onnx.load(minic_path))
            ort_path = os.path.join(out, f"{name}.ort.{label.replace(' ', '-')}.onnx")
            quantize_static(float_path, ort_path, Calibration(calibration),
                            quant_format=QuantFormat.QDQ, per_channel=per_channel,
                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
            minic_model_on_ort = ort_run(minic_path, held_out)
            ort_model_on_ort = ort_run(ort_path, held_out)
            minic_model_on_minic = minic_run(args.minic, minic_path, held_out,
                                             os.path.join(out, f"{name}.{label[4:]}"))
            ours = [cosine(r, q) for r, q in zip(reference, minic_model_on_ort)]
            theirs = [cosine(r, q) for r, q in zip(reference, ort_model_on_ort)]
            agree = [cosine(a, b)[0] for a, b in zip(minic_model_on_ort, minic_model_on_minic)]
            ours_cos = min(c for c, _ in ours)
            theirs_cos = min(c for c, _ in theirs)
            ours_text = f"cosine {ours_cos:.5f}, err {max(e for _, e in ours):.3g}"
            theirs_text = f"cosine {theirs_cos:.5f}, err {max(e for _, e in theirs):.3g}"
            print(f"{name:<14} {label:<12} {ours_text:>26} {theirs_text:>26}")
            if ours_cos < 0.99:
                failures.append(f"{name}, {label}: cosine similarity to the float model "
                                f"{ours_cos:.5f} < 0.99")
            if min(agree) < 0.999:
                failures.append(f"{name}, {label}: minic and ONNX Runtime disagree on minic's "
                                f"model (cosine similarity {min(agree):.6f})")
    for failure in failures:
        print("FAIL", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
