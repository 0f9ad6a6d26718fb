"""Rows of the bad-input table about the model file itself (bad_inputs.py).

Categories: the file (truncated, garbage, LFS pointer), the graph's structure (cycles,
undefined values, duplicate names), attributes (wrong kinds, out of range), shape
mismatches, opsets and domains, control flow (bodies that read undefined names, change a
carried value's shape, never end).
"""

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from bad_input_kit import (F32, I64, bytes_case, model, model_case, one_node, relu_model,
                           tensor)

RUN = ["run", "--backend", "interp", "{d}/model.onnx"]
INSPECT = ["inspect", "{d}/model.onnx"]
LFS = (b"version https://git-lfs.github.com/spec/v1\n"
       b"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
       b"size 1234\n")


def file_cases():
    good = relu_model().SerializeToString()
    not_protobuf = r"model\.onnx: not an ONNX model: the file is truncated or is not a protobuf"
    return [
        bytes_case("file", "missing file", None, ["run", "{d}/absent.onnx"],
                   expect=r"error: .*absent\.onnx"),
        bytes_case("file", "empty file", b"", RUN, expect=r"model\.onnx: the file is empty"),
        bytes_case("file", "garbage bytes", bytes(range(256)) * 4, RUN, expect=not_protobuf),
        bytes_case("file", "truncated model", good[: len(good) - 9], RUN, expect=not_protobuf),
        bytes_case("file", "truncated model (inspect)", good[: len(good) - 9], INSPECT,
                   expect=not_protobuf),
        bytes_case("file", "text, not protobuf", b"this is not a model\n" * 8, RUN,
                   expect=r"model\.onnx: not an ONNX model"),
        bytes_case("file", "Git LFS pointer", LFS, RUN,
                   expect=r"model\.onnx: this is a Git LFS pointer file, not the model itself"),
        bytes_case("file", "Git LFS pointer (inspect)", LFS, INSPECT,
                   expect=r"model\.onnx: this is a Git LFS pointer file"),
        bytes_case("file", "a tensor, not a model", numpy_helper.from_array(
            np.zeros(3, np.float32), "t").SerializeToString(), RUN,
                   expect=r"model\.onnx: not an ONNX model"),
        model_case("file", "no IR version", lambda: relu_model(ir_version=0),
                   expect=r"model\.onnx: not an ONNX model: it has no IR version"),
        model_case("file", "IR version too new", lambda: relu_model(ir_version=99),
                   expect=r"model\.onnx: IR version 99 is newer than minic supports"),
        model_case("file", "no outputs", lambda: model(
            [helper.make_node("Relu", ["X"], ["Y"])], [tensor("X", [2])], []),
                   expect=r"model\.onnx: the model has no outputs"),
    ]


