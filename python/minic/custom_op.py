"""Custom operators: ops of a domain other than ONNX's, registered from Python or loaded
from a plugin (include/minic/ops/custom_op.h says what minic does with them).

    import numpy as np, minic
    from minic import expr

    minic.register_op(
        "com.example.Swish",
        kernel=lambda x: x / (1 + np.exp(-x)),          # the reference (numpy)
        compute=lambda x: x * expr.sigmoid(x))          # the formula minic compiles
    model = minic.load("model_with_swish.onnx")         # now imports

    minic.load_custom_ops("build/examples/custom_ops/libminic_gelu_ops.so")   # a plugin

Chapter: docs/module8-deployment.md#6-custom-operators
"""

import ctypes
import os
from collections import namedtuple

from . import _minic

TensorType = namedtuple("TensorType", ["dtype", "shape"])


def _with_attributes(function, prepare):
    """minic calls function(values, attrs); the user's takes *values, **attrs."""
    def call(values, attrs):
        return function(*prepare(values), **attrs)
    return call


def register_op(name, kernel, compute=None, shape=None, inputs=1, outputs=1, cuda=None):
    """Registers the custom op `name` ("DOMAIN.NAME"), for every model loaded afterwards.

    kernel   kernel(*arrays, **attributes) -> array, or a tuple of arrays: the reference
             kernel, on numpy arrays (one per input; None for an omitted optional one)
    compute  compute(*exprs, **attributes) -> Expr: the output element from the inputs'
             elements (minic.expr); without it the op runs its kernel and fuses with nothing
    shape    shape(*types, **attributes) -> (dtype, shape) or a list of them, each type a
             TensorType(dtype, shape); default: every output has input 0's type
    inputs   the number of inputs, or (least, most) with optional ones at the end
    outputs  the number of outputs
    cuda     (source, kernel) or (source, kernel, block): a hand-written CUDA kernel that a
             CUDA target runs as given, one thread per element of output 0 (`block` a
             block, 256 by default); `kernel` of the CUDA C `source` (no #include) takes
             the op's inputs, then its outputs, then the element count n as int64_t
    """
    low, high = (inputs, inputs) if isinstance(inputs, int) else inputs
    shape_rule = None
    if shape is not None:
        def types(values):
            return [None if v is None else TensorType(v[0], tuple(v[1])) for v in values]

        def shape_rule(values, attrs):
            result = shape(*types(values), **attrs)
            return [result] if isinstance(result, tuple) and isinstance(result[0], str) \
                else list(result)
    cuda_source, cuda_kernel, cuda_block = (None, "", 256) if cuda is None else \
        (tuple(cuda) + (256,))[:3]
    _minic.register_op(name, low, high, outputs, shape_rule,
                       _with_attributes(kernel, list),
                       None if compute is None else _with_attributes(compute, list),
                       cuda_source, cuda_kernel, cuda_block)


def load_custom_ops(path):
    """Loads a plugin: a shared library whose static objects register custom ops
    (examples/custom_ops/gelu_ops.cpp). Its references to minic's functions are resolved
    against this package's native module, which is made visible to it first."""
    ctypes.CDLL(_minic.module_path(), mode=os.RTLD_GLOBAL | os.RTLD_NOLOAD)
    _minic.load_custom_op_library(os.fspath(path))


def custom_ops():
    """The custom ops registered so far."""
    return list(_minic.custom_ops())
