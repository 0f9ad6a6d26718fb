"""The pieces the bad-input table (bad_inputs.py) is written with. Course module 1.

A row of the table is a Case: a name, a function that writes the bad input into an empty
folder, the minic command line that reads it, the exit status minic must give and a regular
expression its message must match. The helpers below write the usual kinds of bad input:
ONNX models built with onnx.helper and saved without onnx.checker (so that models the
checker would refuse still reach minic), .npy files byte by byte, and tuning-database lines.
"""

from dataclasses import dataclass
import json
import struct
from typing import Callable

import numpy as np
from onnx import TensorProto, helper

OPSET = 17
IR_VERSION = 8
F32 = TensorProto.FLOAT
I64 = TensorProto.INT64

# minic's exit statuses (tools/minic/main.cpp): 2 for a bad command line or bad input.
BAD_INPUT = 2


@dataclass
class Case:
    category: str
    name: str
    write: Callable  # write(folder: pathlib.Path): puts the bad input in folder
    args: list       # minic's arguments; "{d}" stands for the folder
    status: int      # the exit status minic must give
    expect: str      # a regular expression minic's stderr (and stdout, unless 2) must match


def tensor(name, shape, dtype=F32):
    """A graph input or output: name and type."""
    return helper.make_tensor_value_info(name, dtype, shape)


def model(nodes, inputs, outputs, initializers=(), opset=OPSET, ir_version=IR_VERSION,
          opsets=None):
    """A ModelProto, not checked: the bad ones must reach minic as they are."""
    graph = helper.make_graph(list(nodes), "g", list(inputs), list(outputs), list(initializers))
    if opsets is None:
        opsets = [("", opset)]
    imports = [helper.make_opsetid(domain, version) for domain, version in opsets]
    proto = helper.make_model(graph, opset_imports=imports)
    proto.ir_version = ir_version
    return proto


def relu_model(**kwargs):
    """X f32[2,3] → Relu → Y: the model the input-file and option rows run."""
    node = helper.make_node("Relu", ["X"], ["Y"], name="relu")
    return model([node], [tensor("X", [2, 3])], [tensor("Y", [2, 3])], **kwargs)


def one_node(op, inputs, outputs, types, initializers=(), name="n", opset=OPSET, **attributes):
    """A model of one node named `name`. `types` are the graph inputs' (name, shape[, dtype]);
    the outputs are declared by name only, so minic's inferred types stand."""
    node = helper.make_node(op, inputs, outputs, name=name, **attributes)
    graph_outputs = [helper.make_empty_tensor_value_info(o) for o in outputs]
    return model([node], [tensor(*t) for t in types], graph_outputs, initializers, opset=opset)


def model_case(category, name, build, status=BAD_INPUT, expect="", args=None):
    """A row whose bad input is the model `build()` returns, saved as {d}/model.onnx."""
    def write(folder):
        (folder / "model.onnx").write_bytes(build().SerializeToString())
    args = args or ["run", "--backend", "interp", "{d}/model.onnx"]
    return Case(category, name, write, args, status, expect)


def bytes_case(category, name, data, args, status=BAD_INPUT, expect=""):
    """A row whose bad input is a file of raw bytes, {d}/model.onnx (none if data is None)."""
    def write(folder):
        if data is not None:
            (folder / "model.onnx").write_bytes(data)
    return Case(category, name, write, args, status, expect)


def npy_bytes(descr, shape, data, fortran=False, version=(1, 0)):
    """A .npy file byte by byte, so that its header can say anything."""
    shape_text = "(" + "".join(f"{d}, " for d in shape).rstrip(" ") + ")"
    if len(shape) == 1:
        shape_text = f"({shape[0]},)"
    header = f"{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape_text}, }}"
    header = header.ljust(118) + "\n"
    length = struct.pack("<H", len(header)) if version[0] == 1 else struct.pack("<I", len(header))
    return b"\x93NUMPY" + bytes(version) + length + header.encode() + data


def good_npy(shape=(2, 3), dtype=np.float32):
    array = (np.arange(int(np.prod(shape))) % 2).astype(dtype).reshape(shape)
    descr = array.dtype.str
    return npy_bytes(descr, shape, array.tobytes())


def record(**changes):
    """One tuning-database line as `minic tune` writes it, with `changes` applied (a value
    of None removes the field)."""
    fields = {"version": 1, "workload": "3c1e8f0a9b2d4e57", "task": "matmul",
              "target": "llvm -mcpu=znver4", "trace": "b0 = get_block(\"C\")\n",
              "decisions": {}, "times_us": [40.8, 41.0], "median_us": 41.0, "error": "",
              "flops": 524288.0, "trial": 0, "time": "2026-11-30T18:02:11Z"}
    for key, value in changes.items():
        if value is None:
            fields.pop(key)
        else:
            fields[key] = value
    return json.dumps(fields, separators=(",", ":"))
