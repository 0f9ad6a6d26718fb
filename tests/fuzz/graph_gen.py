"""Random valid ONNX graphs of everyday ops, for the differential fuzzer (fuzz_graphs.py).

Course module 8 (testing a compiler). A graph grows one node at a time from a few float
inputs: each step picks an op from OPS and operands from the values made so far
(preferring those nothing reads yet, so that chains form and few values are left over),
with random shapes that broadcast, random attributes and constant operands. Every value
nothing reads at the end is a graph output. The same seed gives the same graph.

The ops are those of real CNNs and Transformers that minic compiles: elementwise unary and
binary ops (broadcasting), comparisons and Where, reductions, Softmax, MatMul and Gemm,
LayerNormalization, Conv (groups, strides, padding), MaxPool and AveragePool, Gather and
Slice, Concat, Transpose, Reshape and Flatten. Shapes stay small (dims 1..6,
rank 1..4), so that a graph runs in milliseconds.
"""

from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper

OPSET = 17
UNARY = ["Abs", "Neg", "Relu", "Sigmoid", "Tanh", "Erf", "Softplus"]
# Ops whose operand is kept where float rounding cannot blow up, as real models keep it:
# Log, Sqrt and Reciprocal read |x| + 0.5 (as in log(x + eps)), Exp reads x clipped to
# [-20, 20], and Floor, Ceil, Sin and Cos read a graph input (a computed value near an
# integer, or a large one, would make their result depend on the last bit).
GUARDED_UNARY = ["Log", "Sqrt", "Reciprocal", "Exp", "Floor", "Ceil", "Sin", "Cos"]
BINARY = ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"]
REDUCE = ["ReduceMean", "ReduceMax", "ReduceMin", "ReduceSum", "ReduceSumSquare"]


@dataclass
class Value:
    name: str
    shape: tuple
    dtype: int = TensorProto.FLOAT


@dataclass
class Builder:
    rng: np.random.Generator
    nodes: list = field(default_factory=list)
    inputs: list = field(default_factory=list)
    initializers: list = field(default_factory=list)
    values: list = field(default_factory=list)   # every value made, in order
    unread: list = field(default_factory=list)   # values no node reads yet

    def name(self, prefix):
        return f"{prefix}{len(self.nodes) + len(self.inputs) + len(self.initializers)}"

    def new_input(self, shape):
        value = Value(self.name("in"), tuple(shape))
        self.inputs.append(value)
        self.values.append(value)
        self.unread.append(value)
        return value

    def constant(self, array):
        name = self.name("c")
        self.initializers.append(onnx.numpy_helper.from_array(array, name))
        return name

    def node(self, op, operands, shape, dtype=TensorProto.FLOAT, **attributes):
        """Appends op(operands) -> one new value; operands are Values or constant names."""
        names = []
        for operand in operands:
            if isinstance(operand, Value):
                names.append(operand.name)
                if operand in self.unread:
                    self.unread.remove(operand)
            else:
                names.append(operand)
        value = Value(self.name("v"), tuple(shape), dtype)
        self.nodes.append(helper.make_node(op, names, [value.name], **attributes))
        self.values.append(value)
        self.unread.append(value)
        return value

    def pick(self, dtype=TensorProto.FLOAT, rank=None):
        """An operand: mostly an unread value (so that chains form), else any value."""
        def fits(v):
            return v.dtype == dtype and (rank is None or len(v.shape) >= rank)
        unread = [v for v in self.unread if fits(v)]
        pool = unread if unread and self.rng.random() < 0.8 else [v for v in self.values if fits(v)]
        return pool[self.rng.integers(len(pool))] if pool else None

    def random_shape(self, rank):
        return tuple(int(d) for d in self.rng.integers(1, 7, size=rank))

    def partner(self, shape):
        """A second operand that broadcasts to `shape`: the same shape, fewer leading dims,
        some dims 1, or a scalar; an existing value, a new input or a constant."""
        choice = self.rng.integers(4)
        if choice == 0:
            other = shape
        elif choice == 1:
            other = shape[self.rng.integers(len(shape) + 1):]
        elif choice == 2:
            other = tuple(1 if self.rng.random() < 0.5 else d for d in shape)
        else:
            other = ()
        same = [v for v in self.values if v.shape == other and v.dtype == TensorProto.FLOAT]
        where = self.rng.random()
        if same and where < 0.4:
            return same[self.rng.integers(len(same))]
        if where < 0.7:
            return self.new_input(other)
        return self.constant(self.rng.normal(0, 1, size=other).astype(np.float32))


