"""Custom operators from Python and from a plugin (python/minic/custom_op.py), against numpy
and against ONNX Runtime's own contrib ops. Course module 8.

The op registry is one per process: each test registers ops of its own names.
"""

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import minic
from conftest import ROOT, ort_run
from minic import expr

GELU_OPS = os.environ.get("MINIC_GELU_OPS", os.path.join(
    ROOT, "build", "examples", "custom_ops", "libminic_gelu_ops.so"))


def write_model(path, nodes, inputs, outputs, weights=(), domains=()):
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs],
        list(weights))
    imports = [helper.make_opsetid("", 17)] + [helper.make_opsetid(d, 1) for d in domains]
    onnx.save(helper.make_model(graph, opset_imports=imports), path)
    return str(path)


def matmul_then(tmp_path, op, domain, **attributes):
    w = numpy_helper.from_array(np.random.default_rng(0).normal(size=(24, 40))
                                .astype(np.float32), "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]),
             helper.make_node(op, ["m"], ["y"], domain=domain, **attributes)]
    return write_model(tmp_path / f"{domain}.{op}.onnx", nodes, [("x", [6, 24])],
                       [("y", [6, 40])], [w], [domain])


def test_an_op_with_a_python_compute_rule_fuses_and_compiles(tmp_path):
    minic.register_op("com.pytest.Swish", kernel=lambda x: x / (1 + np.exp(-x)),
                      compute=lambda x: x * expr.sigmoid(x))
    assert "com.pytest.Swish" in minic.custom_ops()
    model = minic.load(matmul_then(tmp_path, "Swish", "com.pytest"))
    x = model.random_inputs(seed=1)["x"]
    w = numpy_helper.to_array(onnx.load(model.path).graph.initializer[0])
    m = x.astype(np.float64) @ w
    expected = m / (1 + np.exp(-m))
    np.testing.assert_allclose(model.interpret(x), expected, rtol=1e-4, atol=1e-5)
    compiled = minic.compile(model, threads=1)
    np.testing.assert_allclose(compiled(x), expected, rtol=1e-4, atol=1e-5)
    assert compiled.stats["kernels"] == 1 and compiled.stats["compiled_kernels"] == 1
    assert "sigmoid(" in compiled.loop_ir


def test_an_op_with_attributes_and_no_compute_rule_runs_its_kernel(tmp_path):
    minic.register_op("com.pytest.ScaledClip",
                      kernel=lambda x, alpha=1.0: np.clip(alpha * x, -1, 1))
    model = minic.load(matmul_then(tmp_path, "ScaledClip", "com.pytest", alpha=0.25))
    x = model.random_inputs(seed=2)["x"]
    compiled = minic.compile(model, threads=1)
    assert compiled.stats["reference_ops"] == ["com.pytest.ScaledClip"]
    w = numpy_helper.to_array(onnx.load(model.path).graph.initializer[0])
    np.testing.assert_allclose(compiled(x), np.clip(0.25 * (x @ w), -1, 1), rtol=1e-4,
                               atol=1e-5)


def test_an_op_with_its_own_shape_rule(tmp_path):
    minic.register_op("com.pytest.RowSum", kernel=lambda x: x.sum(axis=-1),
                      shape=lambda x: (x.dtype, x.shape[:-1]))
    path = write_model(tmp_path / "rowsum.onnx",
                       [helper.make_node("RowSum", ["x"], ["y"], domain="com.pytest")],
                       [("x", [3, 5])], [("y", [3])], domains=["com.pytest"])
    model = minic.load(path)
    assert model.outputs[0].shape == (3,)
    x = model.random_inputs(seed=3)["x"]
    np.testing.assert_allclose(minic.compile(model)(x), x.sum(axis=-1), rtol=1e-6)


def test_errors_name_the_op_and_the_function(tmp_path):
    def broken(x):
        raise ValueError("no kernel here")
    minic.register_op("com.pytest.Broken", kernel=broken)
    model = minic.load(matmul_then(tmp_path, "Broken", "com.pytest"))
    with pytest.raises(minic.Error, match=r"com.pytest.Broken node.*Python kernel raised "
                                          r"ValueError: no kernel here"):
        model.interpret(model.random_inputs()["x"])
    minic.register_op("com.pytest.WrongType", kernel=lambda x: x.astype(np.float64))
    model = minic.load(matmul_then(tmp_path, "WrongType", "com.pytest"))
    with pytest.raises(minic.Error, match=r"output 0 of its Python kernel must be f32"):
        model.interpret(model.random_inputs()["x"])
    minic.register_op("com.pytest.NotAnExpr", kernel=lambda x: x, compute=lambda x: 1.0)
    model = minic.load(matmul_then(tmp_path, "NotAnExpr", "com.pytest"))
    with pytest.raises(minic.Error, match="must return an Expr"):
        minic.compile(model)
    with pytest.raises(minic.Error, match="registered already"):
        minic.register_op("com.pytest.Swish2", kernel=lambda x: x)
        minic.register_op("com.pytest.Swish2", kernel=lambda x: x)
    with pytest.raises(minic.Error, match="DOMAIN.NAME"):
        minic.register_op("Swish", kernel=lambda x: x)
    with pytest.raises(minic.Error, match="com.unknown.Op"):
        minic.load(matmul_then(tmp_path, "Op", "com.unknown"))


