#!/usr/bin/env python3
"""Hidden inputs of exercise m5-random-search: MatMuls of random sizes, each tuned three
times with `minic tune --search random`: twice with one seed, once with another. Every run
must measure as many candidates as it was given trials (the space has far more), each a
kernel not measured before in that run, and none failing; the same seed must propose the
same kernels, another seed others."""

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import hidden  # noqa: E402

TRIALS = 9


def make(rng):
    m, k, n = (rng.choice([16, 24, 32, 48, 64]) for _ in range(3))
    text = (f"graph hidden(%a: f32[{m},{k}], %b: f32[{k},{n}]) -> (%y: f32[{m},{n}]) "
            f"opset 18 {{\n  %y = MatMul(%a, %b)\n  return %y\n}}\n")
    return text, (m, k, n)


def tune(args, index, text, folder, seed):
    """The records of one `minic tune --search random` run, in trial order."""
    graph = os.path.join(folder, "hidden.mgraph")
    with open(graph, "w") as file:
        file.write(text)
    db = os.path.join(folder, f"seed{seed}.jsonl")
    if os.path.exists(db):
        os.remove(db)
    command = [args.minic, "tune", graph, "-o", db, "--search", "random", "--trials",
               str(TRIALS), "--per-round", "4", "--seed", str(seed), "--warm-cache",
               "--finalists", "0"]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        hidden.fail(args, index, text, f"{' '.join(command)} exited {result.returncode}:\n"
                    f"{result.stderr}")
    with open(db) as file:
        records = [json.loads(line) for line in file if line.strip()]
    return sorted(records, key=lambda record: record["trial"]), " ".join(command)


def check_run(args, index, text, records, command):
    traces = [record["trace"] for record in records]
    failed = [record["error"] for record in records if record["error"]]
    if len(records) != TRIALS:
        hidden.fail(args, index, text, f"{command}\nmeasured {len(records)} candidates, "
                    f"expected {TRIALS}: the search proposed too few")
    if len(set(traces)) != len(traces):
        hidden.fail(args, index, text, f"{command}\nthe same kernel was proposed twice")
    if failed:
        hidden.fail(args, index, text, f"{command}\na candidate failed: {failed[0]}")


def main():
    args = hidden.arguments(__doc__)
    args.count = min(args.count, 2)  # each graph is three tuning runs
    for index, text, _ in hidden.graphs(args, make):
        with tempfile.TemporaryDirectory() as folder:
            seed = args.seed % 1000 + 1
            first, command = tune(args, index, text, folder, seed)
            check_run(args, index, text, first, command)
            again, _ = tune(args, index, text, folder, seed)
            other, other_command = tune(args, index, text, folder, seed + 1)
            check_run(args, index, text, other, other_command)
            if [r["trace"] for r in first] != [r["trace"] for r in again]:
                hidden.fail(args, index, text, f"{command}\ntwo runs with one seed proposed "
                            "different kernels: draw every random choice from the seed")
            if {r["trace"] for r in first[1:]} == {r["trace"] for r in other[1:]}:
                hidden.fail(args, index, text, f"{command} and --seed {seed + 1} proposed the "
                            "same kernels: the points must come from the seed")
    print(f"random search: {args.count} hidden MatMuls of seed {args.seed} pass")


if __name__ == "__main__":
    main()
