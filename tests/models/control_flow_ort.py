#!/usr/bin/env python3
"""Checks minic's If, Loop and Scan against onnxruntime on models with nested bodies.

Course module 8 (differential testing). ONNX's node tests hold one small model for each
control-flow op; the models here are the shapes real exporters write: a body reading
values of the graph around it (and of the graph around that), bodies nested in bodies, a
loop whose condition comes from its body, a body that slices at the iteration number, a
Scan over two inputs along different axes and directions. Each model runs on random
inputs through onnxruntime, is written as a node-test case (model.onnx,
test_data_set_0/input_K.pb, output_K.pb), and `minic run --compare` runs it on each
backend asked for. Exits 1 when a case fails.

    control_flow_ort.py --minic BUILD/minic [--seed 1] [--backends interp,llvm] [--out DIR]
"""

import argparse
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recurrent_ort import run_cases  # noqa: E402

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
OPSET = 17


def value(name, dtype=F, shape=None):
    """A ValueInfo; a body's inputs and outputs often leave the shape out."""
    return helper.make_tensor_value_info(name, dtype, shape)


def const(name, array):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(array, name))


def model(nodes, inputs, outputs):
    graph = helper.make_graph(nodes, "control_flow", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def loop_capture_scan():
    """acc += x * i for i < M, reading the graph's x; each acc stacked."""
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["fi"], to=F),
         helper.make_node("Mul", ["x", "fi"], ["xi"]),
         helper.make_node("Add", ["acc", "xi"], ["acc_out"]),
         helper.make_node("Identity", ["acc_out"], ["row"]),
         helper.make_node("Identity", ["cond"], ["cond_out"])],
        "body", [value("i", I64, []), value("cond", B, []), value("acc")],
        [value("cond_out", B), value("acc_out"), value("row")])
    nodes = [const("zero", np.zeros(3, np.float32)),
             helper.make_node("Loop", ["m", "", "zero"], ["acc", "rows"], body=body)]
    return (model(nodes, [value("m", I64, []), value("x", F, [3])],
                  [value("acc", F, [3]), value("rows", F, [4, 3])]),
            lambda rng: {"m": np.array(4, np.int64), "x": rng.standard_normal(3, np.float32)})


def while_loop():
    """x = 1.5 x + 0.1 while max(x) < limit: the row count depends on the values."""
    body = helper.make_graph(
        [const("k", np.array(1.5, np.float32)), const("c", np.array(0.1, np.float32)),
         helper.make_node("Mul", ["x", "k"], ["kx"]),
         helper.make_node("Add", ["kx", "c"], ["x_out"]),
         helper.make_node("ReduceMax", ["x_out"], ["top"], keepdims=0),
         helper.make_node("Less", ["top", "limit"], ["cond_out"]),
         helper.make_node("Identity", ["x_out"], ["row"])],
        "body", [value("i", I64, []), value("cond", B, []), value("x")],
        [value("cond_out", B), value("x_out"), value("row")])
    nodes = [helper.make_node("ReduceMax", ["x0"], ["top0"], keepdims=0),
             helper.make_node("Less", ["top0", "limit"], ["go"]),
             helper.make_node("Loop", ["", "go", "x0"], ["x", "rows"], body=body)]
    return (model(nodes, [value("x0", F, [2]), value("limit", F, [])],
                  [value("x", F, [2]), value("rows", F, ["steps", 2])]),
            lambda rng: {"x0": rng.uniform(0.5, 1, 2).astype(np.float32),
                         "limit": np.array(rng.uniform(5, 40), np.float32)})


def if_in_loop():
    """For i < M: a += (i even ? w * a : a - b), the If reading w from two scopes out."""
    then_branch = helper.make_graph([helper.make_node("Mul", ["w", "a"], ["t"])], "then", [],
                                    [value("t")])
    else_branch = helper.make_graph([helper.make_node("Sub", ["a", "b"], ["e"])], "else", [],
                                    [value("e")])
    body = helper.make_graph(
        [const("two", np.array(2, np.int64)), const("zero", np.array(0, np.int64)),
         helper.make_node("Mod", ["i", "two"], ["r"]),
         helper.make_node("Equal", ["r", "zero"], ["even"]),
         helper.make_node("If", ["even"], ["d"], then_branch=then_branch,
                          else_branch=else_branch),
         helper.make_node("Add", ["a", "d"], ["a_out"]),
         helper.make_node("Identity", ["cond"], ["cond_out"])],
        "body", [value("i", I64, []), value("cond", B, []), value("a")],
        [value("cond_out", B), value("a_out")])
    nodes = [const("m", np.array(5, np.int64)), const("yes", np.array(True)),
             helper.make_node("Loop", ["m", "yes", "a0"], ["a"], body=body)]
    return (model(nodes, [value("a0", F, [2, 2]), value("w", F, [2, 2]), value("b", F, [2])],
                  [value("a", F, [2, 2])]),
            lambda rng: {"a0": rng.standard_normal((2, 2), np.float32),
                         "w": rng.uniform(-0.5, 0.5, (2, 2)).astype(np.float32),
                         "b": rng.standard_normal(2, np.float32)})


