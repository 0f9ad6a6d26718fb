#!/usr/bin/env python3
"""Hidden inputs of exercise m7-qdq-movement: DequantizeLinear, one movement op (Reshape,
Transpose, Flatten, Squeeze or Unsqueeze) and QuantizeLinear, on uint8 or int8 tensors of
random shapes, with a random scale and zero point. The QuantizeLinear has the same scale
as the DequantizeLinear (then the pass must leave the movement op alone on the integers)
or another one (then nothing may change). --verify-each=numeric checks the values."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import hidden  # noqa: E402


def movement(rng, shape):
    """A random movement op of a tensor of `shape`: (its text after the input, the output
    shape, extra constant lines)."""
    rank = len(shape)
    kind = rng.choice(["Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze"])
    if kind == "Transpose":
        perm = list(range(rank))
        rng.shuffle(perm)
        return f"Transpose(%d) {{perm=[{','.join(map(str, perm))}]}}", \
            [shape[p] for p in perm], []
    if kind == "Flatten":
        axis = rng.randint(0, rank)
        left = 1
        for dim in shape[:axis]:
            left *= dim
        right = 1
        for dim in shape[axis:]:
            right *= dim
        return f"Flatten(%d) {{axis={axis}}}", [left, right], []
    if kind == "Unsqueeze":
        axis = rng.randint(0, rank)
        return "Unsqueeze(%d, %axes)", shape[:axis] + [1] + shape[axis:], \
            [f"  %axes = const i64[1] dense<[{axis}]>"]
    if kind == "Squeeze" and 1 in shape:
        axis = shape.index(1)
        return "Squeeze(%d, %axes)", shape[:axis] + shape[axis + 1:], \
            [f"  %axes = const i64[1] dense<[{axis}]>"]
    total = 1
    for dim in shape:
        total *= dim
    out = [total] if rng.random() < 0.5 else [1, total]
    return "Reshape(%d, %shape)", out, \
        [f"  %shape = const i64[{len(out)}] dense<[{', '.join(map(str, out))}]>"]


def make(rng):
    shape = [rng.randint(1, 4) for _ in range(rng.randint(1, 4))]
    dtype = rng.choice(["u8", "i8"])
    zero = rng.randint(0, 255) if dtype == "u8" else rng.randint(-128, 127)
    scale = round(rng.uniform(0.01, 2.0), 4)
    same = rng.random() < 0.75
    out_scale = scale if same else round(scale * rng.choice([0.5, 2.0, 3.0]), 4)
    op, out_shape, constants = movement(rng, shape)
    lines = [f"  %s = const f32[] dense<[{scale}]>",
             f"  %so = const f32[] dense<[{out_scale}]>",
             f"  %z = const {dtype}[] dense<[{zero}]>"] + constants + [
        "  %d = DequantizeLinear(%x, %s, %z)",
        f"  %m = {op}",
        "  %y = QuantizeLinear(%m, %so, %z)"]
    text = (f"graph hidden(%x: {dtype}{hidden.tensor_type(shape)[3:]}) -> "
            f"(%y: {dtype}{hidden.tensor_type(out_shape)[3:]}) opset 21 {{\n" +
            "\n".join(lines) + "\n  return %y\n}\n")
    return text, (same, op.split("(")[0])


def main():
    args = hidden.arguments(__doc__)
    for index, text, (same, op) in hidden.graphs(args, make):
        out, _ = hidden.run_opt(args, text, "qdq-movement", index)
        quantised = "DequantizeLinear(" in out or "QuantizeLinear(" in out
        if same and (quantised or f"%y = {op}(%x" not in out):
            hidden.fail(args, index, text, f"after qdq-movement:\n{out}\nexpected "
                        f"%y = {op}(%x...) on the integers, with no DequantizeLinear or "
                        "QuantizeLinear left")
        if not same and ("= DequantizeLinear(" not in out or "= QuantizeLinear(" not in out):
            hidden.fail(args, index, text, f"after qdq-movement:\n{out}\nthe scales differ "
                        "(%s and %so): the DequantizeLinear and QuantizeLinear must stay")
    print(f"qdq-movement: {args.count} hidden graphs of seed {args.seed} pass")


if __name__ == "__main__":
    main()
