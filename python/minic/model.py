"""A model in minic's graph IR, loaded from a file.

Chapter: docs/module8-deployment.md#5-minic-from-python
"""

from dataclasses import dataclass
import os

import numpy as np

from . import _minic


@dataclass(frozen=True)
class ValueInfo:
    """A graph input or output: its name, element type ("f32", "i64", ...) and shape."""
    name: str
    dtype: str
    shape: tuple

    @property
    def numpy_dtype(self):
        return np.dtype(_NUMPY_TYPES[self.dtype]) if self.dtype in _NUMPY_TYPES else None


_NUMPY_TYPES = {"f16": "float16", "f32": "float32", "f64": "float64", "bool": "bool",
                "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
                "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64"}


def _value_infos(infos):
    return [ValueInfo(name, dtype, tuple(shape)) for name, dtype, shape in infos]


def bind_inputs(infos, arrays, named, what):
    """One array per input, in the inputs' order: `arrays` by position, then `named` by name."""
    if len(arrays) > len(infos):
        raise _minic.Error(f"{what} takes {len(infos)} input(s), given {len(arrays)}")
    bound = list(arrays) + [None] * (len(infos) - len(arrays))
    names = [info.name for info in infos]
    for name, array in named.items():
        if name not in names:
            raise _minic.Error(f"{what} has no input '{name}' (its inputs: {', '.join(names)})")
        index = names.index(name)
        if bound[index] is not None:
            raise _minic.Error(f"input '{name}' given twice")
        bound[index] = array
    missing = [name for name, array in zip(names, bound) if array is None]
    if missing:
        raise _minic.Error(f"{what}: no array for input(s) {', '.join(missing)}")
    return [np.asarray(array) for array in bound]


def random_inputs(infos, seed=0):
    """Random arrays for `infos`: floats uniform in [-1, 1), integers in [0, 10), bools."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for info in infos:
        dtype = info.numpy_dtype
        if dtype is None:
            raise _minic.Error(f"input '{info.name}' is {info.dtype}, which numpy has no type for")
        if dtype.kind == "f":
            arrays[info.name] = rng.uniform(-1, 1, info.shape).astype(dtype)
        elif dtype.kind == "b":
            arrays[info.name] = rng.integers(0, 2, info.shape).astype(dtype)
        else:
            arrays[info.name] = rng.integers(0, 10, info.shape).astype(dtype)
    return arrays


class Model:
    """A model in minic's graph IR: what load() and parse() give, and compile() takes.

    The graph is minic's own (include/minic/ir/graph/graph.h): `graph_ir` is its text form,
    `optimize()` runs graph passes on a copy, `interpret()` runs it on the reference
    interpreter.
    """

    def __init__(self, graph, path=None):
        self._graph = graph
        self.path = path

    @property
    def inputs(self):
        return _value_infos(self._graph.inputs())

    @property
    def outputs(self):
        return _value_infos(self._graph.outputs())

    @property
    def graph_ir(self):
        """The graph IR's text form (what `minic opt --emit graph` prints)."""
        return self._graph.text()

    @property
    def op_counts(self):
        """How often each op is used (inside fused nodes too)."""
        return dict(self._graph.op_counts())

    @property
    def num_nodes(self):
        """Nodes at the top level: after fusion, the kernels a compiled model launches."""
        return self._graph.num_nodes()

    def inspect(self):
        """A summary: the inputs, outputs, opset, nodes and how often each op is used."""
        lines = [f"model    {self.path or '(from text)'}", f"opset    {self._graph.opset()}"]
        for title, infos in (("input", self.inputs), ("output", self.outputs)):
            for info in infos:
                dims = ",".join(str(d) for d in info.shape)
                lines.append(f"{title:<8} {info.name}: {info.dtype}[{dims}]")
        lines.append(f"nodes    {self._graph.num_nodes()}")
        counts = sorted(self.op_counts.items(), key=lambda item: (-item[1], item[0]))
        lines.append("ops      " + ", ".join(f"{op} {count}" for op, count in counts))
        return "\n".join(lines)

    def optimize(self, passes=None, target="llvm"):
        """A copy with graph passes run on it: `passes` by name (default: the default pipeline)."""
        graph = self._graph.clone()
        graph.run_passes(_minic.default_pipeline() if passes is None else list(passes), target)
        return Model(graph, self.path)

    def run_pass(self, name, target="llvm"):
        """A copy with the one graph pass `name` run on it."""
        return self.optimize([name], target)

    def interpret(self, *arrays, **named):
        """The reference interpreter's outputs: one array, or a tuple of several."""
        outputs = self._graph.interpret(bind_inputs(self.inputs, arrays, named, "the model"))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def random_inputs(self, seed=0):
        """{name: array} with random values of every input's type."""
        return random_inputs(self.inputs, seed)

    def save(self, path):
        """Writes the model (as it is now, passes included) as an ONNX file."""
        self._graph.export_onnx(os.fspath(path))

    def __repr__(self):
        inputs = ", ".join(f"{i.name}: {i.dtype}{list(i.shape)}" for i in self.inputs)
        return (f"<minic.Model {self.path or '(from text)'} ({inputs}), "
                f"{self._graph.num_nodes()} nodes>")


def load(path, input_shapes=None):
    """Imports an ONNX model (or reads a .mgraph file, the graph IR's text form).

    `input_shapes` gives sizes to symbolic input dimensions: {"input_ids": [1, 128]}.
    """
    path = os.fspath(path)
    if path.endswith(".mgraph"):
        if input_shapes:
            raise _minic.Error(f"{path}: a .mgraph file writes its inputs' shapes; "
                               "input_shapes binds an ONNX model's symbolic dimensions")
        with open(path) as file:
            return Model(_minic.parse_graph(file.read(), path), path)
    shapes = {name: [int(d) for d in shape] for name, shape in (input_shapes or {}).items()}
    return Model(_minic.load_onnx(path, shapes), path)


def parse(text):
    """A model from the graph IR's text form."""
    return Model(_minic.parse_graph(text, "<text>"))
