#!/usr/bin/env python3
"""Hidden inputs of exercise m3-fuse-loops: kernels of two to five neighbouring loops,
each writing a buffer of its own from the input or from an earlier loop's buffer, read at
the same index, reversed, or at a constant index; most over the same range, some over a
shorter one. After `fuse-loops` each loop must have been fused into the one before it
exactly when the rule of the README allows, and the results must be the same."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import hidden  # noqa: E402

SIZE = 8


def make(rng):
    loops, groups = [], []  # groups: (extent, set of loop numbers fused together)
    for k in range(rng.randint(2, 5)):
        extent = SIZE if rng.random() < 0.8 else SIZE - 2
        source = rng.randrange(-1, k)  # -1: the input X
        how = rng.choice(["same", "same", "reversed", "constant"])
        if source < 0:
            read, conflict = "X[i]", False
        else:
            index = {"same": "i", "reversed": f"{extent - 1} - i", "constant": "0"}[how]
            read = f"T{source}[{index}]"
            conflict = bool(groups) and source in groups[-1][1] and how != "same"
        op = rng.choice(["+", "*", "-"])
        loops.append(f"  for i in 0..{extent} {{\n    T{k}[i] = {read} {op} {k + 1}.0\n  }}")
        if groups and groups[-1][0] == extent and not conflict:
            groups[-1][1].add(k)
        else:
            groups.append((extent, {k}))
    params = ", ".join(["X: f32[8]"] + [f"T{k}: f32[8]" for k in range(len(loops))])
    text = f"func @hidden({params}) {{\n" + "\n".join(loops) + "\n}\n"
    return text, len(groups)


def main():
    args = hidden.arguments(__doc__)
    for index, text, expected in hidden.graphs(args, make):
        out, _ = hidden.run_schedule(args, text, "fuse-loops", index)
        found = sum(line.startswith("  for ") for line in out.splitlines())
        if found != expected:
            hidden.fail(args, index, text, f"after fuse-loops:\n{out}\n{found} loops left, "
                        f"expected {expected}")
    print(f"fuse-loops: {args.count} hidden kernels of seed {args.seed} pass")


if __name__ == "__main__":
    main()