# --- the ops: each adds one or two nodes and returns True, or False when it does not fit ---

def unary(b):
    x = b.pick()
    op = UNARY[b.rng.integers(len(UNARY))]
    b.node(op, [x], x.shape)
    return True


def away_from_zero(b, x):
    """|x| + 0.5: a divisor, a logarithm's operand, a power's base."""
    magnitude = b.node("Abs", [x], x.shape)
    return b.node("Add", [magnitude, b.constant(np.array(0.5, np.float32))], x.shape)


def guarded_unary(b):
    op = GUARDED_UNARY[b.rng.integers(len(GUARDED_UNARY))]
    if op in ("Floor", "Ceil", "Sin", "Cos"):
        x = b.inputs[b.rng.integers(len(b.inputs))]
    elif op == "Exp":
        x = b.pick()
        bounds = [b.constant(np.array(v, np.float32)) for v in (-20.0, 20.0)]
        x = b.node("Clip", [x, *bounds], x.shape)
    else:
        x = away_from_zero(b, b.pick())
    b.node(op, [x], x.shape)
    return True


def with_attribute(b):
    x = b.pick()
    op = ["LeakyRelu", "Elu", "HardSigmoid", "Clip"][b.rng.integers(4)]
    if op == "Clip":
        low = float(b.rng.uniform(-2, 0))
        bounds = [b.constant(np.array(low, np.float32)),
                  b.constant(np.array(low + float(b.rng.uniform(0.1, 3)), np.float32))]
        b.node("Clip", [x, *bounds], x.shape)
    else:
        b.node(op, [x], x.shape, alpha=float(b.rng.uniform(0.01, 1.0)))
    return True


def binary(b):
    x = b.pick()
    op = BINARY[b.rng.integers(len(BINARY))]
    if op == "Pow":  # a base kept positive, an exponent from an input of trailing dims
        exponent = b.new_input(x.shape[b.rng.integers(len(x.shape) + 1):])
        b.node(op, [away_from_zero(b, x), exponent], x.shape)
        return True
    y = b.partner(x.shape)
    operands = [x, y] if b.rng.random() < 0.7 else [y, x]
    if op == "Div" and isinstance(operands[1], Value):
        operands[1] = away_from_zero(b, operands[1])
    b.node(op, operands, x.shape)
    return True


def compare_where(b):
    """Greater or Less, then (often at once) Where on the result."""
    x = b.pick()
    y = b.partner(x.shape)
    condition = b.node(["Greater", "Less"][b.rng.integers(2)], [x, y], x.shape, TensorProto.BOOL)
    other = b.pick(TensorProto.BOOL)
    if b.rng.random() < 0.3 and other is not condition and other.shape == condition.shape:
        condition = b.node(["And", "Or", "Xor"][b.rng.integers(3)], [condition, other],
                               condition.shape, TensorProto.BOOL)
    if b.rng.random() < 0.2:
        condition = b.node("Not", [condition], condition.shape, TensorProto.BOOL)
    b.node("Where", [condition, x, b.partner(x.shape)], x.shape)
    return True


