"""Schedules, loop passes and the tuner from Python (python/minic/schedule.py, tune.py).

Each schedule is checked on the loop interpreter against the function as written, and the
tuned model against ONNX Runtime.
"""

import os

import numpy as np
import pytest

import minic
from conftest import MLP, ROOT, ort_run

# A 64x64x64 GEMM as lowered: one block C, loops i, j, k.
with open(os.path.join(ROOT, "tests", "lit", "schedule", "bench.mloop")) as _file:
    GEMM = _file.read()


def test_a_schedule_step_by_step():
    sch = minic.Schedule(GEMM)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    io, ii = sch.split(i, [-1, 16])
    jo, ji = sch.split(j, [-1, 16])
    sch.reorder(io, jo, k, ii, ji)
    sch.vectorize(ji)
    assert sch.trace.splitlines()[-2:] == ["reorder(i_0, j_0, k, i_1, j_1)", "vectorize(j_1)"]
    assert "for k in 0..64 {\n        for i.1 in 0..16 {\n          vectorized for j.1 in 0..16" \
        in sch.func
    sch.check()  # the same results on the loop interpreter
    # The trace replays on a fresh schedule to the same function.
    again = minic.Schedule(GEMM)
    again.replay(sch.trace)
    assert again.func == sch.func


def test_the_loop_interpreter_computes_the_gemm():
    a, b = np.random.default_rng(0).normal(size=(2, 64, 64)).astype(np.float32)
    _, _, c = minic._minic.run_loop(GEMM, [a, b, np.zeros((64, 64), np.float32)])
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_bad_primitives_are_errors():
    sch = minic.Schedule(GEMM)
    with pytest.raises(AttributeError, match="no schedule primitive 'tile_everything'"):
        sch.tile_everything
    with pytest.raises(minic.Error, match="split"):
        sch.split(minic.Ref("nowhere"), [4])
    with pytest.raises(minic.Error, match="block"):
        sch.get_block("D")
    with pytest.raises(minic.Error, match="<loop IR>"):
        minic.Schedule("func @broken(")


def test_the_default_schedule_as_a_trace_and_a_wrong_schedule_caught():
    sch = minic.Schedule(GEMM)
    sch.replay(sch.default_trace())
    sch.check()
    before, after = sch.time(threads=1)
    assert before > 0 and after > 0  # measured, not judged
    # A function that computes something else is caught (what check() compares).
    wrong = GEMM.replace("C[vi, vj] + A[vi, vk]", "C[vi, vj] - A[vi, vk]")
    minic.compare_functions(GEMM, sch.func)
    with pytest.raises(minic.Error, match="C differs"):
        minic.compare_functions(GEMM, wrong)


def test_loop_passes_by_name():
    text = minic.run_loop_passes(GEMM, ["simplify"])
    assert "func @gemm" in text
    assert "simplify" in minic.passes("loop")
    with pytest.raises(minic.Error, match="no-such-pass"):
        minic.run_loop_passes(GEMM, ["no-such-pass"])


def test_tune_writes_records_that_compile_uses(tmp_path, ort):
    records = tmp_path / "mlp.jsonl"
    rounds = []
    tasks = minic.tune(MLP, records, trials=6, per_round=3, finalists=0, compile_jobs=1,
                       progress=rounds.append)
    assert rounds and rounds[-1]["trials"] <= 6 + 3
    assert tasks and all(t.trials >= 0 for t in tasks)
    assert records.exists() and records.read_text().count("\n") >= 1
    compiled = minic.compile(MLP, records=records, threads=1)
    assert compiled.stats["records"] == str(records)
    x = minic.load(MLP).random_inputs(seed=6)["input"]
    (expected,) = ort_run(ort, MLP, {"input": x})
    np.testing.assert_allclose(compiled(x), expected, rtol=1e-4, atol=1e-6)
    with pytest.raises(minic.Error, match="exists"):
        minic.tune(MLP, records, trials=1, progress=False)
