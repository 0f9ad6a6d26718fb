#!/usr/bin/env python3
"""Hidden inputs of exercise m2-fuse-hardswish: chains of two to six steps, each a
HardSwish written out in a random form (the Clip form with either operand order, divided
by 6 or multiplied by 1/6, or x * HardSigmoid(x)), a near miss (another constant, a
HardSigmoid with other parameters, an intermediate that a graph output also reads), or a
plain op. After `fuse-hardswish` exactly the true formulas must be HardSwish nodes, with
the same results."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import hidden  # noqa: E402

CONSTANTS = {"three": 3.0, "two": 2.0, "zero": 0.0, "five": 5.0, "six": 6.0,
             "sixth": 0.16666667}


def pair(rng, a, b):
    return f"{a}, {b}" if rng.random() < 0.5 else f"{b}, {a}"


def step(rng, k, v, extra_outputs):
    """Lines computing %s{k} from v, and whether they are a true HardSwish."""
    kind = rng.choice(["clip", "clip", "sigmoid", "miss_constant", "miss_sigmoid",
                       "miss_shared", "plain"])
    out = f"%s{k}"
    if kind == "plain":
        return [f"  {out} = {rng.choice(['Relu', 'Neg', 'Abs'])}({v})"], False
    if kind in ("sigmoid", "miss_sigmoid"):
        alpha = "0.16666667" if kind == "sigmoid" else "0.2"
        return [f"  %g{k} = HardSigmoid({v}) {{alpha={alpha}, beta=0.5}}",
                f"  {out} = Mul({pair(rng, v, f'%g{k}')})"], kind == "sigmoid"
    three, top, divisor = "%three", "%six", "%six"
    if kind == "miss_constant":
        three, top, divisor = rng.choice([("%two", "%six", "%six"), ("%three", "%five", "%six"),
                                          ("%three", "%six", "%five")])
    lines = [f"  %a{k} = Add({pair(rng, v, three)})",
             f"  %c{k} = Clip(%a{k}, %zero, {top})",
             f"  %m{k} = Mul({pair(rng, v, f'%c{k}')})"]
    if rng.random() < 0.5 or divisor != "%six":
        lines.append(f"  {out} = Div(%m{k}, {divisor})")
    else:
        lines.append(f"  {out} = Mul({pair(rng, f'%m{k}', '%sixth')})")
    if kind == "miss_shared":
        lines.append(f"  %e{k} = Neg(%c{k})")
        extra_outputs.append(f"%e{k}")
    return lines, kind == "clip"


def make(rng):
    shape = hidden.random_shape(rng)
    type_ = hidden.tensor_type(shape)
    lines = [f"  %{name} = const f32[] dense<[{value}]>" for name, value in CONSTANTS.items()]
    value, fused, extra = "%x", 0, []
    for k in range(rng.randint(2, 6)):
        step_lines, is_hardswish = step(rng, k, value, extra)
        lines += step_lines
        fused += is_hardswish
        value = f"%s{k}"
    lines.append(f"  %y = Identity({value})")
    outputs = ["%y"] + extra
    signature = ", ".join(f"{o}: {type_}" for o in outputs)
    text = (f"graph hidden(%x: {type_}) -> ({signature}) opset 18 {{\n" + "\n".join(lines) +
            f"\n  return {', '.join(outputs)}\n}}\n")
    return text, fused


def main():
    args = hidden.arguments(__doc__)
    for index, text, fused in hidden.graphs(args, make):
        out, _ = hidden.run_opt(args, text, "fuse-hardswish", index)
        found = out.count(" = HardSwish(")
        if found != fused:
            hidden.fail(args, index, text, f"after fuse-hardswish:\n{out}\n{found} HardSwish "
                        f"nodes, expected {fused}")
    print(f"fuse-hardswish: {args.count} hidden graphs of seed {args.seed} pass")


if __name__ == "__main__":
    main()