def graph_cases():
    x = [tensor("X", [2, 3])]
    y = [tensor("Y", [2, 3])]
    relu = lambda i, o, n: helper.make_node("Relu", [i], [o], name=n)
    w = numpy_helper.from_array(np.ones((2, 3), np.float32), "W")
    return [
        model_case("graph", "cycle of two nodes", lambda: model(
            [helper.make_node("Add", ["X", "B"], ["A"], name="add"), relu("A", "B", "relu")],
            x, [tensor("A", [2, 3])]),
                   expect=r"model\.onnx: graph 'g' has a cycle through (Add node 'add'|Relu node "
                          r"'relu')"),
        model_case("graph", "node reading its own output", lambda: model(
            [helper.make_node("Add", ["X", "Y"], ["Y"], name="self")], x, y),
                   expect=r"model\.onnx: graph 'g' has a cycle through Add node 'self'"),
        model_case("graph", "undefined input value", lambda: model(
            [relu("nowhere", "Y", "relu")], x, y),
                   expect=r"model\.onnx: Relu node 'relu' uses %nowhere, which is not defined"),
        model_case("graph", "undefined graph output", lambda: model(
            [relu("X", "Y", "relu")], x, [tensor("Z", [2, 3])]),
                   expect=r"model\.onnx: graph output 'Z' is not defined by any node"),
        model_case("graph", "two nodes define one value", lambda: model(
            [relu("X", "Y", "first"), helper.make_node("Neg", ["X"], ["Y"], name="second")],
            x, y),
                   expect=r"model\.onnx: Neg node 'second' defines %Y, which is already defined"),
        model_case("graph", "node redefines a graph input", lambda: model(
            [relu("X", "X", "relu")], x, x),
                   expect=r"model\.onnx: Relu node 'relu' defines %X, which is already defined"),
        model_case("graph", "node redefines an initializer", lambda: model(
            [relu("X", "W", "relu")], x, [tensor("W", [2, 3])], [w]),
                   expect=r"model\.onnx: Relu node 'relu' defines %W, which is already defined"),
        model_case("graph", "node defines one output twice", lambda: model(
            [helper.make_node("Split", ["X"], ["P", "P"], name="split", axis=0)], x,
            [tensor("P", [1, 3])]),
                   expect=r"model\.onnx: Split node 'split' defines %P twice"),
        model_case("graph", "initializer defined twice", lambda: model(
            [helper.make_node("Add", ["X", "W"], ["Y"], name="add")], x, y, [w, w]),
                   expect=r"model\.onnx: initializer 'W' is defined twice"),
        model_case("graph", "graph input listed twice", lambda: model(
            [relu("X", "Y", "relu")], x + x, y),
                   expect=r"model\.onnx: input 'X' is listed twice"),
        model_case("graph", "unnamed graph input", lambda: model(
            [relu("X", "Y", "relu")], x + [tensor("", [2])], y),
                   expect=r"model\.onnx: the model has an input without a name"),
        model_case("graph", "too few inputs", lambda: one_node(
            "Add", ["X"], ["Y"], [("X", [2, 3])], name="add"),
                   expect=r"model\.onnx: Add node 'add': has 1 inputs; Add takes 2 to 2"),
        model_case("graph", "too many inputs", lambda: one_node(
            "Relu", ["X", "X"], ["Y"], [("X", [2, 3])], name="relu"),
                   expect=r"model\.onnx: Relu node 'relu': has 2 inputs; Relu takes 1 to 1"),
        model_case("graph", "too many outputs", lambda: one_node(
            "Relu", ["X"], ["Y", "Z"], [("X", [2, 3])], name="relu"),
                   expect=r"model\.onnx: Relu node 'relu': has 2 outputs; Relu gives 1 to 1"),
        model_case("graph", "unsupported op", lambda: one_node(
            "Frobnicate", ["X"], ["Y"], [("X", [2, 3])], name="frob"),
                   expect=r"model\.onnx: minic does not support 1 of the ops this model uses:"
                          r"\n  Frobnicate \(opset 17\): node 'frob'"),
    ]


