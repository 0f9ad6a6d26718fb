#!/usr/bin/env python3
"""The random-graph differential fuzzer: minic against ONNX Runtime on graphs nobody wrote.

Course module 8 (testing a compiler). Each graph (graph_gen.py, one seed each) runs on the
same random inputs through ONNX Runtime (every graph optimisation on) and through
`minic run` in each configuration asked for: the reference interpreter on the imported
graph (`interp`), the compiled CPU code after the default passes (`llvm`), and the GPU
schedules on the loop interpreter (`emulate`). Every output must agree with ORT's within
rtol 1e-3, atol 1e-4, or, where ORT departs from ONNX's own reference implementation
(onnx.reference: NaN in reductions), with the reference's. A graph on which the two
references disagree, or whose outputs change beyond the tolerance when errors of float32
rounding's size are put after every node (ONNX's reference on the graph turned to double,
twice), is "unstable": rounding decides its outputs, and it is reported but not counted. A graph fails when minic stops with an error (an internal error
above all: the graphs are valid), crashes, times out, or disagrees.

A failing graph is shrunk to a small one that fails the same way: first the cone of the
first value that fails alone, else the outputs dropped one at a time; then, one node input
at a time, a producer replaced by a fresh graph input of the same shape, until nothing
more can go. The reproducer is
written to OUT/seedN/: repro.onnx, repro.mgraph (minic's text form), the inputs as
.npy files and the failure in failure.txt.

    fuzz_graphs.py --minic build/minic [--count N] [--seed S] [--configs interp,llvm,emulate]
                   [--time-budget SECONDS] [--jobs J] [--out DIR] [--no-shrink]

Exits 1 if a graph failed. With --time-budget the run goes on past --count, seed after
seed, until the budget is spent (the long run: scripts/fuzz.sh).
"""

import argparse
import concurrent.futures
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import onnx
from onnx import helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))

import graph_gen  # noqa: E402
import onnxruntime  # noqa: E402
from compare_with_ort import (compare, input_args, random_inputs, read_outputs,  # noqa: E402
                              run_onnxruntime)

RTOL, ATOL = 1e-3, 1e-4
# The relative error rounding_decides puts after every node: 8 units of float32 roundoff
# (2^-24 each), what a sum of a few dozen terms added in another order may leave.
NOISE = 2.0 ** -21
onnxruntime.set_default_logger_severity(3)  # errors only: no notes on unused initializers
CONFIGS = {  # name -> the `minic run` arguments
    "interp": ["--backend", "interp", "--passes", "none"],
    "llvm": ["--backend", "llvm", "--passes", "default", "--threads", "1"],
    "emulate": ["--target", "cuda", "--emulate", "--passes", "default"],
}


def run_minic(minic, config, model_path, inputs, work_dir, timeout):
    """(failure or None, outputs): failure is a one-line text starting with its kind."""
    out_dir = os.path.join(work_dir, f"out-{config}")
    shutil.rmtree(out_dir, ignore_errors=True)  # no outputs left from an earlier model
    os.makedirs(out_dir)
    command = [minic, "run", model_path, *CONFIGS[config], "--output-dir", out_dir,
               *input_args(inputs, work_dir)]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"timeout: {config} took longer than {timeout:g} s", None
    if result.returncode < 0:
        return f"crash: {config} died of signal {-result.returncode}", None
    if result.returncode != 0:
        lines = result.stderr.strip().splitlines() or ["(no message)"]
        kind = "internal error" if "internal error" in result.stderr else "error"
        return f"{kind}: {config}: {lines[-1]}", None
    return None, read_outputs(out_dir)


def agree(expected, actual):
    """compare_with_ort's rule, quietly: it prints a line per output, and numpy warns of
    outputs all NaN."""
    names = [f"output {k}" for k in range(len(expected))]
    with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return compare(names, [np.asarray(e) for e in expected], actual, RTOL, ATOL)


