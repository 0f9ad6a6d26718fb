#!/usr/bin/env python3
"""Smoke test of benchmarks/run: one short round on the MLP and the smallest GEMM writes
report.md, results.json (and chart.png where matplotlib is installed) with the expected
structure. Course module 8. Nothing about the times is asserted: they depend on the
machine. ctest runs it as benchmarks/smoke (label `benchmarks`).

    smoke_test.py --minic BUILD/minic --out DIR
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

STATISTICS = ["median_ms", "mean_ms", "min_ms", "p90_ms", "p99_ms", "samples_ms",
              "peak_rss_mb"]


def expect(condition, message):
    if not condition:
        sys.exit(f"FAIL: {message}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minic", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    command = [sys.executable, os.path.join(HERE, "run"), "--quick", "--models",
               "^mlp$,^matmul_256$", "--rounds", "1", "--repeat", "2", "--out", args.out,
               "--minic", args.minic]
    print("$ " + " ".join(command), flush=True)
    subprocess.run(command, check=True)

    with open(os.path.join(args.out, "results.json")) as f:
        results = json.load(f)
    for key in ("date", "command", "cpu", "cores", "threads"):
        expect(key in results["meta"], f"results.json meta has no '{key}'")
    expect(results["meta"]["threads"] == 1, "threads is not 1")
    names = [b["name"] for b in results["benchmarks"]]
    expect(names == ["mlp", "matmul_256"], f"benchmarks run: {names}")
    for bench in results["benchmarks"]:
        expect(bench["check"]["status"] == "ok", f"{bench['name']}: {bench['check']}")
        expect(len(bench["rounds"]) == 1, f"{bench['name']}: not one round")
        one = bench["rounds"][0]
        for side in ["minic", "ort"] + (["numpy"] if bench["kind"] == "gemm" else []):
            for key in STATISTICS:
                expect(key in one[side], f"{bench['name']}: {side} has no '{key}'")
            expect(len(one[side]["samples_ms"]) == 2, f"{bench['name']}: {side} samples")
        for key in ("threads", "compile_ms"):
            expect(key in one["minic"], f"{bench['name']}: minic has no '{key}'")
        expect("session_ms" in one["ort"], f"{bench['name']}: ORT has no session_ms")
        expect(bench["summary"]["ratio"] > 0, f"{bench['name']}: no ratio")
    gemm = results["benchmarks"][1]["summary"]
    expect(all("gflops" in gemm[s] for s in ("minic", "ort", "numpy")), "GEMM GFLOP/s")

    with open(os.path.join(args.out, "report.md")) as f:
        report = f.read()
    for text in ("## Models", "| mlp |", "## GEMM", "| 256x256x256 |", "**Command**"):
        expect(text in report, f"report.md lacks '{text}'")
    try:
        import matplotlib  # noqa: F401
        expect(os.path.exists(os.path.join(args.out, "chart.png")), "no chart.png")
    except ImportError:
        print("matplotlib is not installed: chart.png not expected")
    print("PASS")


if __name__ == "__main__":
    main()
