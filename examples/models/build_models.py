#!/usr/bin/env python3
"""Builds the example models: well-known architectures with random weights.

Course module 8 (end-to-end models). Each model is written node by node with onnx.helper,
in the patterns PyTorch's exporter emits (BatchNormalization before folding, Relu6 as
Clip with min/max inputs, attention with Reshape/Transpose and a mask bias, Gelu as an
Erf expression), at opset 17, IR version 8, batch 1 and static shapes. Weights come from
numpy with a fixed seed, so every build writes the same bytes. Each model is checked with
onnx.checker and run once with onnxruntime, which must give finite outputs.

    python3 examples/models/build_models.py [--out DIR] [NAMES...]

With no NAMES every model is built but those built only on request (bert_base, large). See
README.md beside this file for what each is.
"""

import argparse
import os
import sys

import numpy as np
from onnx import TensorProto

from graph_builder import GraphBuilder

SEED = 2024


# -- mlp: the README's first model ----------------------------------------------------

def build_mlp():
    """784-128-64-10 classifier for flattened 28x28 images, Softmax at the end."""
    g = GraphBuilder("mlp", SEED)
    x = g.input("input", np.float32, [1, 784])
    widths = [784, 128, 64, 10]
    for i in range(len(widths) - 1):
        n_in, n_out = widths[i], widths[i + 1]
        w = g.const(f"fc{i + 1}.weight", g.he_normal((n_in, n_out), n_in))
        b = g.const(f"fc{i + 1}.bias", g.normal((n_out,), 0.01))
        x = g.op("Add", [g.op("MatMul", [x, w], name=f"fc{i + 1}.matmul"), b],
                 name=f"fc{i + 1}.add")
        if i + 2 < len(widths):
            x = g.op("Relu", [x], name=f"relu{i + 1}")
    g.op("Softmax", [x], name="softmax", axis=-1)
    rename_last_output(g, "output")
    g.output("output", np.float32, [1, 10])
    return g.model("MLP 784-128-64-10 with random weights (minic example)")


def rename_last_output(g, name):
    """Names the last node's output as the graph output (exporters name them so)."""
    g.nodes[-1].output[0] = name


# -- small_cnn ----------------------------------------------------------------------------

def build_small_cnn():
    """Two conv layers and a classifier over 3x32x32 images (CIFAR-sized)."""
    g = GraphBuilder("small_cnn", SEED)
    x = g.input("input", np.float32, [1, 3, 32, 32])
    x = g.conv(x, "conv1", 3, 16, 3, bias=False)
    x = g.relu(g.batch_norm(x, "bn1", 16))
    x = g.op("MaxPool", [x], name="pool1", kernel_shape=[2, 2], strides=[2, 2])
    x = g.relu(g.conv(x, "conv2", 16, 32, 3))
    x = g.op("GlobalAveragePool", [x], name="avgpool")
    x = g.op("Flatten", [x], name="flatten", axis=1)
    x = g.gemm(x, "fc", 32, 10)
    rename_last_output(g, "logits")
    g.output("logits", np.float32, [1, 10])
    return g.model("Small CNN for 3x32x32 images with random weights (minic example)")


# -- resnet18 -----------------------------------------------------------------------------

def residual_sum(g, x, y, prefix, c_in, c_out, stride):
    """Relu(y + shortcut) at the end of a residual block: the shortcut is x, or a 1x1 conv
    + BN of x when the block changes the shape."""
    shortcut = x
    if stride != 1 or c_in != c_out:
        shortcut = g.conv(x, f"{prefix}.downsample.0", c_in, c_out, 1, stride=stride,
                          bias=False)
        shortcut = g.batch_norm(shortcut, f"{prefix}.downsample.1", c_out)
    return g.relu(g.op("Add", [y, shortcut], name=f"{prefix}.add"))


def basic_block(g, x, prefix, c_in, c_out, stride):
    """ResNet's BasicBlock: two 3x3 convs with BN; a 1x1 conv + BN shortcut when the
    shape changes. The second BN's scale is drawn small, as in trained networks, so the
    residual sum does not grow block after block."""
    y = g.conv(x, f"{prefix}.conv1", c_in, c_out, 3, stride=stride, bias=False)
    y = g.relu(g.batch_norm(y, f"{prefix}.bn1", c_out))
    y = g.conv(y, f"{prefix}.conv2", c_out, c_out, 3, bias=False)
    y = g.batch_norm(y, f"{prefix}.bn2", c_out, gamma_range=(0.2, 0.5))
    return residual_sum(g, x, y, prefix, c_in, c_out, stride)