def reduce(b):
    x = b.pick()
    op = REDUCE[b.rng.integers(len(REDUCE))]
    rank = len(x.shape)
    if rank == 0:
        return False
    axes = sorted(int(a) for a in b.rng.choice(rank, size=b.rng.integers(1, rank + 1),
                                               replace=False))
    keep = int(b.rng.integers(2))
    shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape) if keep or i not in axes)
    if op == "ReduceSum":  # its axes are an input from opset 13
        b.node(op, [x, b.constant(np.array(axes, np.int64))], shape, keepdims=keep)
    else:
        b.node(op, [x], shape, axes=axes, keepdims=keep)
    return True


def softmax(b):
    x = b.pick(rank=1)
    if x is None:
        return False
    axis = int(b.rng.integers(-len(x.shape), len(x.shape)))
    b.node(["Softmax", "LogSoftmax"][b.rng.integers(2)], [x], x.shape, axis=axis)
    return True


def matmul(b):
    x = b.pick(rank=1)
    if x is None:
        return False
    n = int(b.rng.integers(1, 9))
    k = x.shape[-1]
    if len(x.shape) == 2 and b.rng.random() < 0.5:
        trans_b = int(b.rng.integers(2))
        w = b.constant(b.rng.normal(0, 0.5, size=(n, k) if trans_b else (k, n)).astype(np.float32))
        bias = b.constant(b.rng.normal(0, 1, size=(n,)).astype(np.float32))
        b.node("Gemm", [x, w, bias], (x.shape[0], n), transB=trans_b,
               alpha=float(b.rng.uniform(0.5, 2)), beta=float(b.rng.uniform(0.5, 2)))
    else:
        weights = b.constant(b.rng.normal(0, 0.5, size=(k, n)).astype(np.float32))
        b.node("MatMul", [x, weights], (*x.shape[:-1], n))
    return True


def layer_norm(b):
    x = b.pick(rank=1)
    if x is None:
        return False
    d = x.shape[-1]
    scale = b.constant(b.rng.uniform(0.5, 1.5, size=(d,)).astype(np.float32))
    bias = b.constant(b.rng.normal(0, 1, size=(d,)).astype(np.float32))
    b.node("LayerNormalization", [x, scale, bias], x.shape, axis=-1, epsilon=1e-5)
    return True


def concat(b):
    x = b.pick(rank=1)
    if x is None:
        return False
    axis = int(b.rng.integers(len(x.shape)))
    other_shape = list(x.shape)
    other_shape[axis] = int(b.rng.integers(1, 5))
    y = x if b.rng.random() < 0.3 else b.new_input(other_shape)
    shape = list(x.shape)
    shape[axis] += y.shape[axis]
    b.node("Concat", [x, y], shape, axis=axis)
    return True


def transpose(b):
    x = b.pick(rank=2)
    if x is None:
        return False
    perm = [int(p) for p in b.rng.permutation(len(x.shape))]
    b.node("Transpose", [x], tuple(x.shape[p] for p in perm), perm=perm)
    return True


def reshape(b):
    x = b.pick(rank=2)
    if x is None:
        return False
    if b.rng.random() < 0.5:  # Flatten at a random axis
        axis = int(b.rng.integers(len(x.shape) + 1))
        shape = (int(np.prod(x.shape[:axis])), int(np.prod(x.shape[axis:])))
        b.node("Flatten", [x], shape, axis=axis)
    else:  # merge the last two dims
        shape = (*x.shape[:-2], x.shape[-2] * x.shape[-1])
        b.node("Reshape", [x, b.constant(np.array(shape, np.int64))], shape)
    return True


