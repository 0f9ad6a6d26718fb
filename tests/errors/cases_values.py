"""Rows of the bad-input table about sizes and values (bad_inputs.py).

Categories: huge shapes and zero-size dimensions, shapes that stay symbolic after the
inputs are bound, external data (a tensor's bytes in a file beside the model) that
escapes the model's folder or is missing or short, and constant values only a kernel
finds bad.
"""

import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from bad_input_kit import (BAD_INPUT, F32, I64, Case, model, model_case, one_node, tensor)

RUN = ["run", "--backend", "interp", "{d}/model.onnx"]


def size_cases():
    huge = [10**6, 10**6]
    huge_shape = numpy_helper.from_array(np.array(huge, np.int64), "S")
    no_data = TensorProto(name="W", data_type=F32, dims=[10**10, 10**10])
    return [
        model_case("sizes", "huge input shape", lambda: one_node(
            "Relu", ["X"], ["Y"], [("X", huge)], name="relu"),
                   expect=r"model\.onnx: input 'X': shape \[1000000,1000000\] of f32 is absurdly "
                          r"large"),
        model_case("sizes", "huge --input-shape", lambda: one_node(
            "Relu", ["X"], ["Y"], [("X", ["n", "n"])], name="relu"),
                   args=RUN + ["--input-shape", "X=1000000x1000000"],
                   expect=r"input 'X': shape \[1000000,1000000\] of f32 is absurdly large"),
        model_case("sizes", "huge initializer without data", lambda: one_node(
            "Add", ["X", "W"], ["Y"], [("X", [2])], name="add", initializers=[no_data]),
                   expect=r"model\.onnx: initializer 'W': shape \[10000000000,10000000000\] of "
                          r"f32 is absurdly large"),
        model_case("sizes", "Expand to a huge shape", lambda: one_node(
            "Expand", ["X", "S"], ["Y"], [("X", [1])], name="expand",
            initializers=[huge_shape]),
                   expect=r"model\.onnx: Expand node 'expand': output 0 \(%Y\): shape "
                          r"\[1000000,1000000\] of f32 is absurdly large"),
        model_case("sizes", "rank over the limit", lambda: one_node(
            "Relu", ["X"], ["Y"], [("X", [1] * 17)], name="relu"),
                   expect=r"model\.onnx: input 'X': rank 17 is more than minic supports \(16\)"),
        model_case("sizes", "negative dimension", lambda: one_node(
            "Relu", ["X"], ["Y"], [("X", [2, -5])], name="relu"),
                   expect=r"model\.onnx: input 'X' has negative dimension -5 \(shape "
                          r"f32\[2,-5\]\)"),
        model_case("sizes", "negative initializer dimension", lambda: one_node(
            "Add", ["X", "W"], ["Y"], [("X", [2])], name="add",
            initializers=[TensorProto(name="W", data_type=F32, dims=[-2])]),
                   expect=r"model\.onnx: initializer 'W': negative dimension -2"),
        model_case("sizes", "zero-size input runs (interp)", lambda: one_node(
            "Relu", ["X"], ["Y"], [("X", [0, 3])], name="relu"),
                   status=0, expect=r"Y: f32\[0,3\]"),
        model_case("sizes", "zero-size input runs (llvm)", lambda: one_node(
            "Relu", ["X"], ["Y"], [("X", [0, 3])], name="relu"),
                   args=["run", "{d}/model.onnx"], status=0, expect=r"Y: f32\[0,3\]"),
        model_case("sizes", "zero-size MatMul gives zeros (llvm)", lambda: one_node(
            "MatMul", ["A", "B"], ["Y"], [("A", [2, 0]), ("B", [0, 3])], name="mm"),
                   args=["run", "{d}/model.onnx"], status=0, expect=r"Y: f32\[2,3\] .*0, 0"),
        model_case("sizes", "zero-size --input-shape", lambda: one_node(
            "Relu", ["X"], ["Y"], [("X", ["n", 3])], name="relu"),
                   args=RUN + ["--input-shape", "X=0x3"], status=0, expect=r"Y: f32\[0,3\]"),
        model_case("sizes", "Reshape -1 of a zero-size tensor", lambda: one_node(
            "Reshape", ["X", "S"], ["Y"], [("X", [0, 3])], name="reshape", allowzero=1,
            initializers=[numpy_helper.from_array(np.array([-1, 0], np.int64), "S")]),
                   expect=r"model\.onnx: Reshape node 'reshape': cannot reshape f32\[0,3\] \(0 "
                          r"elements\) to \[-1,0\]: the -1 cannot be inferred"),
        model_case("sizes", "Reshape -1 with a copied zero runs", lambda: one_node(
            "Reshape", ["X", "S"], ["Y"], [("X", [0, 3])], name="reshape",
            initializers=[numpy_helper.from_array(np.array([-1, 0], np.int64), "S")]),
                   status=0, expect=r"Y: f32\[0,3\]"),
        model_case("sizes", "ReduceMax over an empty axis gives -inf", lambda: one_node(
            "ReduceMax", ["X"], ["Y"], [("X", [0, 3])], name="max", axes=[0], keepdims=0),
                   args=["run", "{d}/model.onnx"], status=0,
                   expect=r"Y: f32\[3\] = \[-inf, -inf, -inf\]"),
    ]


