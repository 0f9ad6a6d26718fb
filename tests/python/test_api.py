"""The Python API (python/minic) against ONNX Runtime and minic's own interpreter.

Course module 8. Each test runs real models through `import minic` and compares outputs
with a reference: ONNX Runtime on the same file and inputs, or the reference interpreter.
"""

import numpy as np
import pytest

import minic
from conftest import MLP, ort_run


def test_load_reads_the_model():
    model = minic.load(MLP)
    assert [i.name for i in model.inputs] == ["input"]
    assert model.inputs[0].dtype == "f32"
    assert model.op_counts == {"MatMul": 3, "Add": 3, "Relu": 2, "Softmax": 1}
    summary = model.inspect()
    assert "input    input: f32[" in summary and "MatMul 3" in summary
    assert "%" in model.graph_ir  # the graph IR's text names values with %


def test_compiled_mlp_matches_onnxruntime(ort):
    model = minic.load(MLP)
    compiled = minic.compile(model, threads=1)
    x = model.random_inputs(seed=3)["input"]
    (expected,) = ort_run(ort, MLP, {"input": x})
    y = compiled(x)
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-6)
    # The three ways of passing inputs give the same outputs.
    np.testing.assert_array_equal(compiled(input=x), y)
    outputs = compiled.run({"input": x})
    assert list(outputs) == ["output"]
    np.testing.assert_array_equal(outputs["output"], y)


def test_compiled_conv_matches_onnxruntime_and_the_interpreter(conv_model, ort):
    model = minic.load(conv_model)
    x = model.random_inputs(seed=1)["x"]
    (expected,) = ort_run(ort, conv_model, {"x": x})
    compiled = minic.compile(model, threads=2)
    np.testing.assert_allclose(compiled(x), expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(model.interpret(x), expected, rtol=1e-4, atol=1e-5)
    assert compiled.stats["compiled_kernels"] == compiled.stats["kernels"]
    assert "Conv" in repr(compiled.graph.op_counts) and "llvm" in repr(compiled)


def test_resnet18_matches_onnxruntime(resnet18, ort):
    model = minic.load(resnet18)
    feeds = model.random_inputs(seed=2)
    (expected,) = ort_run(ort, resnet18, feeds)
    (actual,) = minic.compile(model, threads=2).run(feeds).values()
    assert np.std(expected) > 0.1  # random weights: the outputs differ from class to class
    np.testing.assert_allclose(actual, expected, rtol=1e-3, atol=1e-3)


def test_arrays_cross_without_copies_where_the_layout_allows():
    compiled = minic.compile(MLP, threads=1)
    x = minic.load(MLP).random_inputs(seed=4)["input"]
    y = compiled(x)
    # The output is a numpy array over minic's result buffer, owned by the array.
    assert y.flags["C_CONTIGUOUS"] and y.flags["OWNDATA"] is False and y.base is not None
    # A strided view is copied first and gives the same result as the contiguous array.
    wide = np.zeros((x.shape[0], 2 * x.shape[1]), np.float32)
    wide[:, ::2] = x
    np.testing.assert_array_equal(compiled(wide[:, ::2]), y)
    # Results of one run stay valid after the next.
    z = compiled(np.zeros_like(x))
    assert not np.array_equal(y, z)
    np.testing.assert_array_equal(y, compiled(x))


def test_wrong_inputs_are_errors_naming_the_input():
    compiled = minic.compile(MLP, threads=1)
    shape = compiled.inputs[0].shape
    with pytest.raises(minic.Error, match=r"input 'input' must be f32.*float64.*astype"):
        compiled(np.zeros(shape))
    with pytest.raises(minic.Error,
                       match=r"input 'input' must be f32\[.*given an array of shape \[3\]"):
        compiled(np.zeros(3, np.float32))
    with pytest.raises(minic.Error, match="no input 'x'"):
        compiled(x=np.zeros(shape, np.float32))
    with pytest.raises(minic.Error, match="no array for input"):
        compiled()
    assert issubclass(minic.Error, RuntimeError)


def test_bad_files_and_names_are_errors():
    with pytest.raises(minic.Error, match="missing.onnx"):
        minic.load("missing.onnx")
    with pytest.raises(minic.Error, match="no-such-pass"):
        minic.load(MLP).run_pass("no-such-pass")
    with pytest.raises(minic.Error, match="target"):
        minic.compile(MLP, target="tpu")


def test_graph_passes_one_at_a_time():
    model = minic.load(MLP)
    fused = model.optimize(["fuse-ops"])
    assert fused.num_nodes < model.num_nodes
    assert model.op_counts == fused.op_counts  # the same ops, now inside fused nodes
    assert "fuse-ops" in minic.passes("graph")
    assert minic.default_pipeline()[0] in minic.passes("graph")


def test_profile_and_bench():
    compiled = minic.compile(MLP, threads=1)
    x = minic.load(MLP).random_inputs()["input"]
    y, steps = compiled.profile(x)
    np.testing.assert_array_equal(y, compiled(x))
    assert len(steps) == compiled.stats["kernels"] and all(s.ms >= 0 for s in steps)
    result = compiled.bench(x, warmup=1, repeat=5)
    assert len(result.samples_ms) == 5
    assert result.min_ms <= result.median_ms <= result.max_ms
    assert result.median_ms == pytest.approx(float(np.median(result.samples_ms)))
    assert "median" in str(result)


def test_kernels_as_loop_ir_llvm_ir_and_assembly():
    compiled = minic.compile(MLP, threads=1)
    assert compiled.kernels and all(text.startswith("func @") for text in compiled.kernels.values())
    assert "define" in compiled.llvm_ir
    assert compiled.assembly.strip()
    with pytest.raises(minic.Error, match="not a CUDA target"):
        compiled.cuda_source


def test_cuda_schedules_on_the_loop_interpreter(conv_model, ort):
    model = minic.load(conv_model)
    x = model.random_inputs(seed=5)["x"]
    (expected,) = ort_run(ort, conv_model, {"x": x})
    emulated = minic.compile(model, target="cuda", emulate=True)
    np.testing.assert_allclose(emulated(x), expected, rtol=1e-4, atol=1e-5)
    assert "threadIdx" in emulated.loop_ir or "blockIdx" in emulated.loop_ir


def test_cuda_code_and_its_run(conv_model, ort):
    compiled = minic.compile(conv_model, target="cuda")
    assert "__global__" in compiled.cuda_source
    x = minic.load(conv_model).random_inputs(seed=7)["x"]
    try:
        y = compiled(x)
    except minic.Error as error:  # no GPU here: the run says why
        assert "CUDA" in str(error)
        return
    (expected,) = ort_run(ort, conv_model, {"x": x})
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-5)


def test_an_external_back_end_takes_the_gemms(ort):
    assert "toy-npu" in minic.backends()
    compiled = minic.compile(MLP, threads=1, backends=["toy-npu"])
    assert compiled.stats["backend_kernels"] == {"toy-npu": 3}
    x = minic.load(MLP).random_inputs(seed=8)["input"]
    (expected,) = ort_run(ort, MLP, {"input": x})
    y, steps = compiled.profile(x)
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-6)
    assert [s.backend for s in steps].count("toy-npu") == 3
    assert compiled.backend_reports[0].startswith("toy-npu: 3 programs, ")
    with pytest.raises(minic.Error, match="unknown back end 'tpu'"):
        minic.compile(MLP, backends=["tpu"])