def conv_or_pool(b):
    """Conv (with a bias, depthwise groups, stride and padding), MaxPool or AveragePool on a
    4-d value [N, C, H, W]."""
    x = b.pick(rank=4)
    if x is None or len(x.shape) != 4:
        return False
    n, c, h, w = x.shape
    k = int(b.rng.integers(1, min(h, w, 3) + 1))
    stride = int(b.rng.integers(1, 3))
    pad = int(b.rng.integers(0, k))
    out_h, out_w = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    attributes = {"kernel_shape": [k, k], "strides": [stride, stride], "pads": [pad] * 4}
    kind = b.rng.integers(3)
    if kind == 0:
        group = c if b.rng.random() < 0.3 else 1
        m = c if group == c else int(b.rng.integers(1, 7))
        weights = b.constant(b.rng.normal(0, 0.5, size=(m, c // group, k, k)).astype(np.float32))
        bias = b.constant(b.rng.normal(0, 1, size=(m,)).astype(np.float32))
        b.node("Conv", [x, weights, bias], (n, m, out_h, out_w), group=group, **attributes)
    elif kind == 1:
        b.node("MaxPool", [x], (n, c, out_h, out_w), **attributes)
    else:
        b.node("AveragePool", [x], (n, c, out_h, out_w),
               count_include_pad=int(b.rng.integers(2)), **attributes)
    return True


def gather_or_slice(b):
    """Gather of constant indices, or Slice of constant starts, ends and steps, on one axis."""
    x = b.pick(rank=1)
    if x is None:
        return False
    axis = int(b.rng.integers(len(x.shape)))
    size = x.shape[axis]
    shape = list(x.shape)
    if b.rng.random() < 0.5:
        count = int(b.rng.integers(1, 4))
        indices = b.rng.integers(-size, size, size=(count,)).astype(np.int64)
        shape[axis] = count
        b.node("Gather", [x, b.constant(indices)], shape, axis=axis)
    else:
        start = int(b.rng.integers(0, size))
        end = int(b.rng.integers(start + 1, size + 1))
        step = int(b.rng.integers(1, 3))
        shape[axis] = len(range(start, end, step))
        constants = [b.constant(np.array([v], np.int64)) for v in (start, end, axis, step)]
        b.node("Slice", [x, *constants], shape)
    return True


def new_image(b):
    """A fresh 4-d input, so that convolutions and pools have something to read."""
    b.new_input((1, int(b.rng.integers(1, 5)), int(b.rng.integers(3, 9)),
                 int(b.rng.integers(3, 9))))
    return True


# The ops and how often each is drawn.
OPS = [(unary, 4), (guarded_unary, 2), (with_attribute, 2), (binary, 6), (compare_where, 2), (reduce, 2),
       (softmax, 1), (matmul, 2), (layer_norm, 1), (concat, 1), (transpose, 1), (reshape, 1),
       (conv_or_pool, 2), (gather_or_slice, 1), (new_image, 1)]


def random_graph(seed, min_nodes=5, max_nodes=30):
    """A checked ONNX model of min_nodes..max_nodes nodes, the same for the same seed."""
    rng = np.random.default_rng(seed)
    b = Builder(rng)
    for _ in range(rng.integers(1, 4)):
        b.new_input(b.random_shape(int(rng.integers(1, 5))))
    target = int(rng.integers(min_nodes, max_nodes + 1))
    weights = np.array([w for _, w in OPS], dtype=float)
    while len(b.nodes) < target:
        make, _ = OPS[rng.choice(len(OPS), p=weights / weights.sum())]
        make(b)
    # Every value nothing reads is an output (a bool one becomes Where's condition first).
    for value in [v for v in b.unread if v.dtype == TensorProto.BOOL]:
        x = b.pick()
        if x.shape == value.shape:
            b.node("Where", [value, x, b.partner(x.shape)], x.shape)
        else:
            b.node("Cast", [value], value.shape, to=TensorProto.FLOAT)
    outputs = [v for v in b.unread if v not in b.inputs]
    graph = helper.make_graph(
        b.nodes, f"fuzz{seed}",
        [helper.make_tensor_value_info(v.name, v.dtype, v.shape) for v in b.inputs],
        [helper.make_tensor_value_info(v.name, v.dtype, v.shape) for v in outputs],
        b.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="minic-fuzz")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model
