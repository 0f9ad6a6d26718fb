#!/usr/bin/env python3
"""Prunes the example ResNet-18 two ways, to show what a compiler gains from each.

Course module 7 (pruning and distillation). Writes, beside nothing else of minic:

  resnet18_sparse50.onnx, resnet18_sparse90.onnx   unstructured: the 50% / 90% of each
      convolution's weights smallest in magnitude set to 0 (same shapes, same graph);
  resnet18_channels50.onnx   structured: in every BasicBlock, the half of the first
      convolution's output channels with the smallest L1 norm removed, with their
      BatchNormalization entries and the second convolution's input channels (the
      block's input and output widths, and so the residual Adds, stay as they are).

The weights are random (examples/models/build_models.py), so the pruned models compute
something different from the original: they show speed, not accuracy. Each model is
checked with onnx.checker and run once with onnxruntime.

    python3 examples/pruning/prune_resnet18.py --out DIR [--model resnet18.onnx]
"""

import argparse
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
import build_models  # noqa: E402


def initializers(model):
    return {t.name: t for t in model.graph.initializer}


def replace(model, name, array):
    tensor = initializers(model)[name]
    tensor.CopyFrom(numpy_helper.from_array(array.astype(np.float32), name))


def conv_weights(model):
    return [node.input[1] for node in model.graph.node if node.op_type == "Conv"]


def prune_magnitude(model, fraction):
    """Zeroes the `fraction` of each convolution's weights smallest in magnitude."""
    pruned = onnx.ModelProto()
    pruned.CopyFrom(model)
    for name in conv_weights(pruned):
        w = numpy_helper.to_array(initializers(pruned)[name]).copy()
        threshold = np.quantile(np.abs(w), fraction)
        w[np.abs(w) <= threshold] = 0
        replace(pruned, name, w)
    return pruned


def prune_channels(model, fraction):
    """Removes the `fraction` of each BasicBlock's inner channels of least L1 norm."""
    pruned = onnx.ModelProto()
    pruned.CopyFrom(model)
    tensors = lambda name: numpy_helper.to_array(initializers(pruned)[name])
    # A block's first convolution reads the weight "layerS.B.conv1.weight".
    blocks = sorted({n.input[1][:-len(".conv1.weight")] for n in pruned.graph.node
                     if n.op_type == "Conv" and n.input[1].endswith(".conv1.weight")})
    for block in blocks:
        w1 = tensors(f"{block}.conv1.weight")
        norms = np.abs(w1).reshape(w1.shape[0], -1).sum(axis=1)
        keep = np.sort(np.argsort(-norms)[:int(round(w1.shape[0] * (1 - fraction)))])
        replace(pruned, f"{block}.conv1.weight", w1[keep])
        for part in ["weight", "bias", "running_mean", "running_var"]:
            replace(pruned, f"{block}.bn1.{part}", tensors(f"{block}.bn1.{part}")[keep])
        replace(pruned, f"{block}.conv2.weight", tensors(f"{block}.conv2.weight")[:, keep])
    # The shapes of the values between the pruned convolutions changed: infer them again.
    del pruned.graph.value_info[:]
    return onnx.shape_inference.infer_shapes(pruned)


def summary(model):
    weights = [numpy_helper.to_array(initializers(model)[n]) for n in conv_weights(model)]
    total = sum(w.size for w in weights)
    zeros = sum(int((w == 0).sum()) for w in weights)
    return f"{total / 1e6:.1f} M conv weights, {100 * zeros / total:.0f}% zero"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="the folder to write the models to")
    parser.add_argument("--model", help="ResNet-18 as build_models.py writes it "
                        "(default: build it)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    model = onnx.load(args.model) if args.model else build_models.build_resnet18()
    variants = {
        "resnet18": model,
        "resnet18_sparse50": prune_magnitude(model, 0.5),
        "resnet18_sparse90": prune_magnitude(model, 0.9),
        "resnet18_channels50": prune_channels(model, 0.5),
    }
    for name, variant in variants.items():
        onnx.checker.check_model(variant, full_check=True)
        build_models.check_with_onnxruntime(variant, name)
        path = os.path.join(args.out, f"{name}.onnx")
        onnx.save(variant, path)
        print(f"{path}: {summary(variant)}")


if __name__ == "__main__":
    main()