def loop_in_if():
    """c ? (sum of x[i] * i over a slice loop) : -x, the loop slicing at i."""
    body = helper.make_graph(
        [const("one", np.array(1, np.int64)), const("axes", np.array([0], np.int64)),
         helper.make_node("Add", ["i", "one"], ["end"]),
         helper.make_node("Unsqueeze", ["i", "axes"], ["s0"]),
         helper.make_node("Unsqueeze", ["end", "axes"], ["s1"]),
         helper.make_node("Slice", ["x", "s0", "s1"], ["xi"]),
         helper.make_node("Add", ["acc", "xi"], ["acc_out"]),
         helper.make_node("Identity", ["cond"], ["cond_out"])],
        "body", [value("i", I64, []), value("cond", B, []), value("acc")],
        [value("cond_out", B), value("acc_out")])
    then_branch = helper.make_graph(
        [const("n", np.array(4, np.int64)), const("z", np.zeros(1, np.float32)),
         helper.make_node("Loop", ["n", "", "z"], ["total"], body=body)],
        "then", [], [value("total")])
    else_branch = helper.make_graph(
        [const("axes0", np.array([0], np.int64)),
         helper.make_node("ReduceSum", ["x", "axes0"], ["s"], keepdims=1),
         helper.make_node("Neg", ["s"], ["ns"])], "else", [], [value("ns")])
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=then_branch,
                              else_branch=else_branch)]
    return (model(nodes, [value("c", B, []), value("x", F, [6])], [value("y", F, [1])]),
            lambda rng: {"c": np.array(rng.random() < 0.5), "x": rng.standard_normal(6, np.float32)})


def scan_two_inputs():
    """A state s += u_t * v_t + b over u's rows (axis 0) and v's columns (axis 1, reversed),
    each step's s stacked along output axis 1 in reverse order."""
    body = helper.make_graph(
        [helper.make_node("Mul", ["u", "v"], ["uv"]),
         helper.make_node("Add", ["s", "uv"], ["s1"]),
         helper.make_node("Add", ["s1", "b"], ["s_out"]),
         helper.make_node("Identity", ["s_out"], ["row"])],
        "body", [value("s"), value("u"), value("v")], [value("s_out"), value("row")])
    nodes = [helper.make_node("Scan", ["s0", "u", "v"], ["s", "rows"], body=body,
                              num_scan_inputs=2, scan_input_axes=[0, 1],
                              scan_input_directions=[0, 1], scan_output_axes=[1],
                              scan_output_directions=[1])]
    return (model(nodes, [value("s0", F, [3]), value("u", F, [4, 3]), value("v", F, [3, 4]),
                          value("b", F, [3])],
                  [value("s", F, [3]), value("rows", F, [3, 4])]),
            lambda rng: {"s0": rng.standard_normal(3, np.float32),
                         "u": rng.standard_normal((4, 3), np.float32),
                         "v": rng.standard_normal((3, 4), np.float32),
                         "b": rng.standard_normal(3, np.float32)})


CASES = [loop_capture_scan, while_loop, if_in_loop, loop_in_if, scan_two_inputs]


def write_case(folder, built, rng):
    """Runs the model on onnxruntime and writes the node-test case."""
    onnx_model, make_inputs = built
    onnx.checker.check_model(onnx_model)
    inputs = make_inputs(rng)
    session = onnxruntime.InferenceSession(onnx_model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    outputs = session.run(None, inputs)
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data)
    onnx.save(onnx_model, os.path.join(folder, "model.onnx"))
    for k, info in enumerate(onnx_model.graph.input):
        with open(os.path.join(data, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(inputs[info.name], info.name).SerializeToString())
    for k, (info, array) in enumerate(zip(onnx_model.graph.output, outputs)):
        with open(os.path.join(data, f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(array, info.name).SerializeToString())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minic", required=True, help="the minic binary")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--draws", type=int, default=3, help="random inputs per model")
    parser.add_argument("--backends", default="interp,llvm")
    parser.add_argument("--out", help="keep the cases in this folder (default: a temp one)")
    args = parser.parse_args()

    onnxruntime.set_default_logger_severity(4)
    rng = np.random.default_rng(args.seed)
    out = args.out or tempfile.mkdtemp(prefix="control_flow_ort_")
    os.makedirs(out, exist_ok=True)
    names = []
    for make in CASES:
        for draw in range(args.draws):
            name = f"{make.__name__}_{draw}"
            folder = os.path.join(out, name)
            shutil.rmtree(folder, ignore_errors=True)
            write_case(folder, make(), rng)
            names.append(name)
    agree = run_cases(args.minic, out, {name: "" for name in names}, args.backends.split(","),
                      1e-4, 1e-5)
    return 0 if agree else 1

if __name__ == "__main__":
    sys.exit(main())