def attribute_cases():
    x23 = [("X", [2, 3])]
    image = [("X", [1, 3, 4, 4])]
    kind = lambda node, attr, want, got: (rf"model\.onnx: {node}: attribute '{attr}' should be "
                                          rf"of kind {want}, not {got}")
    return [
        model_case("attributes", "int given as a float", lambda: one_node(
            "Softmax", ["X"], ["Y"], x23, name="sm", axis=1.5),
                   expect=kind("Softmax node 'sm'", "axis", "int", "float")),
        model_case("attributes", "ints given as a string", lambda: one_node(
            "Transpose", ["X"], ["Y"], x23, name="tr", perm="1,0"),
                   expect=kind("Transpose node 'tr'", "perm", "ints", "string")),
        model_case("attributes", "ints given as floats", lambda: one_node(
            "MaxPool", ["X"], ["Y"], image, name="pool", kernel_shape=[2.0, 2.0]),
                   expect=kind("MaxPool node 'pool'", "kernel_shape", "ints", "floats")),
        model_case("attributes", "string given as an int", lambda: one_node(
            "DepthToSpace", ["X"], ["Y"], [("X", [1, 4, 2, 2])], name="d2s", blocksize=2,
            mode=3),
                   expect=kind("DepthToSpace node 'd2s'", "mode", "string", "int")),
        model_case("attributes", "attribute given twice", lambda: model(
            [_twice_softmax()], [tensor("X", [2, 3])], [tensor("Y", [2, 3])]),
                   expect=r"model\.onnx: Softmax node 'sm': attribute 'axis' is given twice"),
        model_case("attributes", "axis out of range", lambda: one_node(
            "Softmax", ["X"], ["Y"], x23, name="sm", axis=5),
                   expect=r"model\.onnx: Softmax node 'sm': axis 5 is out of range for rank 2"),
        model_case("attributes", "negative axis out of range", lambda: one_node(
            "Concat", ["X", "X"], ["Y"], x23, name="cat", axis=-3),
                   expect=r"model\.onnx: Concat node 'cat': axis -3 is out of range for rank 2"),
        model_case("attributes", "perm not a permutation", lambda: one_node(
            "Transpose", ["X"], ["Y"], x23, name="tr", perm=[0, 0]),
                   expect=r"model\.onnx: Transpose node 'tr': perm \[0,0\] is not a permutation"),
        model_case("attributes", "unknown element type in Cast", lambda: one_node(
            "Cast", ["X"], ["Y"], x23, name="cast", to=999),
                   expect=r"model\.onnx: Cast node 'cast': casts to data type 999, which minic "
                          r"does not support"),
        model_case("attributes", "blocksize 0", lambda: one_node(
            "DepthToSpace", ["X"], ["Y"], [("X", [1, 4, 2, 2])], name="d2s", blocksize=0),
                   expect=r"model\.onnx: DepthToSpace node 'd2s': blocksize is 0; it must be "
                          r"between 1"),
        model_case("attributes", "unknown mode string", lambda: one_node(
            "DepthToSpace", ["X"], ["Y"], [("X", [1, 4, 2, 2])], name="d2s", blocksize=2,
            mode="XYZ"),
                   expect=r"model\.onnx: DepthToSpace node 'd2s': mode is 'XYZ'; DepthToSpace "
                          r"takes 'DCR' or 'CRD'"),
        model_case("attributes", "unknown Pad mode", lambda: one_node(
            "Pad", ["X", "P"], ["Y"], [("X", [2, 3])], name="pad", mode="spiral", initializers=[
                numpy_helper.from_array(np.array([0, 1, 0, 1], np.int64), "P")]),
                   expect=r"model\.onnx: Pad node 'pad': unknown mode 'spiral' \(minic knows "
                          r"constant, edge, reflect and wrap\)"),
        model_case("attributes", "group does not divide the channels", lambda: one_node(
            "Conv", ["X", "W"], ["Y"], image + [("W", [4, 3, 1, 1])], name="conv", group=2),
                   expect=r"model\.onnx: Conv node 'conv': group 2 does not divide the input "
                          r"channels"),
        model_case("attributes", "zero stride", lambda: one_node(
            "MaxPool", ["X"], ["Y"], image, name="pool", kernel_shape=[2, 2], strides=[0, 0]),
                   expect=r"model\.onnx: MaxPool node 'pool': attribute 'strides' has the entry 0"),
        model_case("attributes", "split sizes do not add up", lambda: one_node(
            "Split", ["X", "S"], ["A", "B"], x23, name="split", axis=1,
            initializers=[numpy_helper.from_array(np.array([1, 1], np.int64), "S")]),
                   expect=r"model\.onnx: Split node 'split': split sizes \[1,1\] add up to 2, "
                          r"not the dimension's 3"),
        model_case("attributes", "function attribute reference", lambda: model(
            [_ref_attr_node()], [tensor("X", [2, 3])], [tensor("Y", [2, 3])]),
                   expect=r"model\.onnx: Softmax node 'sm': attribute 'axis' refers to a "
                          r"function attribute"),
        model_case("attributes", "Constant with two values", lambda: model(
            [helper.make_node("Constant", [], ["C"], name="c", value_float=1.0, value_int=2)],
            [], [tensor("C", [])]),
                   expect=r"model\.onnx: Constant node 'c': a Constant node needs exactly one "
                          r"attribute"),
        model_case("attributes", "Constant string", lambda: model(
            [helper.make_node("Constant", [], ["C"], name="c", value_string="hi")],
            [], [tensor("C", [])]),
                   expect=r"model\.onnx: Constant node 'c': a string constant"),
        model_case("attributes", "Constant value not a tensor", lambda: model(
            [helper.make_node("Constant", [], ["C"], name="c", value=3)], [], [tensor("C", [])]),
                   expect=r"model\.onnx: Constant node 'c': attribute 'value' must be a tensor"),
    ]


