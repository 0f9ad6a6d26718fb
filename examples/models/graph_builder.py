"""A small helper for writing ONNX graphs by hand, used by build_models.py.

Course module 8 (end-to-end models). A GraphBuilder collects nodes, initializers and the
graph's inputs and outputs, and hands out fresh value names. Its layer helpers (conv,
batch_norm, linear, ...) emit the same node patterns that PyTorch's exporter writes, so
the models exercise what minic meets in real files. Weights come from the builder's
numpy Generator, so a fixed seed gives a byte-identical model.
"""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8

_ONNX_TYPES = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.int64): TensorProto.INT64,
}


class GraphBuilder:
    def __init__(self, name, seed):
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.initializers = []
        self.inputs = []
        self.outputs = []
        self._counts = {}
        self._shared = {}  # initializers used by many nodes, made once

    # -- names, inputs, outputs, constants -------------------------------------------

    def fresh(self, prefix):
        """Returns a value name not handed out before: prefix, prefix_1, prefix_2, ..."""
        count = self._counts.get(prefix, 0)
        self._counts[prefix] = count + 1
        return prefix if count == 0 else f"{prefix}_{count}"

    def input(self, name, dtype, shape):
        self.inputs.append(helper.make_tensor_value_info(name, _ONNX_TYPES[np.dtype(dtype)],
                                                         shape))
        return name

    def output(self, name, dtype, shape):
        self.outputs.append(helper.make_tensor_value_info(name, _ONNX_TYPES[np.dtype(dtype)],
                                                          shape))

    def const(self, name, array):
        """Adds an initializer (float64 arrays are stored as float32)."""
        array = np.asarray(array)
        if array.dtype == np.float64:
            array = array.astype(np.float32)
        name = self.fresh(name)
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def constant(self, name, array):
        """Adds a Constant node, the way exporters write scalars and small shape pieces."""
        array = np.asarray(array)
        if array.dtype == np.float64:
            array = array.astype(np.float32)
        out = self.fresh(name)
        self.nodes.append(helper.make_node("Constant", [], [out], name=f"/{out}",
                                           value=numpy_helper.from_array(array, out)))
        return out

    def op(self, op_type, inputs, name=None, **attrs):
        """Adds one node with one output and returns the output's name."""
        out = self.fresh(name or op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=f"/{out}", **attrs))
        return out

    # -- random weights -----------------------------------------------------------------

    def he_normal(self, shape, fan_in):
        """He (Kaiming) initialisation: keeps activation variance steady through Relu."""
        return self.rng.normal(0.0, np.sqrt(2.0 / fan_in), size=shape).astype(np.float32)

    def normal(self, shape, std):
        return self.rng.normal(0.0, std, size=shape).astype(np.float32)

    def uniform(self, shape, low, high):
        return self.rng.uniform(low, high, size=shape).astype(np.float32)

    # -- layers, as exporters write them ------------------------------------------------

    def conv(self, x, prefix, c_in, c_out, kernel, stride=1, group=1, bias=True):
        """Conv with 'same'-style padding kernel//2, He-initialised."""
        fan_in = (c_in // group) * kernel * kernel
        inputs = [x, self.const(f"{prefix}.weight",
                                self.he_normal((c_out, c_in // group, kernel, kernel), fan_in))]
        if bias:
            inputs.append(self.const(f"{prefix}.bias", self.normal((c_out,), 0.01)))
        pad = kernel // 2
        return self.op("Conv", inputs, name=prefix, kernel_shape=[kernel, kernel],
                       strides=[stride, stride], pads=[pad, pad, pad, pad],
                       dilations=[1, 1], group=group)

    def batch_norm(self, x, prefix, channels, gamma_range=(0.5, 1.5)):
        """Inference-mode BatchNormalization with random but sane running statistics."""
        inputs = [
            x,
            self.const(f"{prefix}.weight", self.uniform((channels,), *gamma_range)),
            self.const(f"{prefix}.bias", self.normal((channels,), 0.1)),
            self.const(f"{prefix}.running_mean", self.normal((channels,), 0.1)),
            self.const(f"{prefix}.running_var", self.uniform((channels,), 0.5, 1.5)),
        ]
        return self.op("BatchNormalization", inputs, name=prefix, epsilon=1e-5, momentum=0.9)

    def relu(self, x):
        return self.op("Relu", [x])

    def relu6(self, x):
        """Relu6 as exporters write it: Clip with min and max given as inputs."""
        if "relu6_bounds" not in self._shared:
            self._shared["relu6_bounds"] = [
                self.const("clip_min", np.array(0.0, dtype=np.float32)),
                self.const("clip_max", np.array(6.0, dtype=np.float32)),
            ]
        return self.op("Clip", [x] + self._shared["relu6_bounds"], name="relu6")

    def gemm(self, x, prefix, n_in, n_out, weight_std=None):
        """nn.Linear on a [1, n_in] tensor: Gemm with the weight stored [n_out, n_in]."""
        std = weight_std if weight_std is not None else np.sqrt(1.0 / n_in)
        weight = self.const(f"{prefix}.weight", self.normal((n_out, n_in), std))
        bias = self.const(f"{prefix}.bias", self.normal((n_out,), 0.01))
        return self.op("Gemm", [x, weight, bias], name=prefix, alpha=1.0, beta=1.0, transB=1)

    def linear(self, x, prefix, n_in, n_out, weight_std):
        """nn.Linear on a tensor of rank > 2: MatMul with the weight [n_in, n_out], then Add."""
        weight = self.const(f"{prefix}.weight", self.normal((n_in, n_out), weight_std))
        bias = self.const(f"{prefix}.bias", self.normal((n_out,), 0.01))
        product = self.op("MatMul", [x, weight], name=f"{prefix}.matmul")
        return self.op("Add", [product, bias], name=f"{prefix}.add")

    def layer_norm(self, x, prefix, width):
        scale = self.const(f"{prefix}.weight", self.uniform((width,), 0.8, 1.2))
        bias = self.const(f"{prefix}.bias", self.normal((width,), 0.05))
        return self.op("LayerNormalization", [x, scale, bias], name=prefix, axis=-1,
                       epsilon=1e-12)

    # -- the model --------------------------------------------------------------------

    def model(self, doc):
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs,
                                  initializer=self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="minic-build-models", doc_string=doc)
        model.ir_version = IR_VERSION
        onnx.checker.check_model(model, full_check=True)
        return model
