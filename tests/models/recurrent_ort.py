#!/usr/bin/env python3
"""Checks minic's LSTM, GRU and RNN against onnxruntime on random models.

Course module 8 (differential testing). ONNX's node tests cover few of the recurrent ops'
attributes, so this script builds many one-node models with onnx.helper, each drawing
its own combination: direction, layout (opset 14 on), sequence_lens (zero lengths
included), initial_h and initial_c, peepholes, the bias, clip, the activations with their
alpha and beta, GRU's linear_before_reset, LSTM's input_forget, which of Y, Y_h, Y_c
the node defines, f32 or f64, and the opset. onnxruntime computes each model's outputs
on random inputs; the model, the inputs and these outputs are written as a node-test
case (model.onnx, test_data_set_0/input_K.pb, output_K.pb), and `minic run --compare`
runs every case on each backend asked for, within |minic - ort| <= atol + rtol * |ort|
(rtol 1e-3, atol 1e-4: onnxruntime computes in float, minic's kernels in double). Exits
1 when a case fails, printing it with the attributes it drew.

onnxruntime's CPU kernels take float only, layout 0 only, and need hidden_size: the
model it runs has layout 0 and hidden_size, and minic's model the layout and hidden_size
the case drew, with its inputs and expected outputs transposed to match.

    recurrent_ort.py --minic BUILD/minic [--count 300] [--seed 1]
                     [--backends interp,llvm] [--out DIR]
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, helper, numpy_helper

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
ACTIVATION_COUNT = {"LSTM": 3, "GRU": 2, "RNN": 1}
# Each activation and how many of (alpha, beta) it takes.
ACTIVATIONS = {
    "Relu": 0, "Tanh": 0, "Sigmoid": 0, "Affine": 2, "LeakyRelu": 1, "ThresholdedRelu": 1,
    "ScaledTanh": 2, "HardSigmoid": 2, "Elu": 1, "Softsign": 0, "Softplus": 0,
}


def draw_case(rng):
    """The op, its attributes, and the shapes of its inputs: one random combination."""
    op = str(rng.choice(list(GATES)))
    case = {
        "op": op,
        "opset": int(rng.choice([7, 13, 14, 22])),
        "direction": str(rng.choice(["forward", "reverse", "bidirectional"])),
        "seq": int(rng.integers(1, 5)),
        "batch": int(rng.integers(1, 4)),
        "input": int(rng.integers(1, 5)),
        "hidden": int(rng.integers(1, 5)),
        "dtype": TensorProto.FLOAT,  # onnxruntime's CPU kernels take no other type
        "layout": int(rng.integers(0, 2)),
        "bias": rng.random() < 0.7,
        "sequence_lens": rng.random() < 0.5,
        "initial_h": rng.random() < 0.5,
        "initial_c": op == "LSTM" and rng.random() < 0.5,
        "peepholes": op == "LSTM" and rng.random() < 0.5,
        "clip": float(rng.uniform(0.5, 3.0)) if rng.random() < 0.3 else None,
        "linear_before_reset": op == "GRU" and rng.random() < 0.5,
        "input_forget": op == "LSTM" and rng.random() < 0.3,
        "hidden_size_attribute": rng.random() < 0.8,
    }
    if case["opset"] < 14:
        case["layout"] = 0
    directions = 2 if case["direction"] == "bidirectional" else 1
    if rng.random() < 0.5:
        names = [str(rng.choice(list(ACTIVATIONS)))
                 for _ in range(ACTIVATION_COUNT[op] * directions)]
        parameters = [ACTIVATIONS[name] for name in names]
        case["activations"] = names
        # Every parameter given, so no default differs between minic and onnxruntime.
        case["activation_alpha"] = [float(rng.uniform(0.1, 1.5)) for p in parameters if p >= 1]
        case["activation_beta"] = [float(rng.uniform(-0.5, 1.0)) for p in parameters if p >= 2]
    outputs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    kept = [name for name in outputs if rng.random() < 0.7] or ["Y"]
    case["outputs"] = [name if name in kept else "" for name in outputs]
    while case["outputs"] and case["outputs"][-1] == "":
        case["outputs"].pop()
    return case


def make_model(case, node_inputs, input_types, for_ort):
    """The one-node model of `case`. onnxruntime runs only layout 0 and needs hidden_size:
    its model has both; minic's has the layout and hidden_size the case drew."""
    attributes = {"direction": case["direction"]}
    if for_ort or case["hidden_size_attribute"]:
        attributes["hidden_size"] = case["hidden"]
    if case["opset"] >= 14:
        attributes["layout"] = 0 if for_ort else case["layout"]
    for name in ["activations", "activation_alpha", "activation_beta"]:
        if case.get(name):
            attributes[name] = case[name]
    if case["clip"] is not None:
        attributes["clip"] = case["clip"]
    if case["op"] == "GRU":
        attributes["linear_before_reset"] = int(case["linear_before_reset"])
    if case["op"] == "LSTM":
        attributes["input_forget"] = int(case["input_forget"])
    node = helper.make_node(case["op"], node_inputs, case["outputs"], **attributes)
    graph_inputs = [helper.make_tensor_value_info(name, elem, shape)
                    for name, (elem, shape) in input_types.items()]
    graph_outputs = [helper.make_tensor_value_info(name, case["dtype"], None)
                     for name in case["outputs"] if name]
    graph = helper.make_graph([node], "recurrent", graph_inputs, graph_outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", case["opset"])])
    model.ir_version = 7
    return model


def to_batch_first(name, array):
    """An input or output of layout 0 in layout 1: batch becomes the first axis."""
    if name == "Y":  # [seq, dirs, batch, hidden] -> [batch, seq, dirs, hidden]
        return np.ascontiguousarray(array.transpose(2, 0, 1, 3))
    if name in ("X", "initial_h", "initial_c", "Y_h", "Y_c"):  # swap the first two axes
        return np.ascontiguousarray(array.transpose(1, 0, 2))
    return array


def build_case(case, rng):
    """The models of `case` for onnxruntime and for minic, and random inputs (layout 0)."""
    op = case["op"]
    np_type = np.float64 if case["dtype"] == TensorProto.DOUBLE else np.float32
    directions = 2 if case["direction"] == "bidirectional" else 1
    seq, batch, hidden = case["seq"], case["batch"], case["hidden"]
    rows = GATES[op] * hidden
    shapes = {
        "X": [seq, batch, case["input"]],
        "W": [directions, rows, case["input"]],
        "R": [directions, rows, hidden],
        "B": [directions, 2 * rows],
        "sequence_lens": [batch],
        "initial_h": [directions, batch, hidden],
        "initial_c": [directions, batch, hidden],
        "P": [directions, 3 * hidden],
    }
    present = {"X": True, "W": True, "R": True, "B": case["bias"],
               "sequence_lens": case["sequence_lens"], "initial_h": case["initial_h"],
               "initial_c": case["initial_c"], "P": case["peepholes"]}
    order = ["X", "W", "R", "B", "sequence_lens", "initial_h"]
    if op == "LSTM":
        order += ["initial_c", "P"]
    node_inputs = [name if present[name] else "" for name in order]
    while node_inputs[-1] == "":
        node_inputs.pop()

    arrays = {}
    for name in filter(None, node_inputs):
        if name == "sequence_lens":
            arrays[name] = rng.integers(0, seq + 1, size=shapes[name]).astype(np.int32)
        else:
            arrays[name] = (rng.normal(size=shapes[name]) * 0.7).astype(np_type)
    elem = {name: TensorProto.INT32 if name == "sequence_lens" else case["dtype"]
            for name in arrays}
    ort_model = make_model(case, node_inputs,
                           {name: (elem[name], list(a.shape)) for name, a in arrays.items()},
                           for_ort=True)
    minic_arrays = {name: to_batch_first(name, a) if case["layout"] == 1 else a
                    for name, a in arrays.items()}
    minic_model = make_model(case, node_inputs,
                             {name: (elem[name], list(a.shape))
                              for name, a in minic_arrays.items()},
                             for_ort=False)
    return ort_model, arrays, minic_model, minic_arrays


def write_case(folder, case, rng):
    """Runs the case on onnxruntime and writes minic's model, the inputs and ORT's outputs
    as a node-test case. Returns why onnxruntime refused it, or None."""
    ort_model, arrays, minic_model, minic_arrays = build_case(case, rng)
    try:
        session = onnxruntime.InferenceSession(ort_model.SerializeToString(),
                                               providers=["CPUExecutionProvider"])
        outputs = session.run(None, arrays)
    except Exception as error:  # onnxruntime lacks some type and attribute combinations
        return str(error).splitlines()[0]
    # Unbounded activations (Affine, Relu, Softplus, ...) can grow the state step by step
    # until float overflows; minic computes in double and would not agree.
    if not all(np.all(np.abs(array) < 1e3) for array in outputs):
        return "the outputs grow past 1e3"
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data)
    onnx.save(minic_model, os.path.join(folder, "model.onnx"))
    for k, (name, array) in enumerate(minic_arrays.items()):
        with open(os.path.join(data, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(array, name).SerializeToString())
    for k, (value, array) in enumerate(zip(minic_model.graph.output, outputs)):
        if case["layout"] == 1:
            array = to_batch_first(value.name, array)
        with open(os.path.join(data, f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(array, value.name).SerializeToString())
    return None


def run_minic(minic, folder, backend, rtol, atol):
    """`minic run` on the case in `folder`, its outputs compared with onnxruntime's.
    Returns None when they agree, else minic's report."""
    data = os.path.join(folder, "test_data_set_0")
    inputs = sorted(name for name in os.listdir(data) if name.startswith("input_"))
    command = [minic, "run", os.path.join(folder, "model.onnx"), "--backend", backend,
               "--compare", data, "--rtol", str(rtol), "--atol", str(atol)]
    for name in inputs:
        command += ["--input", os.path.join(data, name)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode == 0:
        return None
    lines = (result.stdout + result.stderr).splitlines()
    return [line for line in lines if "differ" in line and " ok " not in line] or lines[-3:]


def run_cases(minic, out, cases, backends, rtol, atol):
    """Runs each case (its folder under `out`, by name; the value is what it drew, printed
    when it fails) on each backend. True when every case agrees with onnxruntime."""
    failed = False
    for backend in backends:
        failures = 0
        for name, case in cases.items():
            report = run_minic(minic, os.path.join(out, name), backend, rtol, atol)
            if report is None:
                continue
            failures += 1
            print(f"  FAIL {name} ({backend}): {case}")
            for line in report:
                print(f"    {line}")
        print(f"{backend}: {len(cases) - failures}/{len(cases)} cases agree with onnxruntime")
        failed = failed or failures > 0
    return not failed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minic", required=True, help="the minic binary")
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--backends", default="interp,llvm")
    parser.add_argument("--out", help="keep the cases in this folder (default: a temp one)")
    parser.add_argument("--rtol", type=float, default=1e-3)
    parser.add_argument("--atol", type=float, default=1e-4)
    args = parser.parse_args()

    onnxruntime.set_default_logger_severity(4)
    rng = np.random.default_rng(args.seed)
    out = args.out or tempfile.mkdtemp(prefix="recurrent_ort_")
    os.makedirs(out, exist_ok=True)
    cases, refused = {}, {}
    for index in range(args.count):
        case = draw_case(rng)
        name = f"case_{index:04d}_{case['op'].lower()}"
        folder = os.path.join(out, name)
        if os.path.exists(folder):
            subprocess.run(["rm", "-r", folder], check=True)
        reason = write_case(folder, case, rng)
        if reason:
            refused[reason] = refused.get(reason, 0) + 1
            continue
        cases[name] = case
    print(f"{len(cases)} cases in {out}")
    for reason, count in refused.items():
        print(f"  {count} skipped: {reason}")

    agree = run_cases(args.minic, out, cases, args.backends.split(","), args.rtol, args.atol)
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
