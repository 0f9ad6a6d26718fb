#!/usr/bin/env python3
"""Hidden inputs of exercise m4-min-max-rules: kernels of eight index stores, each a min or
a max of two sums or differences that share a term (before or after the other term, added
or subtracted), with random shared terms and random other terms whose ranges overlap (so
that the bounds alone decide nothing). After `simplify` each store must read as the README's
replacement gives it, and compute the same on random inputs."""

import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import hidden  # noqa: E402

SHARED = ["i * 8", "k", "i * 3", "k * 5"]
# Pairs of terms whose ranges overlap (j in 0..8, t in 0..4): neither is always the smaller.
OTHERS = [("j", "t"), ("t", "j"), ("j * 2", "t * 3"), ("t * 3", "j"), ("j", "t * 2")]
FLIP = {"min": "max", "max": "min"}


def store(rng):
    """A store's right-hand side and what simplify must make of it."""
    op = rng.choice(["min", "max"])
    a = rng.choice(SHARED)
    u, v = rng.choice(OTHERS)
    form = rng.randrange(4)
    if form == 0:
        return f"{op}({a} + {u}, {a} + {v})", f"{a} + {op}({u}, {v})"
    if form == 1:
        return f"{op}({u} + {a}, {v} + {a})", f"{op}({u}, {v}) + {a}"
    if form == 2:
        return f"{op}({a} - {u}, {a} - {v})", f"{a} - {FLIP[op]}({u}, {v})"
    return f"{op}({u} - {a}, {v} - {a})", f"{op}({u}, {v}) - {a}"


def make(rng):
    stores = [store(rng) for _ in range(8)]
    body = "\n".join(f"          C[{n}, i, j, t, k] = {before}"
                     for n, (before, _) in enumerate(stores))
    text = ("func @hidden(C: i64[8,8,8,4,3]) {\n  for i in 0..8 {\n    for j in 0..8 {\n"
            "      for t in 0..4 {\n        for k in 0..3 {\n" + body +
            "\n        }\n      }\n    }\n  }\n}\n")
    return text, [after for _, after in stores]


def main():
    args = hidden.arguments(__doc__)
    for index, text, expected in hidden.graphs(args, make):
        out, _ = hidden.run_schedule(args, text, "simplify", index)
        got = re.findall(r"C\[(\d+), i, j, t, k\] = (.*)", out)
        for n, after in enumerate(expected):
            line = dict(got).get(str(n))
            if line != after:
                hidden.fail(args, index, text, f"after simplify:\n{out}\nstore {n} reads "
                            f"`{line}`, expected `{after}`")
    print(f"min-max rules: {args.count} hidden kernels of seed {args.seed} pass")


if __name__ == "__main__":
    main()