def _twice_softmax():
    node = helper.make_node("Softmax", ["X"], ["Y"], name="sm", axis=1)
    node.attribute.append(helper.make_attribute("axis", 0))
    return node


def _ref_attr_node():
    node = helper.make_node("Softmax", ["X"], ["Y"], name="sm")
    attribute = helper.make_attribute("axis", 1)
    attribute.ref_attr_name = "outer_axis"
    node.attribute.append(attribute)
    return node


def shape_cases():
    w_short = TensorProto(name="W", data_type=F32, dims=[2, 3], raw_data=b"\0" * 8)
    w_count = TensorProto(name="W", data_type=F32, dims=[2, 3], float_data=[1.0, 2.0])
    w_both = TensorProto(name="W", data_type=F32, dims=[2], float_data=[1.0, 2.0],
                         raw_data=b"\0" * 8)
    add_w = lambda init: (lambda: one_node("Add", ["X", "W"], ["Y"], [("X", [2, 3])], name="add",
                                           initializers=[init]))
    shape44 = numpy_helper.from_array(np.array([4, 4], np.int64), "S")
    return [
        model_case("shapes", "operands do not broadcast", lambda: one_node(
            "Add", ["A", "B"], ["Y"], [("A", [2, 3]), ("B", [4, 5])], name="add"),
                   expect=r"model\.onnx: Add node 'add': input shapes \[2,3\] and \[4,5\] do not "
                          r"broadcast"),
        model_case("shapes", "MatMul inner sizes differ", lambda: one_node(
            "MatMul", ["A", "B"], ["Y"], [("A", [2, 3]), ("B", [4, 5])], name="mm"),
                   expect=r"model\.onnx: MatMul node 'mm': inner dimensions do not match"),
        model_case("shapes", "Concat sizes differ off the axis", lambda: one_node(
            "Concat", ["A", "B"], ["Y"], [("A", [2, 3]), ("B", [3, 3])], name="cat", axis=1),
                   expect=r"model\.onnx: Concat node 'cat': input 1 is f32\[3,3\], which cannot be "
                          r"joined to input 0, f32\[2,3\]"),
        model_case("shapes", "Reshape to another element count", lambda: one_node(
            "Reshape", ["X", "S"], ["Y"], [("X", [2, 3])], name="reshape",
            initializers=[shape44]),
                   expect=r"model\.onnx: Reshape node 'reshape': cannot reshape f32\[2,3\] \(6 "
                          r"elements\) to \[4,4\] \(16 elements\)"),
        model_case("shapes", "Conv channels differ from the weight's", lambda: one_node(
            "Conv", ["X", "W"], ["Y"], [("X", [1, 3, 4, 4]), ("W", [4, 2, 1, 1])], name="conv"),
                   expect=r"model\.onnx: Conv node 'conv': weight W f32\[4,2,1,1\] expects 2 input "
                          r"channels per group"),
        model_case("shapes", "operand element types differ", lambda: one_node(
            "Add", ["A", "B"], ["Y"], [("A", [2, 3]), ("B", [2, 3], I64)], name="add"),
                   expect=r"model\.onnx: Add node 'add': inputs 0 and 1 have different element "
                          r"types \(f32 and i64\)"),
        model_case("shapes", "declared output shape differs", lambda: model(
            [helper.make_node("Relu", ["X"], ["Y"], name="relu")], [tensor("X", [2, 3])],
            [tensor("Y", [3, 2])]),
                   expect=r"model\.onnx: output 'Y' is declared as f32\[3,2\] in the model, but "
                          r"minic infers f32\[2,3\]"),
        model_case("shapes", "declared output type differs", lambda: model(
            [helper.make_node("Relu", ["X"], ["Y"], name="relu")], [tensor("X", [2, 3])],
            [tensor("Y", [2, 3], I64)]),
                   expect=r"model\.onnx: output 'Y' is declared as i64\[2,3\]"),
        model_case("shapes", "initializer raw_data too short", add_w(w_short),
                   expect=r"model\.onnx: initializer 'W' has 8 bytes of raw_data but its type "
                          r"f32\[2,3\] needs 24"),
        model_case("shapes", "initializer with too few values", add_w(w_count),
                   expect=r"model\.onnx: initializer 'W' has 2 values in float_data but its "
                          r"shape needs 6"),
        model_case("shapes", "initializer with raw and typed data", add_w(w_both),
                   expect=r"model\.onnx: initializer 'W' has both raw_data and typed data"),
    ]


