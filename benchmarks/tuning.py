#!/usr/bin/env python3
"""The autotuner's acceptance measurements, side by side. Course module 5.

    benchmarks/tuning.py [--parts costmodel,search,gemm,resnet50] [--trials 64] [--seeds 1,2]
                         [--gemm-trials 64] [--resnet-budget 15m] [--threads 1]
                         [--minic build/minic] [--out benchmarks/out/tuning] [--reuse]
                         [--tvm-python PATH --tvm-mcpu NAME]

Five parts, each written into OUT/tuning.md (and the raw databases beside it):
  costmodel  the cost model against random search: three single-kernel models (MatMul
             1024^3, BERT's feed-forward MatMul 128x256x1024, a ResNet 3x3 convolution
             with ReLU), each tuned with --trials T by the XGBoost model and by the random
             model, once per seed; the best latency found (a model of several tasks:
             the sum of each task's best), averaged over the seeds.
  search     the evolutionary search against the Bayesian one (`--search bayesian`) on the
             same three models at equal trials: each tuned with --trials T once per seed
             and strategy; the best latency (summed over tasks) at T/2 and T trials,
             averaged over the seeds.
  gemm       MatMul 1024^3: tuned with --gemm-trials, then benchmarks/run on it with and
             without the records (minic against ONNX Runtime, same rounds), then minic
             without and with the records alternated (A/B); and how many trials it took
             to get within 10% of the final best.
  resnet50   the ResNet-50 light model tuned for --resnet-budget, then benchmarks/run with
             and without the records, and the A/B runs.
  tvm        minic against TVM's MetaSchedule at equal trials (--trials) on MatMul 1024^3
             and ResNet-50's first 3x3 convolution: each tuner's trials to within 10% of
             its best, then each best kernel timed again (minic bench --records; TVM's time evaluator). Not part
             of the default parts: it needs a Python with TVM (--tvm-python, made as
             benchmarks/README.md says) and the CPU's LLVM name (--tvm-mcpu).
Times come from `minic tune` (each candidate: median of timed runs in a child process)
and from benchmarks/run (alternating minic and ORT child processes).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "models"))

import suite  # noqa: E402

LIGHT = suite.light_models_dir()


def log(message):
    print(message, flush=True)


def read_records(path):
    """The search's records of a database: its first timings, without the finalists timed
    again at the end (`"remeasured": true`), which repeat trials already there."""
    with open(path) as db:
        records = [json.loads(line) for line in db if line.strip()]
    return [r for r in records if not r.get("remeasured")]


def best_us(records, count=None):
    """The model's kernels at their best: the sum over its tasks (workloads) of each one's
    fastest time among the first `count` records (all when None), in the order they were
    measured; NaN while a task has no successful record yet."""
    best = {}
    for record in records[:count]:
        if record["median_us"] > 0:
            key = record["workload"]
            best[key] = min(best.get(key, float("inf")), record["median_us"])
    if set(best) != {record["workload"] for record in records}:
        return float("nan")
    return sum(best.values())


def default_us(records):
    """The sum over the model's tasks of their default schedule's time."""
    times = [r["median_us"] for r in records if not r["decisions"]]
    return sum(times) if times else float("nan")


def trials_to_within(records, fraction):
    """The number of trials after which the best so far is within `fraction` of the final."""
    final = best_us(records)
    for count in range(1, len(records) + 1):
        if best_us(records, count) <= final * (1 + fraction):
            return count
    return len(records)


def tune(options, model, db, extra):
    if options.reuse and os.path.exists(db):
        log(f"reusing {db}")
        return read_records(db)
    if os.path.exists(db):
        os.remove(db)
    command = [options.minic, "tune", model, "-o", db, "--threads", str(options.threads)]
    command += extra
    log("$ " + " ".join(command))
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return read_records(db)


def build_models(models_dir):
    """The single-kernel models of the cost-model comparison: name -> path."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    os.makedirs(models_dir, exist_ok=True)
    paths = {}
    for name, mkn in (("matmul_1024", (1024, 1024, 1024)), ("bert_ffn", (128, 256, 1024))):
        bench = suite.Benchmark(name, "gemm", "gemm", mkn=mkn)
        paths[name] = suite.build_gemm_model(bench, models_dir)
    weights = np.random.default_rng(3).uniform(-0.1, 0.1, (64, 64, 3, 3)).astype(np.float32)
    bias = np.random.default_rng(4).uniform(-0.1, 0.1, (64,)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["X", "W", "B"], ["C"], name="conv", pads=[1, 1, 1, 1],
                          kernel_shape=[3, 3]),
         helper.make_node("Relu", ["C"], ["Y"], name="relu")], "conv3x3",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 64, 56, 56])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 64, 56, 56])],
        [numpy_helper.from_array(weights, "W"), numpy_helper.from_array(bias, "B")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    paths["conv3x3_64"] = os.path.join(models_dir, "conv3x3_64.onnx")
    onnx.save(model, paths["conv3x3_64"])
    return paths


def part_costmodel(options, out, lines):
    models = build_models(os.path.join(out, "models"))
    seeds = [int(s) for s in options.seeds.split(",")]
    lines += ["## The cost model against random search", "",
              f"`minic tune MODEL --trials {options.trials} --cost-model M --seed S "
              f"--threads {options.threads}`, seeds {options.seeds}; best latency found "
              "(a model's: the sum over its tasks of each one's best; mean over the seeds), "
              "and the trials until within 10% of each run's final best (mean).", "",
              "| task | default us | random: best us | trials to 10% | xgboost: best us "
              "| trials to 10% | random / xgboost |", "|---|---|---|---|---|---|---|"]
    for name, path in models.items():
        results = {}
        default = []
        for model in ("random", "xgboost"):
            bests, reach = [], []
            for seed in seeds:
                db = os.path.join(out, f"cm_{name}_{model}_s{seed}.jsonl")
                records = tune(options, path, db, ["--trials", str(options.trials), "--seed",
                                                   str(seed), "--cost-model", model])
                bests.append(best_us(records))
                reach.append(trials_to_within(records, 0.10))
                default.append(default_us(records))
            results[model] = (statistics.mean(bests), statistics.mean(reach))
        lines.append(f"| {name} | {statistics.median(default):.1f} | "
                     f"{results['random'][0]:.1f} | {results['random'][1]:.0f} | "
                     f"{results['xgboost'][0]:.1f} | {results['xgboost'][1]:.0f} | "
                     f"{results['random'][0] / results['xgboost'][0]:.3f} |")
        log(lines[-1])
    lines.append("")


def part_search(options, out, lines):
    models = build_models(os.path.join(out, "models"))
    seeds = [int(s) for s in options.seeds.split(",")]
    half = options.trials // 2
    lines += ["## The evolutionary search against the Bayesian search", "",
              f"`minic tune MODEL --trials {options.trials} --search S --seed N --finalists 0 "
              f"--threads {options.threads}`, seeds {options.seeds}. A model's time is the sum "
              "over its tasks of each task's best time: among the first "
              f"{half} trials and among all {options.trials} (mean over the seeds); then the "
              "trials until within 10% of each run's final best (mean), and the seconds a "
              "run took (mean).", "",
              f"| model | tasks | default us | evolutionary: best at {half} | at "
              f"{options.trials} | trials to 10% | s | bayesian: best at {half} | at "
              f"{options.trials} | trials to 10% | s | bayesian / evolutionary at "
              f"{options.trials} |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, path in models.items():
        cells = []
        default = []
        finals = {}
        for search in ("evolutionary", "bayesian"):
            at_half, at_all, reach, seconds = [], [], [], []
            for seed in seeds:
                db = os.path.join(out, f"search_{name}_{search}_s{seed}.jsonl")
                start = time.time()
                records = tune(options, path, db, ["--trials", str(options.trials), "--seed",
                                                   str(seed), "--search", search,
                                                   "--finalists", "0"])
                seconds.append(time.time() - start)
                tasks = len({r["workload"] for r in records})
                at_half.append(best_us(records, half))
                at_all.append(best_us(records))
                reach.append(trials_to_within(records, 0.10))
                default.append(default_us(records))
            finals[search] = statistics.mean(at_all)
            cells += [f"{statistics.mean(at_half):.1f}", f"{finals[search]:.1f}",
                      f"{statistics.mean(reach):.0f}",
                      "-" if options.reuse else f"{statistics.mean(seconds):.0f}"]
        lines.append(f"| {name} | {tasks} | {statistics.median(default):.1f} | " +
                     " | ".join(cells) +
                     f" | {finals['bayesian'] / finals['evolutionary']:.3f} |")
        log(lines[-1])
    lines.append("")


def side_by_side(options, pattern, records, out_dir):
    """benchmarks/run on one benchmark, with the records or without; its summary."""
    command = [sys.executable, os.path.join(HERE, "run"), "--models", pattern, "--threads",
               str(options.threads), "--minic", options.minic, "--out", out_dir]
    if records:
        command += ["--records", records]
    log("$ " + " ".join(command))
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out_dir, "results.json")) as f:
        return json.load(f)["benchmarks"][0]["summary"]