def onnx_reference(path, inputs):
    """The outputs of ONNX's own reference implementation (onnx.reference), or None where
    it cannot run the model."""
    from onnx.reference import ReferenceEvaluator
    with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # log(-1) and the like
        try:
            return ReferenceEvaluator(path).run(None, inputs)
        except Exception:
            return None


def as_float64(model):
    """The model computing in double: every float tensor (inputs, outputs, initializers,
    inferred values) and every Cast to float becomes double. Integer and bool values stay."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    for value in [*graph.input, *graph.output, *graph.value_info]:
        if value.type.tensor_type.elem_type == onnx.TensorProto.FLOAT:
            value.type.tensor_type.elem_type = onnx.TensorProto.DOUBLE
    for k, tensor in enumerate(graph.initializer):
        if tensor.data_type == onnx.TensorProto.FLOAT:
            array = onnx.numpy_helper.to_array(tensor).astype(np.float64)
            graph.initializer[k].CopyFrom(onnx.numpy_helper.from_array(array, tensor.name))
    for node in graph.node:
        for attribute in node.attribute:
            if node.op_type == "Cast" and attribute.name == "to" and \
                    attribute.i == onnx.TensorProto.FLOAT:
                attribute.i = onnx.TensorProto.DOUBLE
    return model


def with_rounding_noise(model, rng):
    """The model in double (as_float64) with every float value a node computes multiplied
    by 1 + u * 2^-23, u uniform in [-1, 1] for each element: the rounding error float32
    arithmetic may leave there, made explicit."""
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in inferred.graph.value_info
              if v.type.tensor_type.elem_type == onnx.TensorProto.FLOAT}
    for v in inferred.graph.output:
        if v.type.tensor_type.elem_type == onnx.TensorProto.FLOAT:
            shapes[v.name] = [d.dim_value for d in v.type.tensor_type.shape.dim]
    noisy = as_float64(model)
    graph = noisy.graph
    nodes = []
    for node in graph.node:
        nodes.append(node)
        for k, name in enumerate(node.output):
            if name not in shapes:
                continue
            exact = f"{name}_exact"
            node.output[k] = exact
            factor = 1 + rng.uniform(-1, 1, size=shapes[name]) * NOISE
            graph.initializer.append(onnx.numpy_helper.from_array(factor, f"{name}_noise"))
            nodes.append(helper.make_node("Mul", [exact, f"{name}_noise"], [name]))
    del graph.node[:]
    graph.node.extend(nodes)
    return noisy


def rounding_decides(path, inputs, trials=2):
    """True if rounding errors of float32's size, put after every node (with_rounding_noise),
    change the model's outputs beyond the tolerance: as in a normalisation of rows that are
    constant in exact arithmetic, whose variance is then rounding noise scaled by
    1/sqrt(epsilon). No answer from minic can be judged on such a graph at this tolerance.
    None where ONNX's reference cannot run the model in double."""
    doubles = {name: np.asarray(array, np.float64) if np.asarray(array).dtype == np.float32
               else array for name, array in inputs.items()}
    stem = path[:-len(".onnx")]
    onnx.save(as_float64(onnx.load(path)), f"{stem}-f64.onnx")
    exact = onnx_reference(f"{stem}-f64.onnx", doubles)
    if exact is None:
        return None
    rng = np.random.default_rng(0)
    for trial in range(trials):
        onnx.save(with_rounding_noise(onnx.load(path), rng), f"{stem}-noisy.onnx")
        noisy = onnx_reference(f"{stem}-noisy.onnx", doubles)
        if noisy is None:
            return None
        if not agree(exact, noisy):
            return True
    return False