def opset_cases():
    relu = [helper.make_node("Relu", ["X"], ["Y"], name="relu")]
    io = ([tensor("X", [2, 3])], [tensor("Y", [2, 3])])
    return [
        model_case("opset/domain", "opset too new", lambda: relu_model(opset=99),
                   expect=r"model\.onnx: default-domain opset 99 is newer than minic supports"),
        model_case("opset/domain", "opset too new (inspect)", lambda: relu_model(opset=99),
                   args=INSPECT, expect=r"model\.onnx: default-domain opset 99 is newer"),
        model_case("opset/domain", "opset 0", lambda: relu_model(opset=0),
                   expect=r"model\.onnx: default-domain opset 0 is not a valid version"),
        model_case("opset/domain", "two default opsets", lambda: relu_model(
            opsets=[("", 17), ("ai.onnx", 18)]),
                   expect=r"model\.onnx: the model imports the default-domain opset with "
                          r"different versions \(17, 18\)"),
        model_case("opset/domain", "no opset import", lambda: relu_model(opsets=[]),
                   expect=r"model\.onnx: the model imports no default-domain \(ai.onnx\) opset"),
        model_case("opset/domain", "only an unknown domain", lambda: model(
            [helper.make_node("Frob", ["X"], ["Y"], domain="com.example")], *io,
            opsets=[("com.example", 1)]),
                   expect=r"model\.onnx: the model's ops are in com.example 1 only; minic "
                          r"supports the default domain"),
        model_case("opset/domain", "one node in an unknown domain", lambda: model(
            relu + [helper.make_node("Frob", ["Y"], ["Z"], name="frob", domain="com.example")],
            io[0], [tensor("Z", [2, 3])], opsets=[("", 17), ("com.example", 1)]),
                   expect=r"model\.onnx: minic does not support 1 of the ops this model uses:"
                          r"\n  com.example.Frob \(opset 1\): node 'frob'"),
        model_case("opset/domain", "op newer than the model's opset", lambda: one_node(
            "Gelu", ["X"], ["Y"], [("X", [2, 3])], name="gelu"),
                   expect=r"model\.onnx: minic does not support 1 of the ops this model uses:"
                          r"\n  Gelu \(opset 17\): node 'gelu'"),
        model_case("opset/domain", "string input", lambda: one_node(
            "Identity", ["X"], ["Y"], [("X", [2], TensorProto.STRING)], name="id"),
                   expect=r"model\.onnx: input 'X' has element type STRING, which minic does not "
                          r"support"),
        model_case("opset/domain", "input without element type", lambda: one_node(
            "Identity", ["X"], ["Y"], [("X", [2], TensorProto.UNDEFINED)], name="id"),
                   expect=r"model\.onnx: input 'X' has no element type"),
    ]


