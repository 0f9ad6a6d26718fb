"""What the exercises' hidden tests share (each exercise's hidden.py).

A hidden test makes its inputs from a seed when it runs, so a solution cannot be fitted
to them: random graphs in minic's text form, each run through `minic opt` with the
exercise's pass and --verify-each=numeric (the interpreter before and after, on the same
random inputs), or random kernels in the loop IR's text form, each run through
`minic schedule` with the exercise's loop pass and --check (the same, for a kernel), or
random graphs compiled and run by `minic run`, their outputs compared with the reference
interpreter's; then checked for what the exercise should have done. A failure prints
the seed, the graph and minic's output, and how to run that case again.
"""

import argparse
import os
import random
import subprocess
import sys
import tempfile


def arguments(description, node_dir=False):
    """The command line: --minic, --seed, --count, and with `node_dir` --node-dir, the
    folder of ONNX's node tests (build/onnx-data/node)."""
    parser = argparse.ArgumentParser(description=description)
    if node_dir:
        parser.add_argument("--node-dir", required=True, help="ONNX's node tests")
    parser.add_argument("--minic", required=True, help="the minic binary under test")
    parser.add_argument("--seed", type=int, required=True, help="the seed of the graphs")
    parser.add_argument("--count", type=int, default=25, help="how many graphs")
    return parser.parse_args()


def graphs(args, make):
    """Yields (index, text, expected) for --count graphs: make(rng) gives text, expected."""
    rng = random.Random(args.seed)
    for index in range(args.count):
        text, expected = make(rng)
        yield index, text, expected


def run_opt(args, text, passes, index):
    """`minic opt` of `text` with `passes`, checked numerically; returns (stdout, stderr)."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "hidden.mgraph")
        with open(path, "w") as file:
            file.write(text)
        result = subprocess.run([args.minic, "opt", path, "--passes=" + passes,
                                 "--verify-each=numeric"], capture_output=True, text=True)
    if result.returncode != 0:
        fail(args, index, text, f"minic opt exited {result.returncode}:\n{result.stderr}")
    return result.stdout, result.stderr


def run_schedule(args, text, passes, index):
    """`minic schedule` of the kernel `text` with the loop `passes`, checked on the loop
    interpreter (--check, with random inputs from the seed); returns (stdout, stderr)."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "hidden.mloop")
        with open(path, "w") as file:
            file.write(text)
        result = subprocess.run([args.minic, "schedule", path, "--passes", passes, "--check",
                                 "--seed", str(args.seed)], capture_output=True, text=True)
    if result.returncode != 0:
        fail(args, index, text, f"minic schedule exited {result.returncode}:\n{result.stderr}")
    return result.stdout, result.stderr


def run_compiled(args, text, index):
    """`text` compiled and run by `minic run` (--profile) on random inputs from the seed,
    its outputs compared with the reference interpreter's on the same inputs; returns the
    compiled run's stdout."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "hidden.mgraph")
        with open(path, "w") as file:
            file.write(text)
        seed = ["--seed", str(args.seed)]
        reference = os.path.join(folder, "reference")
        result = subprocess.run([args.minic, "run", path, "--backend", "interp", "--output-dir",
                                 reference] + seed, capture_output=True, text=True)
        if result.returncode != 0:
            fail(args, index, text, f"minic run --backend interp exited {result.returncode}:\n"
                 f"{result.stderr}")
        result = subprocess.run([args.minic, "run", path, "--profile", "--compare", reference] +
                                seed, capture_output=True, text=True)
    if result.returncode != 0:
        fail(args, index, text, f"minic run --compare exited {result.returncode}:\n"
             f"{result.stdout}{result.stderr}")
    return result.stdout


def fail(args, index, text, message):
    print(f"hidden graph {index} of seed {args.seed}:\n{text}\n{message}", file=sys.stderr)
    print(f"again: python3 {sys.argv[0]} --minic {args.minic} --seed {args.seed}",
          file=sys.stderr)
    sys.exit(1)


def tensor_type(shape):
    return "f32[" + ",".join(str(d) for d in shape) + "]"


def random_shape(rng, max_rank=3, max_dim=4):
    return [rng.randint(1, max_dim) for _ in range(rng.randint(1, max_rank))]