def symbolic_cases():
    reshape = lambda shape_input: helper.make_node("Reshape", ["X", shape_input], ["Y"],
                                                   name="reshape")
    x = tensor("X", [2, 3])
    s = tensor("S", [2], I64)
    y = helper.make_empty_tensor_value_info("Y")
    one = numpy_helper.from_array(np.array([1, 1], np.int64), "one")
    why = r"which is only known at run time; minic compiles for static shapes"
    return [
        model_case("symbolic", "symbolic input dimension", lambda: one_node(
            "Relu", ["X"], ["Y"], [("X", ["batch", 3])], name="relu"),
                   expect=r"input 'X' has shape f32\[batch,3\] with symbolic dimensions; give its "
                          r"shape with --input-shape X=1x3"),
        model_case("symbolic", "input without a shape", lambda: one_node(
            "Relu", ["X"], ["Y"], [("X", None)], name="relu"),
                   expect=r"input 'X' has no shape in the model; give it with --input-shape"),
        model_case("symbolic", "one of two inputs still symbolic", lambda: one_node(
            "Add", ["A", "B"], ["Y"], [("A", ["n", 3]), ("B", ["m", 3])], name="add"),
                   args=RUN + ["--input-shape", "A=2x3"],
                   expect=r"input 'B' has shape f32\[m,3\] with symbolic dimensions"),
        model_case("symbolic", "--input-shape of the wrong rank", lambda: one_node(
            "Relu", ["X"], ["Y"], [("X", ["batch", 3])], name="relu"),
                   args=RUN + ["--input-shape", "X=2x3x4"],
                   expect=r"model\.onnx: --input-shape X=2x3x4 has rank 3, but the model's input "
                          r"'X' has rank 2"),
        model_case("symbolic", "--input-shape against a fixed dimension", lambda: one_node(
            "Relu", ["X"], ["Y"], [("X", ["batch", 3])], name="relu"),
                   args=RUN + ["--input-shape", "X=2x4"],
                   expect=r"--input-shape X=2x4 gives dimension 1 as 4, but the model's input "
                          r"'X' has 3 there"),
        model_case("symbolic", "Reshape shape from a graph input", lambda: model(
            [reshape("S")], [x, s], [y]),
                   expect=r"model\.onnx: Reshape node 'reshape': its output shape depends on the "
                          rf"value of input 1 \(%S\), {why}"),
        model_case("symbolic", "Reshape shape computed from a graph input", lambda: model(
            [helper.make_node("Mul", ["S", "one"], ["T"], name="mul"), reshape("T")], [x, s],
            [y], [one]),
                   expect=r"model\.onnx: Reshape node 'reshape': its output shape depends on the "
                          rf"value of input 1 \(%T\), {why}, so that value must be a constant \(it "
                          r"is computed from %S; give the value of a graph input with `minic run "
                          r"--input NAME=FILE`\)"),
        Case("symbolic", "Reshape shape given with --input runs", _write_shape_input,
             RUN + ["--input", "S={d}/s.npy"], 0, r"Y: f32\[3,2\]"),
        model_case("symbolic", "Expand shape from a graph input", lambda: model(
            [helper.make_node("Expand", ["X", "S"], ["Y"], name="expand")], [x, s], [y]),
                   expect=r"model\.onnx: Expand node 'expand': its output shape depends on the "
                          rf"value of input 1 \(%S\), {why}"),
    ]


def _write_shape_input(folder):
    reshape = helper.make_node("Reshape", ["X", "S"], ["Y"], name="reshape")
    proto = model([reshape], [tensor("X", [2, 3]), tensor("S", [2], I64)],
                  [helper.make_empty_tensor_value_info("Y")])
    (folder / "model.onnx").write_bytes(proto.SerializeToString())
    np.save(folder / "s.npy", np.array([3, 2], np.int64))


def external_model(location, offset=None, length=None):
    """X f32[2,3] + W, W's 24 bytes in external data at `location`."""
    weight = TensorProto(name="W", data_type=F32, dims=[2, 3])
    weight.data_location = TensorProto.EXTERNAL
    entries = [("location", location), ("offset", offset), ("length", length)]
    for key, value in entries:
        if value is not None:
            entry = weight.external_data.add()
            entry.key, entry.value = key, str(value)
    add = helper.make_node("Add", ["X", "W"], ["Y"], name="add")
    return model([add], [tensor("X", [2, 3])], [tensor("Y", [2, 3])], [weight])