def body(nodes, inputs, outputs):
    """A control-flow body: its inputs and outputs named, their types left out."""
    return helper.make_graph(nodes, "body", [helper.make_empty_tensor_value_info(n) for n in inputs],
                             [helper.make_empty_tensor_value_info(n) for n in outputs])


def control_flow_cases():
    loop_types = [("M", [], I64), ("X", [1])]
    identity = helper.make_node("Identity", ["cond"], ["cond_out"])
    return [
        model_case("control flow", "a body reads a name nothing defines", lambda: one_node(
            "Loop", ["M", "", "X"], ["Y"], loop_types, name="loop", body=body(
                [identity, helper.make_node("Add", ["x", "ghost"], ["y"])],
                ["i", "cond", "x"], ["cond_out", "y"])),
                   expect=r"model\.onnx: Loop node 'loop' uses %ghost, which is not defined"),
        model_case("control flow", "a carried value that grows", lambda: one_node(
            "Loop", ["M", "", "X"], ["Y"], loop_types, name="loop", body=body(
                [identity, helper.make_node("Concat", ["x", "x"], ["y"], axis=0)],
                ["i", "cond", "x"], ["cond_out", "y"])),
                   expect=r"Loop node 'loop': its body turns carried value 0 from f32\[1\] into "
                          r"f32\[2\]; minic needs it to keep its type"),
        model_case("control flow", "scan rows counted by an input without a value",
                   lambda: one_node("Loop", ["M", "", "X"], ["Y", "R"], loop_types, name="loop",
                                    body=body([identity, helper.make_node("Neg", ["x"], ["y"]),
                                               helper.make_node("Identity", ["y"], ["r"])],
                                              ["i", "cond", "x"], ["cond_out", "y", "r"])),
                   expect=r"Loop node 'loop': its output shape depends on the value of input 0 "
                          r"\(%M\)"),
        model_case("control flow", "a loop with no end", lambda: one_node(
            "Loop", ["", "", "X"], ["Y"], [("X", [1])], name="loop", body=body(
                [identity, helper.make_node("Neg", ["x"], ["y"])],
                ["i", "cond", "x"], ["cond_out", "y"])),
                   expect=r"Loop node 'loop': has neither a trip count \(M\) nor a condition"),
        model_case("control flow", "a branch with too many outputs", lambda: one_node(
            "If", ["C"], ["Y"], [("C", [], TensorProto.BOOL), ("X", [2])], name="if",
            then_branch=body([helper.make_node("Split", ["X"], ["a", "b"], num_outputs=2)], [],
                             ["a", "b"]),
            else_branch=body([helper.make_node("Neg", ["X"], ["n"])], [], ["n"])),
                   expect=r"If node 'if': its (then|else)_branch returns 2 values, but the node "
                          r"has 1 outputs"),
        model_case("control flow", "a graph attribute on an op without bodies", lambda: one_node(
            "Relu", ["X"], ["Y"], [("X", [2])], name="relu",
            body=body([helper.make_node("Neg", ["x"], ["y"])], ["x"], ["y"])),
                   expect=r"Relu node 'relu': attribute 'body' is a graph, which Relu does not "
                          r"take"),
    ]


def cases():
    return (file_cases() + graph_cases() + attribute_cases() + shape_cases() + opset_cases() +
            control_flow_cases())
