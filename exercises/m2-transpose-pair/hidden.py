#!/usr/bin/env python3
"""Hidden inputs of exercise m2-transpose-pair: chains of 2 to 5 Transposes with random
perms (some without perm: the axes reversed) on inputs of rank 2 to 4, then a Relu.
After `transpose-pair` each chain must be one Transpose with the composed perm, or none
where the composition is the identity, with the same results (a perm drawn at random may
be the identity itself)."""

import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import hidden  # noqa: E402


def make(rng):
    rank = rng.randint(2, 4)
    shape = [rng.randint(1, 4) for _ in range(rank)]
    axes, lines, value = list(range(rank)), [], "%x"  # axes: the input axis of each output axis
    for k in range(rng.randint(2, 5)):
        perm = list(range(rank))
        if rng.random() < 0.2:
            perm.reverse()
            lines.append(f"  %t{k} = Transpose({value})")
        else:
            rng.shuffle(perm)
            lines.append(f"  %t{k} = Transpose({value}) {{perm=[{','.join(map(str, perm))}]}}")
        axes = [axes[p] for p in perm]
        value = f"%t{k}"
    out_shape = [shape[a] for a in axes]
    lines.append(f"  %y = Relu({value})")
    text = (f"graph hidden(%x: {hidden.tensor_type(shape)}) -> "
            f"(%y: {hidden.tensor_type(out_shape)}) opset 18 {{\n" + "\n".join(lines) +
            "\n  return %y\n}\n")
    return text, axes


def main():
    args = hidden.arguments(__doc__)
    for index, text, axes in hidden.graphs(args, make):
        out, _ = hidden.run_opt(args, text, "transpose-pair", index)
        transposes = re.findall(r"= Transpose\(%x\)(?: \{perm=\[([0-9,]*)\]\})?", out)
        identity = axes == sorted(axes)
        if out.count("Transpose(") != (0 if identity else 1):
            hidden.fail(args, index, text, f"after transpose-pair:\n{out}\nexpected "
                        f"{'no Transpose' if identity else 'one Transpose of %x'}")
        if not identity:
            perm = [int(a) for a in transposes[0].split(",")] if transposes and transposes[0] \
                else list(reversed(range(len(axes))))
            if not transposes or perm != axes:
                hidden.fail(args, index, text, f"after transpose-pair:\n{out}\nexpected "
                            f"Transpose(%x) {{perm=[{','.join(map(str, axes))}]}}")
    print(f"transpose-pair: {args.count} hidden graphs of seed {args.seed} pass")


if __name__ == "__main__":
    main()
