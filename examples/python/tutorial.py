#!/usr/bin/env python3
"""minic from Python, step by step. Course module 8: docs/module8-deployment.md#5-minic-from-python.

Run it with the package on the path, as the test suite does:

    PYTHONPATH=build/python python3 examples/python/tutorial.py

Each step prints what it shows and checks what it claims (outputs against ONNX Runtime,
schedules on the loop interpreter); timings are printed, never judged.
"""

# %% 1. Load a model and look at it: ResNet-18 with random weights, built for the purpose.
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort

import minic

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
scratch = tempfile.mkdtemp()
subprocess.run([sys.executable, os.path.join(ROOT, "examples", "models", "build_models.py"),
                "--out", scratch, "resnet18"], check=True, stdout=subprocess.DEVNULL)
path = os.path.join(scratch, "resnet18.onnx")

model = minic.load(path)
print(model.inspect())

# %% 2. The graph passes, one at a time or the whole pipeline.
folded = model.run_pass("fold-batchnorm")  # one pass: BatchNormalization into the Conv
optimized = model.optimize()                # the default pipeline
print(f"\n{model.num_nodes} nodes as imported, {folded.num_nodes} after fold-batchnorm, "
      f"{optimized.num_nodes} after the default pipeline "
      f"({', '.join(minic.default_pipeline()[:4])}, ...)")
assert folded.op_counts.get("BatchNormalization", 0) == 0

# %% 3. Compile and run; ONNX Runtime on the same file and inputs, side by side.
compiled = minic.compile(model, threads=1)
print(f"\n{compiled!r}")
feeds = model.random_inputs(seed=0)  # {input name: numpy array}

options = ort.SessionOptions()
options.intra_op_num_threads = 1
session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])

ours = compiled.run(feeds)            # {output name: array}, like session.run
theirs = session.run(None, feeds)
for (name, actual), expected in zip(ours.items(), theirs):
    np.testing.assert_allclose(actual, expected, rtol=1e-3, atol=1e-3)
    print(f"output {name}: max abs difference to ONNX Runtime "
          f"{np.max(np.abs(actual - expected)):.2e}")

# %% 4. Where the time goes: each kernel of one run.
_, steps = compiled.profile(**feeds)
print("\nslowest kernels:")
for step in sorted(steps, key=lambda s: -s.ms)[:5]:
    print(f"  {step.ms:7.3f} ms  {step.kernel} ({step.op})")

# %% 5. Timing, as `minic bench` does, beside ONNX Runtime's time on the same inputs.
result = compiled.bench(**feeds, warmup=2, repeat=10)
ort_samples = []
for i in range(12):
    start = time.perf_counter()
    session.run(None, feeds)
    if i >= 2:
        ort_samples.append((time.perf_counter() - start) * 1e3)
print(f"\nminic {result}")
print(f"ONNX Runtime median {np.median(ort_samples):.3f} ms "
      f"(minic/ORT {result.median_ms / np.median(ort_samples):.2f}; one thread each)")

# %% 6. A kernel's schedule by hand: the loop IR, a primitive at a time, checked.
# Compiled without schedules or loop passes, the kernels are as lowered (module 3).
plain = minic.compile(os.path.join(ROOT, "examples", "models", "mlp.onnx"),
                      schedule=False, loop_passes=[], threads=1)
name, kernel = next(iter(plain.kernels.items()))
sch = minic.Schedule(kernel)
sch.replay(sch.default_trace())   # start from minic's default schedule, as a trace
print(f"\nthe default schedule of {name}:\n{sch.trace}")
sch.check()                       # the same results as the kernel as lowered
before, after = sch.time()
print(f"{name}: {before:.1f} us as lowered, {after:.1f} us scheduled")

# %% 7. Tuning, then compiling with the records.
records = os.path.join(scratch, "mlp.jsonl")
mlp = os.path.join(ROOT, "examples", "models", "mlp.onnx")
tasks = minic.tune(mlp, records, trials=8, per_round=4, finalists=0)
for task in (t for t in tasks if t.trials > 0):
    print(f"  {task.name}: default {task.default_us:.1f} us, best {task.best_us:.1f} us")
tuned = minic.compile(mlp, records=records, threads=1)
x = minic.load(mlp).random_inputs(seed=1)["input"]
np.testing.assert_allclose(tuned(x), plain(x), rtol=1e-4, atol=1e-6)
print(f"tuned: {tuned.stats['tuned_kernels']} of {tuned.stats['compiled_kernels']} "
      "kernels from the records; outputs as before")

# %% 8. A custom operator from Python: a reference kernel in numpy, a compute rule as an
# expression, and it fuses into the GEMM before it
# (docs/module8-deployment.md#6-custom-operators).
import onnx
from onnx import TensorProto, helper, numpy_helper

from minic import expr

minic.register_op("com.tutorial.Swish",
                  kernel=lambda x, beta=1.0: x / (1 + np.exp(-beta * x)),
                  compute=lambda x, beta=1.0: x * expr.sigmoid(beta * x))
weights = numpy_helper.from_array(np.random.default_rng(2).normal(size=(32, 16))
                                  .astype(np.float32), "w")
graph = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["m"]),
     helper.make_node("Swish", ["m"], ["y"], domain="com.tutorial", beta=1.5)],
    "swish", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 32])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])], [weights])
swish_path = os.path.join(scratch, "swish.onnx")
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                  helper.make_opsetid("com.tutorial", 1)]),
          swish_path)
swish = minic.compile(swish_path, threads=1)
x = np.random.default_rng(3).normal(size=(4, 32)).astype(np.float32)
m = x @ numpy_helper.to_array(weights)
np.testing.assert_allclose(swish(x), m / (1 + np.exp(-1.5 * m)), rtol=1e-4, atol=1e-5)
print(f"\ncom.tutorial.Swish: {swish!r}")

# %% 9. An external back end: the MLP's GEMMs on the simulated toy NPU
# (docs/module6-llvm-cpu.md#bring-your-own-codegen).
npu = minic.compile(mlp, threads=1, backends=["toy-npu"])
x = minic.load(mlp).random_inputs(seed=4)["input"]
y, npu_steps = npu.profile(x)
np.testing.assert_allclose(y, plain(x), rtol=1e-4, atol=1e-6)
print("\nwhere each kernel ran:",
      ", ".join(f"{s.kernel} ({s.backend or 'minic'})" for s in npu_steps))
print(npu.backend_reports[0])
shutil.rmtree(scratch)