def resnet_stem(g):
    """The input and ResNet's stem: 7x7 convolution of stride 2 to 64 channels, BN, ReLU,
    3x3 max pool of stride 2 (56 x 56 out of 224 x 224)."""
    x = g.input("input", np.float32, [1, 3, 224, 224])
    x = g.conv(x, "conv1", 3, 64, 7, stride=2, bias=False)
    x = g.relu(g.batch_norm(x, "bn1", 64))
    return g.op("MaxPool", [x], name="maxpool", kernel_shape=[3, 3], strides=[2, 2],
                pads=[1, 1, 1, 1])


def resnet_head(g, x, features, what):
    """ResNet's head on `features` channels: global average pool, flatten, a 1000-class
    fully connected layer, the output `logits`; returns the model, described by `what`."""
    x = g.op("GlobalAveragePool", [x], name="avgpool")
    x = g.op("Flatten", [x], name="flatten", axis=1)
    g.gemm(x, "fc", features, 1000)
    rename_last_output(g, "logits")
    g.output("logits", np.float32, [1, 1000])
    return g.model(f"{what} with random weights, BatchNormalization unfolded (minic example)")


def build_resnet18():
    """ResNet-18 (He et al. 2015) as torchvision defines it, 224x224, 1000 classes."""
    g = GraphBuilder("resnet18", SEED)
    x = resnet_stem(g)
    c_in = 64
    for stage, (c_out, stride) in enumerate([(64, 1), (128, 2), (256, 2), (512, 2)]):
        for block in range(2):
            x = basic_block(g, x, f"layer{stage + 1}.{block}", c_in, c_out,
                            stride if block == 0 else 1)
            c_in = c_out
    return resnet_head(g, x, 512, "ResNet-18")


# -- resnet50 -----------------------------------------------------------------------------

def bottleneck_block(g, x, prefix, c_in, width, stride):
    """ResNet's Bottleneck (torchvision's, stride on the 3x3): 1x1 to `width`, 3x3, 1x1 to
    4 x width, each with BN; a 1x1 conv + BN shortcut when the shape changes. The last BN's
    scale is drawn small, as in basic_block."""
    c_out = 4 * width
    y = g.relu(g.batch_norm(g.conv(x, f"{prefix}.conv1", c_in, width, 1, bias=False),
                            f"{prefix}.bn1", width))
    y = g.relu(g.batch_norm(g.conv(y, f"{prefix}.conv2", width, width, 3, stride=stride,
                                   bias=False), f"{prefix}.bn2", width))
    y = g.batch_norm(g.conv(y, f"{prefix}.conv3", width, c_out, 1, bias=False),
                     f"{prefix}.bn3", c_out, gamma_range=(0.2, 0.5))
    return residual_sum(g, x, y, prefix, c_in, c_out, stride)


def build_resnet50_random():
    """ResNet-50 as torchvision defines it, 224x224, 1000 classes, with random weights
    (He-normal convolutions, BatchNormalization unfolded): unlike the light model of the
    ONNX tests, whose weights are all one value, its layers' ranges differ as a trained
    network's do, so that quantising it says something about accuracy."""
    g = GraphBuilder("resnet50_random", SEED)
    x = resnet_stem(g)
    c_in = 64
    for stage, (width, blocks, stride) in enumerate([(64, 3, 1), (128, 4, 2), (256, 6, 2),
                                                     (512, 3, 2)]):
        for block in range(blocks):
            x = bottleneck_block(g, x, f"layer{stage + 1}.{block}", c_in, width,
                                 stride if block == 0 else 1)
            c_in = 4 * width
    return resnet_head(g, x, 2048, "ResNet-50")


# -- mobilenetv2 --------------------------------------------------------------------------

