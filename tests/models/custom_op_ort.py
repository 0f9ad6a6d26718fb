#!/usr/bin/env python3
"""Custom ops against ONNX Runtime's contrib ops: the GELU plugin on three models.

Course module 8. examples/custom_ops/gelu_ops.cpp registers com.example.Gelu and
com.example.FastGelu with the formulas of ONNX Runtime's com.microsoft.Gelu and FastGelu.
Each model here is written twice, once with each domain and otherwise byte for byte the
same (weights from a fixed seed). ONNX Runtime runs the com.microsoft one; minic runs the
com.example one with `--custom-ops` through the reference interpreter, compiled for this
CPU, with the GPU schedules on the loop interpreter (`--target cuda --emulate`: the custom
ops run their reference kernels there), and on a GPU (`--target cuda`: the plugin's
hand-written CUDA kernels run as given; skipped, saying so, where there is no CUDA
driver). Every output must agree within |minic - ort| <= 1e-4 + 1e-4 |ort|. Each model
also compiles ahead of time for the GPU (`minic compile --target cuda`, NVRTC needed, no
GPU): its custom ops launch their own kernels. A model using a domain the plugin does not
register must be refused naming the op. Exits 1 on a failure.

    custom_op_ort.py --minic BUILD/minic --ops BUILD/examples/custom_ops/libminic_gelu_ops.so
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, helper, numpy_helper

BACKENDS = {
    "interp": ["--backend", "interp", "--passes", "default"],
    "llvm": ["--threads", "2"],
    "emulate": ["--target", "cuda", "--emulate"],
    "cuda": ["--target", "cuda"],
}


def mlp(domain, rng):
    """MatMul -> FastGelu(bias) -> MatMul -> Gelu: the activations of a transformer's FFN."""
    w1 = numpy_helper.from_array(rng.normal(0, 0.3, (64, 128)).astype(np.float32), "w1")
    b1 = numpy_helper.from_array(rng.normal(0, 0.3, (128,)).astype(np.float32), "b1")
    w2 = numpy_helper.from_array(rng.normal(0, 0.1, (128, 32)).astype(np.float32), "w2")
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]),
             helper.make_node("FastGelu", ["h", "b1"], ["a"], domain=domain),
             helper.make_node("MatMul", ["a", "w2"], ["g"]),
             helper.make_node("Gelu", ["g"], ["y"], domain=domain)]
    return nodes, [w1, b1, w2], [("x", [8, 64])], [("y", [8, 32])]


def conv(domain, rng):
    """Conv -> Gelu -> FastGelu (no bias) on an image: 4-d tensors, two outputs."""
    w = numpy_helper.from_array(rng.normal(0, 0.3, (16, 3, 3, 3)).astype(np.float32), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Gelu", ["c"], ["y"], domain=domain),
             helper.make_node("FastGelu", ["c"], ["z"], domain=domain)]
    return nodes, [w], [("x", [1, 3, 12, 12])], [("y", [1, 16, 12, 12]), ("z", [1, 16, 12, 12])]


def lone(domain, rng):
    """A FastGelu with a bias on a 3-d tensor, alone in its model: one kernel."""
    b = numpy_helper.from_array(rng.normal(0, 1, (40,)).astype(np.float32), "b")
    nodes = [helper.make_node("FastGelu", ["x", "b"], ["y"], domain=domain)]
    return nodes, [b], [("x", [2, 7, 40])], [("y", [2, 7, 40])]


def write(builder, domain, path):
    nodes, weights, inputs, outputs = builder(domain, np.random.default_rng(7))
    graph = helper.make_graph(
        nodes, builder.__name__,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid(domain, 1)])
    onnx.save(model, path)
    return inputs


def run_minic(minic, ops, path, feeds, backend, folder):
    command = [minic, "run", path, "--custom-ops", ops, "--output-dir", folder]
    command += BACKENDS[backend]
    for name, value in feeds.items():
        np.save(os.path.join(folder, f"{name}.npy"), value)
        command += ["--input", f"{name}={os.path.join(folder, name + '.npy')}"]
    return subprocess.run(command, capture_output=True, text=True)