def bench_median(options, model, records, json_path, warmup=3, repeat=10):
    command = [options.minic, "bench", model, "--threads", str(options.threads), "--warmup",
               str(warmup), "--repeat", str(repeat), "--json", json_path]
    if records:
        command += ["--records", records]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    with open(json_path) as f:
        return json.load(f)["median_ms"]


def ab_rows(options, model, db, out, name, rounds=5):
    """minic with the default schedules (A) and with the records (B), alternated A B A B
    in child processes: the paired comparison of tuned against untuned."""
    default, tuned = [], []
    for index in range(rounds):
        default.append(bench_median(options, model, "", os.path.join(out, f"{name}_a{index}.json")))
        tuned.append(bench_median(options, model, db, os.path.join(out, f"{name}_b{index}.json")))
    ratios = [b / a for a, b in zip(default, tuned)]
    return [f"A/B, {rounds} rounds of `minic bench --warmup 3 --repeat 10` alternating without "
            f"and with `--records`: default {statistics.median(default):.3f} ms, tuned "
            f"{statistics.median(tuned):.3f} ms, tuned/default "
            f"{statistics.median(ratios):.3f} (median of the paired rounds; per round "
            + ", ".join(f"{r:.3f}" for r in ratios) + ").", ""]


def compare_rows(options, pattern, db, out, name):
    rows = []
    for label, records in (("default schedules", ""), ("tuned (--records)", db)):
        summary = side_by_side(options, pattern, records, os.path.join(out, f"{name}_{label[:5]}"))
        gflops = summary["minic"].get("gflops")
        rows.append(f"| {label} | {summary['minic']['median_ms']:.3f} | "
                    f"{summary['ort']['median_ms']:.3f} | {summary['ratio']:.3f} | "
                    + (f"{gflops:.1f} |" if gflops else "- |"))
    return rows


