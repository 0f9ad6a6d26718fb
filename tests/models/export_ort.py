#!/usr/bin/env python3
"""Checks that onnxruntime runs the models `minic opt --emit onnx` writes, and agrees.

Course module 2 (the exporter, src/frontend/onnx_writer.cpp). Each model is written back
by `minic opt --emit onnx`, once with no graph pass and once after the passes of the
default pipeline that keep to ONNX ops (all but blocked-layout, winograd and fuse-ops).
The file must pass onnx.checker, load in onnxruntime and give there the outputs the
original model gives, on the same random inputs (rtol 1e-4, atol 1e-5: a folded constant
may round differently). The example MLP and control-flow models of control_flow_ort.py
(bodies reading outer values, bodies in bodies, a Scan) also run through `minic run` (the
interpreter) on the exported file, compared with onnxruntime's outputs
(compare_with_ort.py's rtol 1e-3, atol 1e-4); the light models given with --light only
through onnxruntime, since the interpreter is slow on them. Exits 1 when a case fails.

    export_ort.py --minic BUILD/minic [--light MODEL.onnx...] [--out DIR]
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import control_flow_ort  # noqa: E402
from compare_with_ort import compare, random_inputs, run_minic, run_onnxruntime  # noqa: E402

MLP = os.path.join(HERE, "..", "..", "examples", "models", "mlp.onnx")
# The control-flow models whose shapes do not depend on input values (`minic opt`, unlike
# `minic run`, takes no input values): bodies in bodies reading outer values, a Scan.
CONTROL_FLOW = [control_flow_ort.if_in_loop, control_flow_ort.loop_in_if,
                control_flow_ort.scan_two_inputs]
# The passes that make what ONNX cannot hold: minic's own ops, fused nodes.
NOT_ONNX_PASSES = {"blocked-layout", "winograd", "pack-int8-weights", "pack-matmul-weights",
                   "fuse-attention", "fuse-ops"}


def onnx_passes(minic):
    """The default graph pipeline without the passes of NOT_ONNX_PASSES, comma-separated."""
    listing = subprocess.run([minic, "opt", "--list-passes"], capture_output=True, text=True,
                             check=True).stdout
    line = listing.splitlines()[0]  # "graph passes (default pipeline: a,b,c):"
    pipeline = line.split("default pipeline: ")[1].rstrip("):").split(",")
    return ",".join(name for name in pipeline if name not in NOT_ONNX_PASSES)


def cases(light):
    """(name, model file, inputs, run through minic too) for each model."""
    rng = np.random.default_rng(1)
    found = [("mlp", MLP, random_inputs(onnx.load(MLP), 1), True)]
    work = tempfile.mkdtemp(prefix="export_ort_models_")
    for make in CONTROL_FLOW:
        model, make_inputs = make()
        path = os.path.join(work, f"{make.__name__}.onnx")
        onnx.save(model, path)
        found.append((make.__name__, path, make_inputs(rng), True))
    for path in light:
        name = os.path.splitext(os.path.basename(path))[0]
        found.append((name, path, random_inputs(onnx.load(path), 1), False))
    return found


def check_case(minic, name, path, inputs, with_minic, passes, folder):
    """True when the exported model passes every check; prints what fails."""
    os.makedirs(folder, exist_ok=True)
    exported = os.path.join(folder, "model.onnx")
    command = [minic, "opt", path, "--passes", passes, "--emit", "onnx", "-o", exported]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        print(f"FAIL {name}: $ {' '.join(command)}\n{result.stderr}")
        return False
    onnx.checker.check_model(exported)
    names, expected = run_onnxruntime(path, inputs)
    _, actual = run_onnxruntime(exported, inputs)
    print(f"{name} (--passes {'none' if passes == 'none' else 'onnx'}): "
          "onnxruntime, the exported model against the original")
    ok = compare(names, expected, actual, 1e-4, 1e-5)
    if with_minic:
        print(f"{name}: minic run on the exported model against onnxruntime")
        outputs, _ = run_minic(minic, exported, inputs, folder, 300, "none", "interp")
        ok = compare(names, actual, outputs, 1e-3, 1e-4) and ok
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minic", required=True, help="the minic binary")
    parser.add_argument("--light", nargs="*", default=[], help="models run through onnxruntime")
    parser.add_argument("--out", help="keep the exported models here (default: a temp folder)")
    args = parser.parse_args()

    onnxruntime.set_default_logger_severity(4)
    out = args.out or tempfile.mkdtemp(prefix="export_ort_")
    failed = []
    pass_lists = ["none", onnx_passes(args.minic)]
    for name, path, inputs, with_minic in cases(args.light):
        for passes in pass_lists:
            kind = "none" if passes == "none" else "onnx-passes"
            folder = os.path.join(out, name, kind)
            if not check_case(args.minic, name, path, inputs, with_minic, passes, folder):
                failed.append(f"{name} ({kind})")
    print(f"{len(failed)} exported models failed" + (f": {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