def check_compiled_for_gpu(minic, ops, path, out):
    """`minic compile --target cuda`: every custom op node launches the plugin's own
    kernel (example_*), with its element count after its buffers. Returns the failures."""
    folder = os.path.join(out, os.path.basename(path) + ".cuda")
    result = subprocess.run([minic, "compile", path, "--custom-ops", ops, "--target", "cuda",
                             "-o", folder], capture_output=True, text=True)
    if result.returncode != 0:
        print(f"  FAIL compile --target cuda: {result.stderr.strip()}")
        return 1
    with open(os.path.join(folder, "cuda_launches.json")) as f:
        launches = [launch for function in json.load(f)["functions"]
                    for launch in function["launches"]]
    model = onnx.load(path)
    ours = [launch for launch in launches if launch["kernel"].startswith("example_")]
    custom = [node for node in model.graph.node if node.domain == "com.example"]
    ok = len(ours) == len(custom) and all(launch["scalars"] for launch in ours)
    kernels = sorted(launch["kernel"] for launch in ours)
    print(f"  {'ok  ' if ok else 'FAIL'} compile --target cuda: {len(custom)} custom op "
          f"node(s) launch {', '.join(kernels) or 'nothing'}")
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minic", required=True)
    parser.add_argument("--ops", required=True, help="the GELU plugin (libminic_gelu_ops.so)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="custom-op-ort-")
    os.makedirs(out, exist_ok=True)
    failures = 0
    for builder in (mlp, conv, lone):
        ours = os.path.join(out, f"{builder.__name__}.example.onnx")
        theirs = os.path.join(out, f"{builder.__name__}.microsoft.onnx")
        inputs = write(builder, "com.example", ours)
        write(builder, "com.microsoft", theirs)
        rng = np.random.default_rng(1)
        feeds = {name: rng.normal(0, 1.5, shape).astype(np.float32) for name, shape in inputs}
        session = onnxruntime.InferenceSession(theirs, providers=["CPUExecutionProvider"])
        expected = session.run(None, feeds)
        print(f"{builder.__name__}: {builder.__doc__}")
        for backend in BACKENDS:
            folder = os.path.join(out, f"{builder.__name__}-{backend}")
            os.makedirs(folder, exist_ok=True)
            result = run_minic(args.minic, args.ops, ours, feeds, backend, folder)
            if backend == "cuda" and "no CUDA driver" in result.stderr:
                print(f"  skip {backend}: no CUDA driver here")
                continue
            if result.returncode != 0:
                print(f"  FAIL {backend}: minic exited with {result.returncode}: "
                      f"{result.stderr.strip()}")
                failures += 1
                continue
            for k, want in enumerate(expected):
                got = np.load(os.path.join(folder, f"output_{k}.npy"))
                error = float(np.max(np.abs(got - want)))
                ok = np.allclose(got, want, rtol=1e-4, atol=1e-4)
                print(f"  {'ok  ' if ok else 'FAIL'} {backend:8} output {k}: max |minic - ort| "
                      f"{error:.2e}")
                failures += 0 if ok else 1
        failures += check_compiled_for_gpu(args.minic, args.ops, ours, out)
    # Without the plugin the same model is refused, naming the ops it lacks.
    path = os.path.join(out, "mlp.example.onnx")
    result = subprocess.run([args.minic, "run", path], capture_output=True, text=True)
    named = "com.example.FastGelu" in result.stderr and "com.example.Gelu" in result.stderr
    if result.returncode != 2 or not named:
        print(f"FAIL without --custom-ops: exit {result.returncode}, {result.stderr.strip()}")
        failures += 1
    else:
        print("ok   without --custom-ops: refused, naming com.example.FastGelu and Gelu")
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