# (expansion t, output channels c, repeats n, first stride s), from the paper's Table 2.
MOBILENET_V2_SETTINGS = [
    (1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
    (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1),
]


def inverted_residual(g, x, prefix, c_in, c_out, stride, expansion):
    """1x1 expand + Relu6, 3x3 depthwise (group = channels) + Relu6, 1x1 linear project;
    a residual Add when the shape is kept. BatchNormalization is folded into the convs'
    biases, as exporters do by default."""
    hidden = c_in * expansion
    y = x
    index = 0
    if expansion != 1:
        y = g.relu6(g.conv(y, f"{prefix}.conv.{index}", c_in, hidden, 1))
        index += 1
    y = g.relu6(g.conv(y, f"{prefix}.conv.{index}", hidden, hidden, 3, stride=stride,
                       group=hidden))
    y = g.conv(y, f"{prefix}.conv.{index + 1}", hidden, c_out, 1)
    if stride == 1 and c_in == c_out:
        y = g.op("Add", [x, y], name=f"{prefix}.add")
    return y


def build_mobilenetv2():
    """MobileNetV2 (Sandler et al. 2018), width 1.0, 224x224, 1000 classes."""
    g = GraphBuilder("mobilenetv2", SEED)
    x = g.input("input", np.float32, [1, 3, 224, 224])
    x = g.relu6(g.conv(x, "features.0", 3, 32, 3, stride=2))
    c_in = 32
    layer = 1
    for expansion, c_out, repeats, first_stride in MOBILENET_V2_SETTINGS:
        for i in range(repeats):
            x = inverted_residual(g, x, f"features.{layer}", c_in, c_out,
                                  first_stride if i == 0 else 1, expansion)
            c_in = c_out
            layer += 1
    x = g.relu6(g.conv(x, f"features.{layer}", c_in, 1280, 1))
    x = g.op("GlobalAveragePool", [x], name="avgpool")
    x = g.op("Flatten", [x], name="flatten", axis=1)
    g.gemm(x, "classifier", 1280, 1000)
    rename_last_output(g, "logits")
    g.output("logits", np.float32, [1, 1000])
    return g.model("MobileNetV2 with random weights, BN folded (minic example)")


# -- bert_encoder -------------------------------------------------------------------------

BERT = dict(layers=2, hidden=256, heads=4, ffn=1024, seq=128, vocab=1000, positions=512)
# BERT-base's shape (12 layers, hidden 768, 12 heads, FFN 3072) at sequence length 128, with
# the small vocabulary: 86 M parameters, 345 MB. Built only when named (the benchmarks'
# int8 section), not by default.
BERT_BASE = dict(BERT, layers=12, hidden=768, heads=12, ffn=3072)


def split_heads_shape(g, x, tail):
    """Reshape's shape as exporters compute it: the batch and sequence sizes read from
    Shape(x) at run time, then the constant tail dimensions."""
    shape = g.op("Shape", [x], name="shape")
    dims = []
    for axis in range(2):
        dim = g.op("Gather", [shape, g.constant("axis", np.array(axis, dtype=np.int64))],
                   name="gather_dim", axis=0)
        dims.append(g.op("Unsqueeze", [dim, g.constant("axes", np.array([0], np.int64))],
                         name="unsqueeze_dim"))
    tail = g.constant("shape_tail", np.array(tail, dtype=np.int64))
    return g.op("Concat", dims + [tail], name="concat_shape", axis=0)


def attention(g, x, mask_bias, prefix, config):
    hidden, heads = config["hidden"], config["heads"]
    head_size = hidden // heads
    std = 0.02
    heads_shape = split_heads_shape(g, x, [heads, head_size])

    def project(name, perm):
        y = g.linear(x, f"{prefix}.{name}", hidden, hidden, std)
        y = g.op("Reshape", [y, heads_shape], name=f"{prefix}.{name}.reshape")
        return g.op("Transpose", [y], name=f"{prefix}.{name}.transpose", perm=perm)

    q = project("query", [0, 2, 1, 3])          # [1, heads, seq, head_size]
    k = project("key", [0, 2, 3, 1])            # [1, heads, head_size, seq]
    v = project("value", [0, 2, 1, 3])
    scores = g.op("MatMul", [q, k], name=f"{prefix}.scores")
    scale = g.constant("sqrt_head_size", np.array(np.sqrt(head_size), dtype=np.float32))
    scores = g.op("Div", [scores, scale], name=f"{prefix}.scale")
    scores = g.op("Add", [scores, mask_bias], name=f"{prefix}.mask")
    probs = g.op("Softmax", [scores], name=f"{prefix}.softmax", axis=-1)
    context = g.op("MatMul", [probs, v], name=f"{prefix}.context")
    context = g.op("Transpose", [context], name=f"{prefix}.context.transpose",
                   perm=[0, 2, 1, 3])
    merged_shape = split_heads_shape(g, x, [hidden])
    context = g.op("Reshape", [context, merged_shape], name=f"{prefix}.context.reshape")
    out = g.linear(context, f"{prefix}.output.dense", hidden, hidden, std)
    out = g.op("Add", [out, x], name=f"{prefix}.output.residual")
    return g.layer_norm(out, f"{prefix}.output.LayerNorm", hidden)


def gelu(g, x, prefix):
    """Gelu written out as x * 0.5 * (1 + erf(x / sqrt(2)))."""
    y = g.op("Div", [x, g.constant("sqrt2", np.array(np.sqrt(2.0), np.float32))],
             name=f"{prefix}.div")
    y = g.op("Erf", [y], name=f"{prefix}.erf")
    y = g.op("Add", [y, g.constant("one", np.array(1.0, np.float32))], name=f"{prefix}.add")
    y = g.op("Mul", [x, y], name=f"{prefix}.mul")
    return g.op("Mul", [y, g.constant("half", np.array(0.5, np.float32))],
                name=f"{prefix}.mul_half")


def feed_forward(g, x, prefix, config):
    hidden, ffn = config["hidden"], config["ffn"]
    y = g.linear(x, f"{prefix}.intermediate.dense", hidden, ffn, 0.02)
    y = gelu(g, y, f"{prefix}.intermediate.gelu")
    y = g.linear(y, f"{prefix}.output.dense", ffn, hidden, 0.02)
    y = g.op("Add", [y, x], name=f"{prefix}.output.residual")
    return g.layer_norm(y, f"{prefix}.output.LayerNorm", hidden)


def mask_to_bias(g, mask):
    """attention_mask (1 = attend, 0 = padding) → additive bias (1 - mask) * -10000,
    shaped [1, 1, 1, seq] to broadcast over heads and query positions."""
    m = g.op("Unsqueeze", [mask, g.constant("axes", np.array([1], np.int64))],
             name="mask.unsqueeze")
    m = g.op("Unsqueeze", [m, g.constant("axes", np.array([2], np.int64))],
             name="mask.unsqueeze")
    m = g.op("Cast", [m], name="mask.cast", to=1)  # 1 = FLOAT
    m = g.op("Sub", [g.constant("one", np.array(1.0, np.float32)), m], name="mask.sub")
    return g.op("Mul", [m, g.constant("neg", np.array(-10000.0, np.float32))],
                name="mask.bias")


def build_bert_encoder(name="bert_encoder", config=BERT):
    """A BERT-style encoder: 2 layers, hidden 256, 4 heads, FFN 1024, sequence 128 (or the
    shape `config` gives)."""
    g = GraphBuilder(name, SEED)
    seq, hidden = config["seq"], config["hidden"]
    ids = g.input("input_ids", np.int64, [1, seq])
    mask = g.input("attention_mask", np.int64, [1, seq])
    words = g.const("embeddings.word_embeddings.weight",
                    g.normal((config["vocab"], hidden), 0.02))
    positions = g.const("embeddings.position_embeddings.weight",
                        g.normal((config["positions"], hidden), 0.02))
    position_ids = g.const("embeddings.position_ids", np.arange(seq, dtype=np.int64)[None])
    x = g.op("Gather", [words, ids], name="embeddings.word", axis=0)
    x = g.op("Add", [x, g.op("Gather", [positions, position_ids], name="embeddings.position",
                             axis=0)], name="embeddings.add")
    x = g.layer_norm(x, "embeddings.LayerNorm", hidden)
    bias = mask_to_bias(g, mask)
    for layer in range(config["layers"]):
        prefix = f"encoder.layer.{layer}"
        x = attention(g, x, bias, f"{prefix}.attention", config)
        x = feed_forward(g, x, prefix, config)
    rename_last_output(g, "last_hidden_state")
    g.output("last_hidden_state", np.float32, [1, seq, hidden])
    return g.model(f"BERT-style encoder, {config['layers']} layers, hidden {hidden}, "
                   "random weights (minic example)")


def build_bert_base():
    """The encoder at BERT-base's size: 12 layers, hidden 768, 12 heads, FFN 3072."""
    return build_bert_encoder("bert_base", BERT_BASE)


# -- loop_rnn: a recurrence written as a Loop ---------------------------------------------

LOOP_RNN = {"hidden": 256, "steps": 100}


def build_loop_rnn():
    """h = tanh(h W + x), 100 steps, as a Loop whose body reads W and x from outside."""
    from onnx import helper
    g = GraphBuilder("loop_rnn", SEED)
    hidden, steps = LOOP_RNN["hidden"], LOOP_RNN["steps"]
    h0 = g.input("h0", np.float32, [1, hidden])
    x = g.input("x", np.float32, [1, hidden])
    w = g.const("W", g.normal((hidden, hidden), 0.05))
    trips = g.constant("steps", np.array(steps, np.int64))
    body = helper.make_graph(
        [helper.make_node("MatMul", ["h", w], ["hw"]), helper.make_node("Add", ["hw", x], ["s"]),
         helper.make_node("Tanh", ["s"], ["h_next"]),
         helper.make_node("Identity", ["cond"], ["cond_out"])],
        "step", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("h", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_next", TensorProto.FLOAT, None)])
    g.nodes.append(helper.make_node("Loop", [trips, "", h0], ["h"], name="/loop", body=body))
    g.output("h", np.float32, [1, hidden])
    return g.model("A 100-step recurrence as a Loop, hidden 256, random weights (minic example)")


# -- lstm_tagger: a bidirectional LSTM over a sequence, then a classifier per step --------

LSTM_TAGGER = {"seq": 64, "input": 128, "hidden": 256, "classes": 32}


def build_lstm_tagger():
    """A CRNN-style head: bidirectional LSTM (hidden 256) over 64 steps of 128 features,
    then per step a linear layer to 32 classes and Softmax."""
    from onnx import helper
    g = GraphBuilder("lstm_tagger", SEED)
    seq, n_in, hidden, classes = (LSTM_TAGGER[k] for k in ["seq", "input", "hidden", "classes"])
    x = g.input("features", np.float32, [seq, 1, n_in])
    std = 1.0 / np.sqrt(hidden)
    w = g.const("lstm.W", g.uniform((2, 4 * hidden, n_in), -std, std))
    r = g.const("lstm.R", g.uniform((2, 4 * hidden, hidden), -std, std))
    b = g.const("lstm.B", g.uniform((2, 8 * hidden), -std, std))
    g.nodes.append(helper.make_node("LSTM", [x, w, r, b], ["lstm_y"], name="/lstm",
                                    direction="bidirectional", hidden_size=hidden))
    # Y [seq, 2, 1, hidden] -> [seq, 1, 2, hidden] -> [seq, 2 * hidden]
    y = g.op("Transpose", ["lstm_y"], perm=[0, 2, 1, 3])
    y = g.op("Reshape", [y, g.constant("rows", np.array([seq, 2 * hidden], np.int64))])
    y = g.linear(y, "classifier", 2 * hidden, classes, 1.0 / np.sqrt(2 * hidden))
    g.op("Softmax", [y], name="softmax", axis=-1)
    rename_last_output(g, "tags")
    g.output("tags", np.float32, [seq, classes])
    return g.model("Bidirectional LSTM tagger, hidden 256, 64 steps, random weights "
                   "(minic example)")


# -- driver -------------------------------------------------------------------------------

MODELS = {
    "mlp": build_mlp,
    "small_cnn": build_small_cnn,
    "resnet18": build_resnet18,
    "mobilenetv2": build_mobilenetv2,
    "bert_encoder": build_bert_encoder,
    "loop_rnn": build_loop_rnn,
    "lstm_tagger": build_lstm_tagger,
    "bert_base": build_bert_base,
    "resnet50_random": build_resnet50_random,
}
# Built only when named: large files that only the benchmarks use.
ON_REQUEST = {"bert_base", "resnet50_random"}


def random_feeds(model, seed=0):
    """Inputs for a smoke run: normal floats, token ids below 1000, a mask of ones."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for value in model.graph.input:
        tensor = value.type.tensor_type
        shape = [d.dim_value for d in tensor.shape.dim]
        if tensor.elem_type == TensorProto.FLOAT:
            feeds[value.name] = rng.normal(size=shape).astype(np.float32)
        elif "mask" in value.name:
            feeds[value.name] = np.ones(shape, np.int64)
        else:
            feeds[value.name] = rng.integers(0, 1000, size=shape, dtype=np.int64)
    return feeds


def check_with_onnxruntime(model, name):
    import onnxruntime as ort
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    outputs = session.run(None, random_feeds(model))
    for out in outputs:
        if not np.all(np.isfinite(out)):
            sys.exit(f"{name}: onnxruntime gave non-finite outputs")
    return outputs


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=here, help="output folder (default: beside this file)")
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help="models to build (default: all of "
                        f"{', '.join(n for n in MODELS if n not in ON_REQUEST)}; "
                        f"on request: {', '.join(sorted(ON_REQUEST))})")
    args = parser.parse_args()
    for name in args.names:
        if name not in MODELS:
            parser.error(f"unknown model '{name}'; known: {', '.join(MODELS)}")
    os.makedirs(args.out, exist_ok=True)
    for name in args.names or [name for name in MODELS if name not in ON_REQUEST]:
        model = MODELS[name]()
        outputs = check_with_onnxruntime(model, name)
        path = os.path.join(args.out, f"{name}.onnx")
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        summary = ", ".join(f"{o.shape} |max| {np.abs(o).max():.3g}" for o in outputs)
        print(f"{path}: {len(model.graph.node)} nodes, "
              f"{os.path.getsize(path) / 1e6:.2f} MB; onnxruntime output {summary}")


if __name__ == "__main__":
    main()