def external_case(name, location, expect, files=None, offset=None, length=None):
    """A row whose model {d}/model/model.onnx reads W from `location` (given the folder);
    `files(folder)` writes what lies around it."""
    def write(folder):
        (folder / "model").mkdir()
        if files:
            files(folder)
        proto = external_model(location(folder), offset, length)
        (folder / "model" / "model.onnx").write_bytes(proto.SerializeToString())
    return Case("external data", name, write, ["run", "--backend", "interp",
                                               "{d}/model/model.onnx"], BAD_INPUT, expect)


def _weights(path, size=24):
    path.write_bytes(np.arange(size, dtype=np.uint8).tobytes())


def external_cases():
    outside = lambda folder: _weights(folder / "w.bin")
    inside = lambda folder: _weights(folder / "model" / "w.bin")
    short = lambda folder: _weights(folder / "model" / "w.bin", 10)
    def symlink(folder):
        _weights(folder / "w.bin")
        os.symlink(folder / "w.bin", folder / "model" / "w.bin")
    def dir_link(folder):
        (folder / "elsewhere").mkdir()
        _weights(folder / "elsewhere" / "w.bin")
        os.symlink(folder / "elsewhere", folder / "model" / "sub")
    where = r"model\.onnx: initializer 'W': external data"
    rel = lambda text: (lambda folder: text)
    return [
        external_case("location with '..'", rel("../w.bin"), files=outside,
                      expect=rf"{where} location '../w.bin' contains '..'; minic reads external "
                             r"data only from the model's directory"),
        external_case("'..' inside the path", rel("sub/../../w.bin"), files=outside,
                      expect=rf"{where} location 'sub/../../w.bin' contains '..'"),
        external_case("absolute location", lambda folder: str(folder / "w.bin"), files=outside,
                      expect=rf"{where} location '/.*w\.bin' is an absolute path"),
        external_case("absolute /etc/passwd", rel("/etc/passwd"),
                      expect=rf"{where} location '/etc/passwd' is an absolute path"),
        external_case("symlink out of the folder", rel("w.bin"), files=symlink,
                      expect=rf"{where} file 'w.bin' resolves to '.*w\.bin', which leaves the "
                             r"model's directory"),
        external_case("symlinked folder out", rel("sub/w.bin"), files=dir_link,
                      expect=rf"{where} file 'sub/w.bin' resolves to .*which leaves the model's "
                             r"directory"),
        external_case("missing file", rel("absent.bin"),
                      expect=rf"{where} file '.*absent\.bin' does not exist"),
        external_case("empty location", rel(""), expect=rf"{where} has no location"),
        external_case("a folder, not a file", rel("."),
                      expect=rf"{where} file '.*' is not a regular file"),
        external_case("file too short", rel("w.bin"), files=short,
                      expect=rf"{where} file '.*w\.bin' is too short: 24 bytes wanted at "
                             r"offset 0"),
        external_case("offset past the end", rel("w.bin"), files=inside, offset=16,
                      expect=rf"{where} file '.*w\.bin' is too short: 24 bytes wanted at "
                             r"offset 16"),
        external_case("length disagrees with the type", rel("w.bin"), files=inside, length=12,
                      expect=rf"{where} length 12 does not match its type f32\[2,3\] "
                             r"\(24 bytes\)"),
        external_case("offset not a number", rel("w.bin"), files=inside, offset="abc",
                      expect=rf"{where} offset 'abc' is not a non-negative integer"),
        external_case("negative offset", rel("w.bin"), files=inside, offset=-8,
                      expect=rf"{where} offset '-8' is not a non-negative integer"),
    ]


def run_time_cases():
    """Constant values that only a kernel finds bad: the interpreter's reference kernel when
    the model runs, the compute rule when the llvm backend lowers it."""
    gather = lambda: one_node("Gather", ["X", "I"], ["Y"], [("X", [2, 3])], name="g",
                              initializers=[numpy_helper.from_array(np.array([5], np.int64), "I")])
    return [
        model_case("run time", "Gather index out of range (interp)", gather,
                   expect=r"error: Gather node 'g': index 5 is out of range for axis 0 of size 2"),
        model_case("run time", "Gather index out of range (llvm)", gather,
                   args=["run", "{d}/model.onnx"],
                   expect=r"error: lowering Gather node 'g': index 5 is out of range for a size "
                          r"of 2"),
    ]


def cases():
    return size_cases() + symbolic_cases() + external_cases() + run_time_cases()
