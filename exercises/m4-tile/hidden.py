#!/usr/bin/env python3
"""Hidden inputs of exercise m4-tile: random kernels (elementwise of rank 2 to 4, or a sum
over the last axis) and a random band of their loops (1 to 3 loops, each directly inside
the one before) tiled by random factors, some of which leave a remainder (a guard). The
`tile` line must give exactly the loop IR of the splits and the reorder it stands for, and
the same results on random inputs; a band out of order, or with a loop left out in the
middle, must be refused with an error naming `tile`."""

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import hidden  # noqa: E402


def kernel(rng):
    """A random kernel's text and its loop count."""
    rank = rng.randint(2, 4)
    dims = [rng.randint(1, 24) for _ in range(rank)]
    reduce = rng.random() < 0.4
    loops = [f"l{d}" for d in range(rank)]
    spatial = rank - 1 if reduce else rank
    ivars = [f"v{d}" for d in range(spatial)] + (["r0"] if reduce else [])
    binds = [f"{ivars[d]} = {'reduce' if d >= spatial else 'spatial'}({dims[d]}) {loops[d]}"
             for d in range(rank)]
    a_index = ", ".join(ivars)
    out_index = ", ".join(ivars[:spatial])
    out_shape = ",".join(str(d) for d in dims[:spatial])
    body = [f"block B({', '.join(binds)}) {{"]
    if reduce:
        body += [f"  reads(B[{out_index}], A[{a_index}]) writes(B[{out_index}])",
                 f"  init {{ B[{out_index}] = 0.0 }}",
                 f"  B[{out_index}] = B[{out_index}] + A[{a_index}]"]
    else:
        body += [f"  reads(A[{a_index}]) writes(B[{out_index}])",
                 f"  B[{out_index}] = A[{a_index}] * 2.0 + 1.0"]
    body.append("}")
    lines = []
    for d in range(rank):
        lines.append("  " * d + f"for {loops[d]} in 0..{dims[d]} {{")
    lines += ["  " * rank + line for line in body]
    for d in reversed(range(rank)):
        lines.append("  " * d + "}")
    text = (f"func @k(A: f32[{','.join(str(d) for d in dims)}], B: f32[{out_shape}]) {{\n" +
            "\n".join("  " + line for line in lines) + "\n}\n")
    return text, dims


def head(rank):
    loops = ", ".join(f"l{d}" for d in range(rank))
    return f'b = get_block("B")\n{loops} = get_loops(b)\n'


def make(rng):
    text, dims = kernel(rng)
    rank = len(dims)
    start = rng.randrange(rank)
    count = rng.randint(1, min(3, rank - start))
    band = list(range(start, start + count))
    factors = [rng.randint(1, dims[d] + 2) for d in band]
    names = [f"l{d}" for d in band]
    outers = [f"o{d}" for d in band]
    inners = [f"i{d}" for d in band]
    tiled = (head(rank) + f"{', '.join(outers + inners)} = "
             f"tile({', '.join(names)}, [{', '.join(map(str, factors))}])\n")
    split = head(rank) + "".join(f"o{d}, i{d} = split(l{d}, [-1, {f}])\n"
                                 for d, f in zip(band, factors))
    if count > 1:
        split += f"reorder({', '.join(outers + inners)})\n"
    refused = None
    if rng.random() < 0.5:
        a = rng.randrange(rank - 1)
        if rank - a >= 3 and rng.random() < 0.5:
            pair = [f"l{a}", f"l{rng.randint(a + 2, rank - 1)}"]  # a loop left out between
        else:
            pair = [f"l{a + 1}", f"l{a}"]  # the inner loop first
        refused = head(rank) + f"tile({', '.join(pair)}, [2, 2])\n"
    return text, (tiled, split, refused)


def schedule(args, folder, kernel_path, trace, extra=()):
    path = os.path.join(folder, "t.trace")
    with open(path, "w") as file:
        file.write(trace)
    return subprocess.run([args.minic, "schedule", kernel_path, "--trace", path, *extra],
                          capture_output=True, text=True)


def main():
    args = hidden.arguments(__doc__)
    refusals = 0
    for index, text, (tiled, split, refused) in hidden.graphs(args, make):
        with tempfile.TemporaryDirectory() as folder:
            kernel_path = os.path.join(folder, "k.mloop")
            with open(kernel_path, "w") as file:
                file.write(text)
            expected = schedule(args, folder, kernel_path, split)
            if expected.returncode != 0:
                hidden.fail(args, index, text, f"the splits did not apply:\n{split}\n"
                            f"{expected.stderr}")
            got = schedule(args, folder, kernel_path, tiled, ["--check", "--seed", str(args.seed)])
            if got.returncode != 0:
                hidden.fail(args, index, text, f"trace:\n{tiled}\nminic schedule exited "
                            f"{got.returncode}:\n{got.stderr}")
            if got.stdout != expected.stdout:
                hidden.fail(args, index, text, f"trace:\n{tiled}\ngives\n{got.stdout}\nbut the "
                            f"splits and the reorder\n{split}\ngive\n{expected.stdout}")
            if refused:
                result = schedule(args, folder, kernel_path, refused)
                if result.returncode == 0 or "tile: " not in result.stderr:
                    hidden.fail(args, index, text, f"trace:\n{refused}\nmust be refused with an "
                                f"error naming tile; minic exited {result.returncode}:\n"
                                f"{result.stdout}{result.stderr}")
                refusals += 1
    print(f"tile: {args.count} hidden kernels of seed {args.seed} pass ({refusals} refusals)")


if __name__ == "__main__":
    main()
