#!/usr/bin/env python3
"""Hidden inputs of exercise m3-unswitch: kernels of one loop nest each, two to four
loops deep, with an `if` (and sometimes an `else`) as the whole body of a loop at a
random depth. Its condition compares loop variables of the loops outside it (and maybe
of the loop just around it), or reads memory. After `unswitch` an index condition must
sit directly inside the innermost loop whose variable it uses (at the top if it uses
none of them), a memory condition where it was, and the results must be the same."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import hidden  # noqa: E402


def make_nest(rng, name):
    depth = rng.randint(2, 4)
    extents = [rng.randint(2, 5) for _ in range(depth)]
    loops = [f"v{d}" for d in range(depth)]
    at = rng.randint(1, depth)  # the if is the body of loop at - 1
    shape = ",".join(map(str, extents))
    index = ", ".join(loops)
    if rng.random() < 0.25:
        condition = f"X[{', '.join(loops[:at] + ['0'] * (depth - at))}] > 0.0"
        expected = at
    else:
        used = sorted(rng.sample(range(at), rng.randint(1, min(2, at))))
        terms = " + ".join(loops[u] for u in used)
        condition = f"{terms} < {rng.randint(1, 6)}"
        expected = used[-1] + 1
    def loops_around(text, levels):
        for d in reversed(levels):
            text = f"for {loops[d]} in 0..{extents[d]} {{\n{text}\n}}"
        return text

    inner = range(at, depth)
    body = f"if ({condition}) {{\n{loops_around(f'Y[{index}] = X[{index}] + 1.0', inner)}\n}}"
    if rng.random() < 0.5:
        other = loops_around(f"Y[{index}] = X[{index}] * 2.0", inner)
        body = body[:-1] + f"}} else {{\n{other}\n}}"
    body = loops_around(body, range(at))
    return (f"func @{name}(X: f32[{shape}], Y: f32[{shape}]) {{\n{body}\n}}\n", expected)


def make(rng):
    nests = [make_nest(rng, f"f{n}") for n in range(rng.randint(1, 3))]
    return "\n".join(text for text, _ in nests), [depth for _, depth in nests]


def if_depths(out):
    """The depth (enclosing loops) of the first `if` of each function of the output."""
    depths = []
    for function in out.split("func @")[1:]:
        for line in function.splitlines():
            if line.lstrip().startswith("if ("):
                depths.append((len(line) - len(line.lstrip()) - 2) // 2)
                break
    return depths


def main():
    args = hidden.arguments(__doc__)
    for index, text, expected in hidden.graphs(args, make):
        out, _ = hidden.run_schedule(args, text, "unswitch", index)
        found = if_depths(out)
        if found != expected:
            hidden.fail(args, index, text, f"after unswitch:\n{out}\nthe ifs are inside "
                        f"{found} loops, expected {expected}")
    print(f"unswitch: {args.count} hidden kernels of seed {args.seed} pass")


if __name__ == "__main__":
    main()
