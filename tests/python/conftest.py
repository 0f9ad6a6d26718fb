"""Shared fixtures of the Python API's tests: where the models are, small ONNX models."""

import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MLP = os.path.join(ROOT, "examples", "models", "mlp.onnx")


@pytest.fixture
def conv_model(tmp_path):
    """Conv -> Relu -> GlobalAveragePool on [1, 3, 16, 16]: three ops, two kernels."""
    rng = np.random.default_rng(0)
    weight = numpy_helper.from_array(rng.normal(size=(8, 3, 3, 3)).astype(np.float32), "w")
    bias = numpy_helper.from_array(rng.normal(size=(8,)).astype(np.float32), "b")
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("GlobalAveragePool", ["r"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 1, 1])], [weight, bias])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "conv.onnx"
    onnx.save(model, path)
    return str(path)


@pytest.fixture(scope="session")
def resnet18(tmp_path_factory):
    """ResNet-18 with random weights (examples/models/build_models.py)."""
    out = tmp_path_factory.mktemp("models")
    subprocess.run([sys.executable, os.path.join(ROOT, "examples", "models", "build_models.py"),
                    "--out", str(out), "resnet18"], check=True, stdout=subprocess.DEVNULL)
    return str(out / "resnet18.onnx")


@pytest.fixture
def ort():
    import onnxruntime
    return onnxruntime


def ort_run(ort_module, path, feeds):
    options = ort_module.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort_module.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)
