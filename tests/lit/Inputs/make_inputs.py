#!/usr/bin/env python3
"""Makes the small ONNX models and tensors that tests/lit/cli/*.test use.

Run from anywhere: python3 tests/lit/Inputs/make_inputs.py
Writes next to this script. Needs numpy and onnx (pip install onnx==1.22.0).
The outputs are committed; rerun this only to change them.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save_model(name, nodes, inputs, outputs, initializers=(), extra_opsets=(), opset=13,
               ir_version=8):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    opsets = [helper.make_opsetid("", opset)] + list(extra_opsets)
    model = helper.make_model(graph, opset_imports=opsets, producer_name="make_inputs.py")
    model.ir_version = ir_version
    onnx.save(model, os.path.join(HERE, name + ".onnx"))


def save_npy(name, array):
    np.save(os.path.join(HERE, name + ".npy"), array)


def main():
    # add: Z = A + B with broadcasting; two inputs to bind by name and by position.
    save_model(
        "add",
        [helper.make_node("Add", ["A", "B"], ["Z"], name="add0")],
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("B", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("Z", TensorProto.FLOAT, [2, 3])])
    a = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
    b = np.array([1.0, -2.0, 0.5], dtype=np.float32)
    save_npy("add_a", a)
    save_npy("add_b", b)
    save_npy("add_expected", a + b)
    wrong = a + b
    wrong[1, 2] += 0.5
    save_npy("add_wrong", wrong)
    # The same expected output as a TensorProto, the form ONNX's tests use.
    with open(os.path.join(HERE, "add_expected.pb"), "wb") as f:
        f.write(numpy_helper.from_array(a + b, "Z").SerializeToString())

    # twin: two MatMul + Relu branches of the same shapes with other weights, one kernel
    # workload compiled once.
    rng = np.random.default_rng(5)
    w1 = numpy_helper.from_array(rng.standard_normal((16, 8)).astype(np.float32), "W1")
    w2 = numpy_helper.from_array(rng.standard_normal((16, 8)).astype(np.float32), "W2")
    save_model(
        "twin",
        [helper.make_node("MatMul", ["X", "W1"], ["M1"], name="matmul1"),
         helper.make_node("Relu", ["M1"], ["Y1"], name="relu1"),
         helper.make_node("MatMul", ["X", "W2"], ["M2"], name="matmul2"),
         helper.make_node("Relu", ["M2"], ["Y2"], name="relu2")],
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 16])],
        [helper.make_tensor_value_info("Y1", TensorProto.FLOAT, [1, 8]),
         helper.make_tensor_value_info("Y2", TensorProto.FLOAT, [1, 8])],
        [w1, w2])

    # reshape: the shape is an input; given with --input, it is frozen into the graph.
    save_model(
        "reshape",
        [helper.make_node("Reshape", ["X", "S"], ["Y"], name="reshape0")],
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("S", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    save_npy("reshape_shape", np.array([3, 2], dtype=np.int64))

    # symbolic: a Relu whose input has a symbolic batch dimension.
    save_model(
        "symbolic",
        [helper.make_node("Relu", ["X"], ["Y"], name="relu0")],
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", 4])])

    # noshape: a Relu whose input has no shape at all in the file.
    save_model(
        "noshape",
        [helper.make_node("Relu", ["X"], ["Y"], name="relu0")],
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])

    # unsupported: an op from a domain minic knows nothing of, between two Relus.
    save_model(
        "unsupported",
        [helper.make_node("Relu", ["X"], ["T0"], name="relu0"),
         helper.make_node("Frobnicate", ["T0"], ["T1"], name="frob0", domain="minic.test"),
         helper.make_node("Relu", ["T1"], ["Y"], name="relu1")],
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 4])],
        extra_opsets=[helper.make_opsetid("minic.test", 1)])

    # opset6: Relu(A * 2 + B) at opset 6, where Add and Mul broadcast only with their
    # `broadcast` attribute (B is [3], A [2,3]); ONNX's version converter brings it to 7.
    save_model(
        "opset6",
        [helper.make_node("Mul", ["A", "two"], ["T0"], name="mul0", broadcast=1),
         helper.make_node("Add", ["T0", "B"], ["T1"], name="add0", broadcast=1),
         helper.make_node("Relu", ["T1"], ["Y"], name="relu0")],
        # IR version 3 lists initializers among the graph inputs too.
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("B", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("two", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(np.array([2.0], dtype=np.float32), "two")],
        opset=6, ir_version=3)
    save_npy("opset6_expected", np.maximum(a * 2 + b, 0))


if __name__ == "__main__":
    main()
