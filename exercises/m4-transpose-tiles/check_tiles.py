#!/usr/bin/env python3
"""Checks the loops of exercise m4-transpose-tiles, from `minic schedule --passes default`
on stdin: exactly one parallel loop, the outermost; and the store to B inside two loops
of at most 64 iterations each, themselves inside the loops over the tiles."""

import re
import sys


def main():
    lines = sys.stdin.read().splitlines()
    loops = [line for line in lines if re.match(r"\s*(parallel )?for ", line)]
    parallel = [line for line in loops if line.lstrip().startswith("parallel for")]
    if len(parallel) != 1 or not loops[0].lstrip().startswith("parallel for"):
        sys.exit(f"expected one parallel loop, the outermost; the loops are:\n" +
                 "\n".join(loops))
    store = next(k for k, line in enumerate(lines) if line.lstrip().startswith("B["))
    inner = lines[store - 2:store]
    extents = [re.match(r"\s*(?:\w+ )?for \S+ in 0\.\.(\d+) \{", line) for line in inner]
    if not all(extents) or any(int(m.group(1)) > 64 for m in extents):
        sys.exit("expected the store to B directly inside two loops of at most 64 "
                 "iterations (a tile); it is inside:\n" + "\n".join(inner))
    if len(loops) < 4:
        sys.exit("expected loops over the tiles around the two loops of a tile")
    print("transpose: tiled, one parallel loop")


if __name__ == "__main__":
    main()
