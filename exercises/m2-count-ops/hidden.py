#!/usr/bin/env python3
"""Hidden inputs of exercise m2-count-ops: random graphs of 1 to 12 elementwise nodes.
`count-ops` must report each op's count, sorted by name, and the total, and change
nothing; after fuse-ops the report must be the same."""

import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import hidden  # noqa: E402

UNARY = ["Relu", "Neg", "Abs", "Sigmoid", "Tanh"]
BINARY = ["Add", "Mul", "Sub", "Max"]


def make(rng):
    type_ = hidden.tensor_type(hidden.random_shape(rng))
    values, lines, counts = ["%x"], [], collections.Counter()
    for k in range(rng.randint(1, 12)):
        if rng.random() < 0.5:
            op = rng.choice(UNARY)
            lines.append(f"  %v{k} = {op}({rng.choice(values)})")
        else:
            op = rng.choice(BINARY)
            lines.append(f"  %v{k} = {op}({rng.choice(values)}, {rng.choice(values)})")
        counts[op] += 1
        values.append(f"%v{k}")
    text = (f"graph hidden(%x: {type_}) -> ({values[-1]}: {type_}) opset 18 {{\n" +
            "\n".join(lines) + f"\n  return {values[-1]}\n}}\n")
    report = [f"count-ops: {op} {counts[op]}" for op in sorted(counts)]
    report.append(f"count-ops: {sum(counts.values())} nodes")
    return text, report


def report_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("count-ops:")]


def main():
    args = hidden.arguments(__doc__)
    for index, text, report in hidden.graphs(args, make):
        before, _ = hidden.run_opt(args, text, "none", index)
        after, err = hidden.run_opt(args, text, "count-ops", index)
        if report_lines(err) != report:
            hidden.fail(args, index, text, "count-ops printed:\n" + "\n".join(report_lines(err)) +
                        "\nexpected:\n" + "\n".join(report))
        if after != before:
            hidden.fail(args, index, text, f"count-ops changed the graph:\n{after}")
        _, fused_err = hidden.run_opt(args, text, "fuse-ops,count-ops", index)
        if report_lines(fused_err) != report:
            hidden.fail(args, index, text, "after fuse-ops, count-ops printed:\n" +
                        "\n".join(report_lines(fused_err)) + "\nexpected:\n" + "\n".join(report))
    print(f"count-ops: {args.count} hidden graphs of seed {args.seed} pass")


if __name__ == "__main__":
    main()
