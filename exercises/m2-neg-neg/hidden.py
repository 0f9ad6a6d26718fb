#!/usr/bin/env python3
"""Hidden inputs of exercise m2-neg-neg: random graphs whose branches are chains of 0 to 6
Negs of the input, combined by Add, Mul or Sub, then a Relu. After `neg-neg` an even
chain must be gone and an odd one leave a single Neg, with the same results."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import hidden  # noqa: E402


def make(rng):
    type_ = hidden.tensor_type(hidden.random_shape(rng))
    lines, branches, negs_left = [], [], 0
    for b in range(rng.randint(1, 4)):
        value, length = "%x", rng.randint(0, 6)
        for k in range(length):
            lines.append(f"  %n{b}_{k} = Neg({value})")
            value = f"%n{b}_{k}"
        negs_left += length % 2
        branches.append(value)
    total = branches[0]
    for i, value in enumerate(branches[1:]):
        lines.append(f"  %s{i} = {rng.choice(['Add', 'Mul', 'Sub'])}({total}, {value})")
        total = f"%s{i}"
    lines.append(f"  %y = Relu({total})")
    text = (f"graph hidden(%x: {type_}) -> (%y: {type_}) opset 18 {{\n" + "\n".join(lines) +
            "\n  return %y\n}\n")
    return text, negs_left


def main():
    args = hidden.arguments(__doc__)
    for index, text, negs_left in hidden.graphs(args, make):
        out, _ = hidden.run_opt(args, text, "neg-neg", index)
        found = out.count(" = Neg(")
        if found != negs_left:
            hidden.fail(args, index, text, f"after neg-neg:\n{out}\n{found} Negs left, "
                        f"expected {negs_left}")
    print(f"neg-neg: {args.count} hidden graphs of seed {args.seed} pass")


if __name__ == "__main__":
    main()