def check_model(minic, model, configs, work_dir, timeout, seed=0):
    """The first failure of the model in any configuration, or None. Outputs that differ
    from ORT's are judged again by ONNX's reference implementation: minic passes if it
    agrees with the reference (ORT departs from it in places: its ReduceMax skips a NaN
    that is not the first element); if the two references disagree with each other, the
    graph is "unstable" (rounding decides its outputs at this tolerance), not a failure; so
    is one whose outputs change when rounding errors are put after its nodes
    (rounding_decides).
    A model ONNX Runtime cannot run is a generator bug and raises."""
    path = os.path.join(work_dir, "model.onnx")
    onnx.save(model, path)
    inputs = random_inputs(model, seed)
    _, expected = run_onnxruntime(path, inputs)
    for config in configs:
        failure, actual = run_minic(minic, config, path, inputs, work_dir, timeout)
        if failure:
            return failure
        if agree(expected, actual):
            continue
        reference = onnx_reference(path, inputs)
        if reference is not None and agree(reference, actual):
            continue
        if reference is not None and not agree(reference, expected):
            return f"unstable: ONNX Runtime and ONNX's reference disagree ({config} ran)"
        if rounding_decides(path, inputs):
            return f"unstable: float32 rounding decides its outputs ({config} ran)"
        return f"mismatch: {config} disagrees with ONNX Runtime and ONNX's reference"
    return None


# --- shrinking -------------------------------------------------------------------------------

def typed_values(model):
    """name -> ValueInfoProto of every value the model has (ONNX's shape inference)."""
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    graph = inferred.graph
    return {v.name: v for v in [*graph.input, *graph.value_info, *graph.output]}


def with_outputs(model, outputs, types, extra_inputs=()):
    """The model cut down to the nodes the outputs need, reading extra_inputs as inputs."""
    graph = model.graph
    producer = {out: node for node in graph.node for out in node.output}
    needed, stack = set(), list(outputs)
    while stack:
        name = stack.pop()
        if name in needed:
            continue
        needed.add(name)
        node = producer.get(name)
        if node is not None and name not in extra_inputs:
            stack.extend(i for i in node.input if i)
    nodes = [n for n in graph.node if any(o in needed for o in n.output)
             and not all(o in extra_inputs for o in n.output)]
    inputs = [i for i in graph.input if i.name in needed]
    inputs += [types[name] for name in extra_inputs if name in needed]
    initializers = [i for i in graph.initializer if i.name in needed]
    new = helper.make_graph(nodes, graph.name, inputs, [types[o] for o in outputs], initializers)
    cut = helper.make_model(new, opset_imports=model.opset_import, producer_name="minic-fuzz")
    cut.ir_version = model.ir_version
    return cut


def shrink(minic, model, failure, configs, work_dir, timeout):
    """A smaller model whose failure has the same kind and configuration."""
    signature = failure.split(":")[0] + ":" + failure.split(":")[1]
    types = typed_values(model)

    def still_fails(candidate):
        try:
            onnx.checker.check_model(candidate, full_check=True)
            found = check_model(minic, candidate, configs, work_dir, timeout)
        except Exception:  # a cut ORT or the checker refuses: not a reproducer
            return False
        return found is not None and found.startswith(signature)

    # 1. The cone of the first value, in graph order, that fails alone: the earliest
    #    failing value has the fewest nodes above it.
    order = [out for node in model.graph.node for out in node.output]
    best = model
    for name in order:
        candidate = with_outputs(model, [name], types)
        if len(candidate.graph.node) < len(best.graph.node) and still_fails(candidate):
            best = candidate
            break
    # 2. Outputs dropped, one at a time (a failure may need two outputs alive at once).
    dropped = True
    while dropped and len(best.graph.output) > 1:
        dropped = False
        outputs = [o.name for o in best.graph.output]
        for name in outputs:
            candidate = with_outputs(best, [o for o in outputs if o != name], types)
            if still_fails(candidate):
                best, dropped = candidate, True
                break
    # 3. Producers replaced by inputs, one at a time, while the failure stays.
    cut_at = []
    changed = True
    while changed:
        changed = False
        produced = {out for node in best.graph.node for out in node.output}
        outputs = [o.name for o in best.graph.output]
        for node in list(best.graph.node):
            for name in node.input:
                if name not in produced or name in cut_at:
                    continue
                candidate = with_outputs(best, outputs, types, [*cut_at, name])
                if len(candidate.graph.node) < len(best.graph.node) and still_fails(candidate):
                    best, cut_at, changed = candidate, [*cut_at, name], True
                    break
            if changed:
                break
    return best


