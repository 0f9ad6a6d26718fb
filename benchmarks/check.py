"""The check before timing: minic's outputs must agree with ONNX Runtime's. Course module 8.

A benchmark of wrong answers measures nothing, so each model first runs once through
`minic run` (the backend and passes that will be timed) and through ONNX Runtime on the
same input files, and every output must agree within |minic - ort| <= atol + rtol * |ort|
(rtol 1e-3, atol 1e-4, as in the model tests, whose comparison this reuses:
tests/models/compare_with_ort.py). An int8 model is compared by the cosine similarity of
each output to ONNX Runtime's, which must be at least 0.999, or, where ONNX Runtime's
optimised and unoptimised runs of the model agree less, minic's distance (1 - cosine) to
the nearer of the two at most twice theirs to each other: two correct implementations
of a QDQ model round differently near a quantisation step, and the difference moves
through the layers (ONNX Runtime's own integer kernels and its unoptimised run of the same
model differ by several output steps; tests/models/qdq_ort.py), the more the deeper the
model (on the 12 layers of BERT-base quantised by ONNX Runtime, its two runs are 0.994
alike). The two check runs also
give a first estimate of how long one run takes, from which `benchmarks/run` picks the
number of timed runs.
"""

import contextlib
import io
import os
import re
import time

import numpy as np

from compare_with_ort import compare, cosine_similarity  # the model tests' comparisons
from measure import ChildFailed, log_tail, run_child

RTOL = 1e-3
ATOL = 1e-4
MIN_COSINE = 0.999  # int8 models


def compare_quantized(names, expected, actual, unoptimised):
    """Prints one line per output (max abs err, cosine similarity); True when every cosine
    similarity is at least MIN_COSINE, or, where ONNX Runtime's run `expected` and its
    unoptimised run `unoptimised` are less alike, when minic's distance (1 - cosine) to the
    nearer of them is at most twice theirs to each other."""
    ok = len(actual) == len(expected)
    for name, want, got, other in zip(names, expected, actual, unoptimised):
        cosine = cosine_similarity(want, got)
        ort_runs = cosine_similarity(want, other)
        required = MIN_COSINE
        bound = ""
        if ort_runs < MIN_COSINE:
            required = min(MIN_COSINE, 1 - 2 * (1 - ort_runs))
            cosine = max(cosine, cosine_similarity(other, got))
            bound = (f" (to the nearer of ONNX Runtime's two runs, which are {ort_runs:.6f} "
                     f"alike: at least {required:.6f})")
        good = got.shape == want.shape and cosine >= required
        print(f"  {name}: {want.dtype}{list(want.shape)} max abs err "
              f"{float(np.max(np.abs(got - want))):.3g}, cosine similarity {cosine:.6f}"
              f"{bound} {'ok' if good else 'FAIL'}")
        ok = ok and good
    return ok


def run_minic(minic, bench, inputs, options, work_dir, timeout):
    """`minic run` on the input files; returns (outputs, the run time minic printed)."""
    out_dir = os.path.join(work_dir, "minic_outputs")
    os.makedirs(out_dir, exist_ok=True)
    for name in os.listdir(out_dir):
        os.remove(os.path.join(out_dir, name))
    command = [minic, "run", bench.path, "--backend", options.backend, "--passes",
               options.passes, "--output-dir", out_dir]
    if options.records:
        command += ["--records", options.records]
    for name, path in inputs.items():
        command += ["--input", f"{name}={path}"]
    log_path = os.path.join(work_dir, "check_minic.log")
    run_child(command, log_path, timeout)
    with open(log_path) as f:
        found = re.search(r"^ran .* in ([0-9.]+) ms$", f.read(), re.MULTILINE)
    outputs = []
    while os.path.exists(os.path.join(out_dir, f"output_{len(outputs)}.npy")):
        outputs.append(np.load(os.path.join(out_dir, f"output_{len(outputs)}.npy")))
    return outputs, float(found.group(1)) if found else None


def run_ort(bench, inputs, threads, optimise=True):
    """ONNX Runtime on the same files, every graph optimisation on (or, `optimise` false,
    none: a QDQ model's float ops run as written); returns (output names, outputs, the time
    of one run in ms, not counting the session)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimise
                                        else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only: no warnings about unused initializers
    session = ort.InferenceSession(bench.path, options, providers=["CPUExecutionProvider"])
    feeds = {name: np.load(path) for name, path in inputs.items()}
    start = time.perf_counter()
    outputs = session.run(None, feeds)
    milliseconds = (time.perf_counter() - start) * 1e3
    return [o.name for o in session.get_outputs()], outputs, milliseconds


def check_outputs(minic, bench, inputs, options, work_dir, timeout):
    """Returns {"status": "ok" | "mismatch" | "unsupported" | "error", "detail": text,
    "minic_ms": ..., "ort_ms": ...}. Unsupported: minic does not have an op the model
    uses. Error: minic failed otherwise."""
    try:
        actual, minic_ms = run_minic(minic, bench, inputs, options, work_dir, timeout)
    except ChildFailed as failure:
        log = log_tail(os.path.join(work_dir, "check_minic.log"), lines=20)
        if "does not support" in log:
            ops = log.split("does not support", 1)[1]
            return {"status": "unsupported", "detail": "minic does not support" + ops}
        return {"status": "error", "detail": str(failure)}
    names, expected, ort_ms = run_ort(bench, inputs, options.threads)
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        if bench.source == "int8":
            unoptimised = run_ort(bench, inputs, options.threads, optimise=False)[1]
            ok = compare_quantized(names, expected, actual, unoptimised)
        else:
            ok = compare(names, expected, actual, RTOL, ATOL)
    return {"status": "ok" if ok else "mismatch", "detail": text.getvalue().strip(),
            "minic_ms": minic_ms, "ort_ms": ort_ms}