def part_gemm(options, out, lines):
    models = build_models(os.path.join(out, "models"))
    db = os.path.join(out, "gemm_1024.jsonl")
    records = tune(options, models["matmul_1024"], db, ["--trials", str(options.gemm_trials)])
    lines += ["## MatMul 1024^3, fp32", "",
              f"`minic tune matmul_1024.onnx --trials {options.gemm_trials} --threads "
              f"{options.threads}`: default schedule {default_us(records):.1f} us, best "
              f"{best_us(records):.1f} us, within 10% of the final best after "
              f"{trials_to_within(records, 0.10)} trials. Then `benchmarks/run --models "
              f"'^matmul_1024$' --threads {options.threads} [--records DB]`:", "",
              "| minic | minic ms | ORT ms | minic/ORT | minic GFLOP/s |", "|---|---|---|---|---|"]
    lines += compare_rows(options, "^matmul_1024$", db, out, "gemm")
    lines.append("")
    lines += ab_rows(options, models["matmul_1024"], db, out, "gemm")


def part_resnet50(options, out, lines):
    model = os.path.join(LIGHT, "light_resnet50.onnx")
    db = os.path.join(out, "resnet50.jsonl")
    records = tune(options, model, db, ["--budget", options.resnet_budget, "--trials",
                                        "100000"])
    lines += ["## ResNet-50 (light model)", "",
              f"`minic tune light_resnet50.onnx --budget {options.resnet_budget} --threads "
              f"{options.threads}`: {len(records)} trials over "
              f"{len({r['workload'] for r in records})} tasks. Then `benchmarks/run --models "
              f"'^resnet50$' --threads {options.threads} [--records DB]`:", "",
              "| minic | minic ms | ORT ms | minic/ORT | |", "|---|---|---|---|---|"]
    lines += compare_rows(options, "^resnet50$", db, out, "resnet50")
    lines.append("")
    lines += ab_rows(options, model, db, out, "resnet50")


def trials_to_reach(latencies, bar):
    """The number of trials after which the best so far is at or under `bar` (None: never)."""
    best = float("inf")
    for count, latency in enumerate(latencies, start=1):
        if latency > 0:
            best = min(best, latency)
        if best <= bar:
            return count
    return None


def check_against_interpreter(options, model, records, out_dir):
    """Runs `model` with `records` and compares its outputs with the reference interpreter's."""
    reference = os.path.join(out_dir, "reference")
    subprocess.run([options.minic, "run", model, "--backend", "interp", "--output-dir",
                    reference], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([options.minic, "run", model, "--records", records, "--threads",
                    str(options.threads), "--compare", reference], check=True,
                   stdout=subprocess.DEVNULL)


def run_tvm_tune(options, name, out):
    """benchmarks/tvm_tune.py on one task under --tvm-python: its result (JSON)."""
    result_path = os.path.join(out, f"tvm_{name}.json")
    if not (options.reuse and os.path.exists(result_path)):
        command = [options.tvm_python, os.path.join(HERE, "tvm_tune.py"), name, "--trials",
                   str(options.trials), "--threads", str(options.threads), "--mcpu",
                   options.tvm_mcpu, "--out", result_path]
        log("$ " + " ".join(command))
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL,
                       env=dict(os.environ, TVM_NUM_THREADS=str(options.threads)))
    with open(result_path) as f:
        return json.load(f)


