#!/usr/bin/env python3
"""Checks the multiply-adds of exercise m4-grouped-gemm, from `minic schedule --passes
default` on stdin: they come in runs of two or more consecutive statements (the unrolled
rows of a register tile), and in each run every statement reads X (or a copy of it) at
the same vector of elements, a ramp."""

import re
import sys

LOAD = re.compile(r"\b(\w+)\[((?:[^][]|\[[^][]*\])*)\]")


def x_operand(line):
    """The load of the update that is neither the accumulator (C...) nor W."""
    loads = [(name, index) for name, index in LOAD.findall(line)
             if not name.startswith("C") and name != "W"]
    return loads[0] if len(loads) == 1 else None


def main():
    lines = sys.stdin.read().splitlines()
    runs, run = [], []
    for line in lines + [""]:
        if "W[" in line:
            run.append(line.strip())
        elif run:
            runs.append(run)
            run = []
    if not runs:
        sys.exit("found no multiply-add of W and X")
    for run in runs:
        if len(run) < 2:
            sys.exit("expected register tiles of two rows or more, unrolled: a multiply-add "
                     "stands alone:\n" + run[0])
        operands = {x_operand(line) for line in run}
        if None in operands or len(operands) != 1:
            sys.exit("expected the rows of a register tile to read one vector of X; they "
                     "read:\n" + "\n".join(run))
        name, index = operands.pop()
        if not index.startswith("ramp("):
            sys.exit(f"expected {name} read as a vector (a ramp); it is read at [{index}]")
    print(f"grouped: {len(runs)} register tile(s), each row of a tile reading one vector of X")


if __name__ == "__main__":
    main()