def gelu_models(tmp_path, domain):
    """MatMul -> FastGelu(bias) -> Gelu, in `domain`: ONNX Runtime's contrib ops' form."""
    rng = np.random.default_rng(4)
    w = numpy_helper.from_array(rng.normal(0, 0.3, (32, 48)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.normal(0, 0.3, (48,)).astype(np.float32), "b")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]),
             helper.make_node("FastGelu", ["m", "b"], ["f"], domain=domain),
             helper.make_node("Gelu", ["f"], ["y"], domain=domain)]
    return write_model(tmp_path / f"gelu.{domain}.onnx", nodes, [("x", [5, 32])],
                       [("y", [5, 48])], [w, b], [domain])


def test_gelu_from_python_matches_onnxruntime_contrib_ops(tmp_path, ort):
    # The formulas of com.microsoft.Gelu and FastGelu, as Python rules.
    minic.register_op(
        "com.pygelu.Gelu",
        kernel=lambda x: (0.5 * x * (1 + np.vectorize(__import__("math").erf)(x / np.sqrt(2))))
        .astype(np.float32),
        compute=lambda x: 0.5 * x * (1 + expr.erf(x * float(1 / np.sqrt(2)))))

    def fast_gelu(z):
        return 0.5 * z * (1 + np.tanh(0.7978845608028654 * (z + 0.044715 * z ** 3)))
    minic.register_op(
        "com.pygelu.FastGelu", inputs=(1, 2),
        kernel=lambda x, bias=None: fast_gelu(x if bias is None else x + bias),
        compute=lambda x, bias=None: (lambda z: 0.5 * z * (1 + expr.tanh(
            0.7978845608028654 * (z + 0.044715 * z * z * z))))(x if bias is None else x + bias))
    ours = minic.load(gelu_models(tmp_path, "com.pygelu"))
    x = ours.random_inputs(seed=5)["x"] * 2
    (expected,) = ort_run(ort, gelu_models(tmp_path, "com.microsoft"), {"x": x})
    np.testing.assert_allclose(ours.interpret(x), expected, rtol=1e-4, atol=1e-4)
    compiled = minic.compile(ours, threads=1)
    np.testing.assert_allclose(compiled(x), expected, rtol=1e-4, atol=1e-4)
    assert compiled.stats["kernels"] == 1  # MatMul, FastGelu and Gelu: one kernel
    emulated = minic.compile(ours, target="cuda", emulate=True)
    np.testing.assert_allclose(emulated(x), expected, rtol=1e-4, atol=1e-4)


def test_the_gelu_plugin_matches_onnxruntime_contrib_ops(tmp_path, ort):
    minic.load_custom_ops(GELU_OPS)
    assert {"com.example.Gelu", "com.example.FastGelu"} <= set(minic.custom_ops())
    ours = minic.load(gelu_models(tmp_path, "com.example"))
    x = ours.random_inputs(seed=6)["x"] * 2
    (expected,) = ort_run(ort, gelu_models(tmp_path, "com.microsoft"), {"x": x})
    np.testing.assert_allclose(minic.compile(ours, threads=1)(x), expected, rtol=1e-4,
                               atol=1e-4)
    with pytest.raises(minic.Error, match="no such custom op library"):
        minic.load_custom_ops(tmp_path / "missing.so")


SOFTSIGN_CUDA = """
extern "C" __global__ void pytest_softsign_f32(const float* x, float* y, int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] / (1.0f + fabsf(x[i]));
}
"""


def test_an_op_with_a_hand_written_cuda_kernel(tmp_path):
    minic.register_op("com.pytest.Softsign", kernel=lambda x: x / (1 + np.abs(x)),
                      compute=lambda x: x / (1 + expr.abs(x)),
                      cuda=(SOFTSIGN_CUDA, "pytest_softsign_f32", 128))
    model = minic.load(matmul_then(tmp_path, "Softsign", "com.pytest"))
    x = model.random_inputs(seed=7)["x"]
    w = numpy_helper.to_array(onnx.load(model.path).graph.initializer[0])
    expected = (x @ w) / (1 + np.abs(x @ w))
    # On the CPU the op fuses into the MatMul; on a GPU it stays alone and runs its own
    # kernel: emulated, its reference kernel.
    assert minic.compile(model, threads=1).stats["kernels"] == 1
    emulated = minic.compile(model, target="cuda", emulate=True)
    assert emulated.stats["kernels"] == 2
    assert emulated.stats["reference_ops"] == ["com.pytest.Softsign"]
    assert "pytest_softsign_f32(const float* x" in emulated.cuda_source
    np.testing.assert_allclose(emulated(x), expected, rtol=1e-4, atol=1e-5)
    # Compiled by NVRTC, the node launches the kernel as given: on a GPU, where there is one.
    compiled = minic.compile(model, target="cuda")
    assert compiled.stats["backend_kernels"] == {"custom CUDA": 1}
    try:
        np.testing.assert_allclose(compiled(x), expected, rtol=1e-4, atol=1e-5)
    except minic.Error as error:
        assert "no CUDA driver" in str(error)
