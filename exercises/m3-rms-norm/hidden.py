#!/usr/bin/env python3
"""Hidden inputs of exercise m3-rms-norm. First ONNX's own RMSNormalization node tests
(every axis of 2-, 3- and 4-d inputs, other epsilons), run compiled and compared with
their expected outputs; then random graphs: an RMSNormalization of a random shape, axis
(negative or not) and epsilon, with a Scale of the normalised axes' shape or one that
broadcasts, sometimes between two other ops so that its kernel reads and writes
intermediates. Each runs compiled and must match the reference interpreter, with the
RMSNormalization node a compiled kernel, not a reference step."""

import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import hidden  # noqa: E402

# A profile line of the RMSNormalization node: "0.003  40.0%  compiled  RMSNormalization ..."
COMPILED = re.compile(r"\bcompiled\s+RMSNormalization\b")


def node_tests(args):
    """ONNX's RMSNormalization cases (not the _expanded ones, which are other ops)."""
    names = sorted(n for n in os.listdir(args.node_dir)
                   if n.startswith("test_rms_normalization") and not n.endswith("_expanded"))
    if not names:
        print(f"no RMSNormalization node tests in {args.node_dir}", file=sys.stderr)
        sys.exit(1)
    for name in names:
        case = os.path.join(args.node_dir, name)
        data = os.path.join(case, "test_data_set_0")
        inputs = sorted(f for f in os.listdir(data) if f.startswith("input_"))
        command = [args.minic, "run", os.path.join(case, "model.onnx"), "--profile",
                   "--compare", data]
        for f in inputs:
            command += ["--input", os.path.join(data, f)]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0 or not COMPILED.search(result.stdout):
            print(f"ONNX node test {name}:\n$ {' '.join(command)}\n{result.stdout}"
                  f"{result.stderr}", file=sys.stderr)
            sys.exit(1)
    return len(names)


def make(rng):
    shape = hidden.random_shape(rng, max_rank=4, max_dim=9)
    rank = len(shape)
    axis = rng.randrange(-rank, rank)
    first = axis % rank
    # Scale: the normalised axes' shape, some of them 1 (broadcast), or fewer axes.
    scale = [d if rng.random() < 0.7 else 1 for d in shape[first:]]
    scale = scale[rng.randrange(len(scale)):] if rng.random() < 0.3 else scale
    epsilon = rng.choice([1e-5, 1e-3, 0.1, 2.0])
    type_ = hidden.tensor_type(shape)
    before = rng.choice([None, "Relu", "Neg", "Exp"])
    after = rng.choice([None, "Sigmoid", "Abs"])
    lines, value = [], "%x"
    if before:
        lines.append(f"  %a = {before}(%x)")
        value = "%a"
    norm = "%n" if after else "%y"
    lines.append(f"  {norm} = RMSNormalization({value}, %scale) {{axis={axis}, epsilon={epsilon}}}")
    if after:
        lines.append(f"  %y = {after}(%n)")
    text = (f"graph hidden(%x: {type_}, %scale: {hidden.tensor_type(scale)}) -> (%y: {type_}) "
            f"opset 23 {{\n" + "\n".join(lines) + "\n  return %y\n}\n")
    return text, None


def main():
    args = hidden.arguments(__doc__, node_dir=True)
    cases = node_tests(args)
    for index, text, _ in hidden.graphs(args, make):
        out = hidden.run_compiled(args, text, index)
        if not COMPILED.search(out):
            hidden.fail(args, index, text, f"RMSNormalization is not a compiled kernel:\n{out}")
    print(f"RMSNormalization: {cases} ONNX node tests and {args.count} hidden graphs of seed "
          f"{args.seed} pass")


if __name__ == "__main__":
    main()
