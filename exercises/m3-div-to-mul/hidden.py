#!/usr/bin/env python3
"""Hidden inputs of exercise m3-div-to-mul: random kernels whose blocks divide by
constants, powers of two (whose reciprocals are floats) and others (3.0, 0.1, 0.0, and
2^-128, whose reciprocal 2^128 is past the largest float), some of them vectors of 16
lanes. After `div-to-mul` no division by a power of two with a float reciprocal may be
left, every other division must stay, and the results must be the same (--check)."""

import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import hidden  # noqa: E402

POWERS = [s * 2.0 ** k for k in range(-8, 9) for s in (1, -1)]
OTHERS = [3.0, -5.0, 0.1, 0.75, 6.0, 10.0, 0.0, 2.0 ** -128]


def exact_reciprocal(c):
    if c == 0 or not math.isfinite(c):
        return False
    mantissa, _ = math.frexp(c)
    return abs(mantissa) == 0.5 and abs(1 / c) < 2.0 ** 128


def literal(c):
    return repr(c)


def make(rng):
    rows, cols = rng.choice([2, 3, 4]), rng.choice([16, 32])
    lines, divisions_left, params = [], 0, ["A", "B"]
    for b in range(rng.randint(1, 3)):
        out = f"Y{b}"
        params.append(out)
        terms = []
        for _ in range(rng.randint(1, 4)):
            value = rng.choice(["A[vi, vj]", "B[vi, vj]", "(A[vi, vj] - B[vi, vj])"])
            for _ in range(rng.randint(1, 2)):
                c = rng.choice(POWERS + OTHERS)
                divisions_left += not exact_reciprocal(c)
                value = f"{value} / {literal(c)}"
            terms.append(value)
        lines.append(f"""  for i in 0..{rows} {{
    for j in 0..{cols} {{
      block {out}(vi = spatial({rows}) i, vj = spatial({cols}) j) {{
        reads(A[vi, vj], B[vi, vj]) writes({out}[vi, vj])
        {out}[vi, vj] = {" + ".join(terms)}
      }}
    }}
  }}""")
    if rng.random() < 0.5:
        params.append("V")
        c = rng.choice(POWERS + OTHERS)
        divisions_left += not exact_reciprocal(c)
        lanes = "ramp(j * 16, 1, 16)"
        lines.append(f"""  for i in 0..{rows} {{
    for j in 0..{cols // 16} {{
      V[i, {lanes}] = A[i, {lanes}] / broadcast({literal(c)}, 16)
    }}
  }}""")
    signature = ", ".join(f"{p}: f32[{rows},{cols}]" for p in params)
    return f"func @hidden({signature}) {{\n" + "\n".join(lines) + "\n}\n", divisions_left


def main():
    args = hidden.arguments(__doc__)
    for index, text, divisions_left in hidden.graphs(args, make):
        out, _ = hidden.run_schedule(args, text, "div-to-mul", index)
        divisors = [float(d) for d in re.findall(r" / (?:broadcast\()?(-?[0-9][0-9.e+-]*)", out)]
        invertible = [d for d in divisors if exact_reciprocal(d)]
        if invertible:
            hidden.fail(args, index, text, f"after div-to-mul:\n{out}\na division by "
                        f"{invertible[0]} is left: its reciprocal is a float")
        if len(divisors) != divisions_left:
            hidden.fail(args, index, text, f"after div-to-mul:\n{out}\n{len(divisors)} "
                        f"divisions left, expected {divisions_left}: a division by a "
                        "constant without a float reciprocal must stay")
    print(f"div-to-mul: {args.count} hidden kernels of seed {args.seed} pass")


if __name__ == "__main__":
    main()