def part_tvm(options, out, lines):
    if not options.tvm_python or not options.tvm_mcpu:
        raise SystemExit("tuning.py: the tvm part needs --tvm-python and --tvm-mcpu")
    models = build_models(os.path.join(out, "models"))
    trials = options.trials
    lines += ["## minic and TVM's MetaSchedule at equal trials", "",
              f"Each tuner gets {trials} trials on {options.threads} thread(s), timing its "
              f"candidates with warm caches (`minic tune MODEL --trials {trials} --warm-cache`; "
              f"`benchmarks/tvm_tune.py TASK --trials {trials}`: `meta_schedule.tune_tir`, "
              "evolutionary search, XGBoost, rounds of 16). The best schedules of each are "
              "then timed again: minic's by `minic bench --records` on the task's ONNX model "
              "(median of 30 runs after 5 warm-ups), TVM's by its time evaluator (median of "
              "15 repeats of 5 runs). Both outputs are checked: minic's with the records "
              "against the reference interpreter (`minic run --compare`), TVM's against NumPy.",
              "", "| task | minic default ms | minic tuned ms | TVM tuned ms | minic / TVM "
              "| minic tasks | minic: trials to 10% | TVM: trials to 10% "
              "| tuning s (minic, TVM) |", "|---|---|---|---|---|---|---|---|---|"]
    for name in ("matmul_1024", "conv3x3_64"):
        db = os.path.join(out, f"tvm_{name}_minic.jsonl")
        start = time.time()
        records = tune(options, models[name], db, ["--trials", str(trials), "--warm-cache"])
        minic_s = "-" if options.reuse else f"{time.time() - start:.0f}"
        check_against_interpreter(options, models[name], db, os.path.join(out, f"tvm_{name}"))
        default_ms = bench_median(options, models[name], "",
                                  os.path.join(out, f"tvm_{name}_a.json"), warmup=5, repeat=30)
        tuned_ms = bench_median(options, models[name], db,
                                os.path.join(out, f"tvm_{name}_b.json"), warmup=5, repeat=30)
        tvm_result = run_tvm_tune(options, name, out)
        tvm_curve = tvm_result["trial_us"]
        tvm_best = min(t for t in tvm_curve if t > 0)
        tasks = len({r["workload"] for r in records})
        # With several tasks the trials are shared among them: no one curve to read.
        minic_reach = trials_to_within(records, 0.10) if tasks == 1 else "-"
        tvm_ms = tvm_result["median_ms"]
        lines.append(f"| {name} | {default_ms:.3f} | {tuned_ms:.3f} | {tvm_ms:.3f} "
                     f"| {tuned_ms / tvm_ms:.3f} | {tasks} | {minic_reach} "
                     f"| {trials_to_reach(tvm_curve, tvm_best * 1.10)} "
                     f"| {minic_s}, {tvm_result['tuning_s']:.0f} |")
        log(lines[-1])
    lines += ["", f"TVM {tvm_result['tvm']} (`--mcpu {options.tvm_mcpu}`).", ""]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default="costmodel,search,gemm,resnet50")
    parser.add_argument("--trials", type=int, default=64)
    parser.add_argument("--seeds", default="1,2")
    parser.add_argument("--gemm-trials", type=int, default=64)
    parser.add_argument("--resnet-budget", default="15m")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--minic", default=os.path.join(REPO, "build", "minic"))
    parser.add_argument("--out", default=os.path.join(HERE, "out", "tuning"))
    parser.add_argument("--tvm-python", default="",
                        help="tvm: a Python interpreter that imports tvm")
    parser.add_argument("--tvm-mcpu", default="",
                        help="tvm: the CPU's LLVM name (`llc --version`: Host CPU)")
    parser.add_argument("--reuse", action="store_true",
                        help="search, gemm, resnet50, tvm: use the databases (and TVM "
                             "results) already in OUT, do not tune again")
    options = parser.parse_args()
    options.minic = os.path.abspath(options.minic)
    os.makedirs(options.out, exist_ok=True)
    lines = ["# Autotuning measurements", ""]
    parts = {"costmodel": part_costmodel, "search": part_search, "gemm": part_gemm,
             "resnet50": part_resnet50, "tvm": part_tvm}
    for part in options.parts.split(","):
        parts[part](options, options.out, lines)
    report = os.path.join(options.out, f"tuning_{options.parts.replace(',', '_')}.md")
    with open(report, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    log(f"wrote {report}")


if __name__ == "__main__":
    main()