def write_reproducer(minic, model, failure, seed, out_dir):
    folder = os.path.join(out_dir, f"seed{seed}")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "repro.onnx")
    onnx.save(model, path)
    subprocess.run([minic, "opt", path, "--passes", "none", "-o",
                    os.path.join(folder, "repro.mgraph")], capture_output=True)
    args = input_args(random_inputs(model, 0), folder)
    with open(os.path.join(folder, "failure.txt"), "w") as f:
        f.write(f"{failure}\n{len(model.graph.node)} nodes: "
                f"{' '.join(n.op_type for n in model.graph.node)}\n"
                f"minic run {path} {' '.join(args)}\n")
    return folder


# --- the run ---------------------------------------------------------------------------------

def fuzz_one(options, seed):
    """(seed, node count, failure or None, reproducer folder or None)."""
    model = graph_gen.random_graph(seed)
    with tempfile.TemporaryDirectory(prefix="minic-fuzz-") as work_dir:
        failure = check_model(options.minic, model, options.configs, work_dir, options.timeout)
        if failure is None or failure.startswith("unstable"):
            return seed, len(model.graph.node), failure, None
        small = model
        if not options.no_shrink:
            small = shrink(options.minic, model, failure, options.configs, work_dir,
                           options.timeout)
        folder = write_reproducer(options.minic, small, failure, seed, options.out)
        return seed, len(model.graph.node), failure, folder


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minic", required=True, help="the minic binary")
    parser.add_argument("--count", type=int, default=100, help="graphs to run (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="the first graph's seed")
    parser.add_argument("--configs", default="interp,llvm,emulate",
                        help="minic configurations, of: " + ", ".join(CONFIGS))
    parser.add_argument("--time-budget", type=float, default=0,
                        help="go on past --count until this many seconds have passed")
    parser.add_argument("--jobs", type=int, default=1, help="graphs run at once")
    parser.add_argument("--timeout", type=float, default=120,
                        help="seconds one `minic run` may take")
    parser.add_argument("--out", default="fuzz-out", help="where reproducers are written")
    parser.add_argument("--no-shrink", action="store_true", help="write failing graphs whole")
    options = parser.parse_args(argv)
    options.configs = options.configs.split(",")
    for config in options.configs:
        if config not in CONFIGS:
            parser.error(f"unknown configuration '{config}' (known: {', '.join(CONFIGS)})")
    return options


def main(argv):
    options = parse_args(argv)
    start = time.monotonic()
    failures, ran, nodes, unstable = [], 0, 0, 0
    seeds = iter(range(options.seed, sys.maxsize))

    def more():
        if ran < options.count:
            return True
        return time.monotonic() - start < options.time_budget

    with concurrent.futures.ProcessPoolExecutor(options.jobs) as pool:
        pending = set()
        while more() or pending:
            while more() and len(pending) < options.jobs:
                pending.add(pool.submit(fuzz_one, options, next(seeds)))
                ran += 1
            done, pending = concurrent.futures.wait(
                pending, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in done:
                seed, count, failure, folder = future.result()
                nodes += count
                if failure and failure.startswith("unstable"):
                    unstable += 1
                    print(f"unstable seed {seed} ({count} nodes): not counted", flush=True)
                elif failure:
                    failures.append(failure)
                    print(f"FAIL seed {seed} ({count} nodes): {failure}\n     reproducer: {folder}",
                          flush=True)
    kinds = {}
    for failure in failures:
        kind = failure.split(":")[0]
        kinds[kind] = kinds.get(kind, 0) + 1
    summary = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "none"
    print(f"{ran} graphs ({nodes} nodes; configurations {','.join(options.configs)}) in "
          f"{time.monotonic() - start:.0f} s: {ran - len(failures) - unstable} passed, "
          f"{len(failures)} failed (failures: {summary}), {unstable} unstable")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
