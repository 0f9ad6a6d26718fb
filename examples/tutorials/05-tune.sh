#!/usr/bin/env bash
# Tutorial 5 (course module 5): auto-tuning a model and using what it found.
#
# `minic tune` splits a model into tasks (its distinct kernels), searches each task's space
# of schedules with an evolutionary search ranked by an XGBoost cost model, times the best
# candidates on this machine and appends every measurement to a JSON Lines database.
# `--records DB.jsonl` then gives each kernel the fastest schedule found for it. This
# tutorial tunes the MLP with a handful of trials (a real run uses hundreds), reads the
# database, runs the model with the records (same outputs as without), resumes the tuning,
# draws the tuning curve and tunes again with the Bayesian search. Times differ from run to
# run and machine to machine; the checks below look only at what does not.
#
# Run it from the repository root after building:
#   examples/tutorials/05-tune.sh [path/to/minic]
# It also runs as a test (ctest -R tutorials), so every command shown here works.
set -euo pipefail
cd "$(dirname "$0")/../.."
minic="${1:-build/minic}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
model=examples/models/mlp.onnx

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@" | tee "$work/out.txt"; }
expect() {  # expect PATTERN FILE: the output must contain PATTERN
  grep -q -- "$1" "$2" || { echo "expected '$1' in the output above" >&2; exit 1; }
}

# 1. Tune: 6 trials, 3 a round. The task scheduler gives each task a round in turn; a
#    task's first round also times its default schedule (module 4's rules). A line per
#    round. At the end each task's fastest schedules and its default one, the finalists,
#    are timed again in turns (a lucky first timing does not win), then a table of tasks
#    from those timings: default and tuned latency, speed-up, GFLOP/s.
step "$minic" tune "$model" -o "$work/db.jsonl" --trials 6 --per-round 3 --seed 1
expect "4 tasks (4 kernels)" "$work/out.txt"
expect "round   2  task 2/4 gemm_relu_1" "$work/out.txt"
expect "6 finalists timed again in turns" "$work/out.txt"
expect "records in" "$work/out.txt"

# 2. The database: one JSON object a line. The second record is a candidate of the
#    search: its decisions (a value for every knob of the task's space) and the trace
#    they give, which replays on the lowered kernel.
printf '\n\033[1m$ %s\033[0m\n' "sed -n 2p db.jsonl | python3 -m json.tool"
sed -n 2p "$work/db.jsonl" | python3 -m json.tool | tee "$work/out.txt"
expect '"decisions": {' "$work/out.txt"
expect '"gemm.inner"' "$work/out.txt"

# 3. What did tuning find? A line per workload: trials, the latency of the schedule a
#    model will run (the fastest finalist), the default's. Each task had 3 trials, so all
#    3 were finalists: 6 records of the search and 6 of the finalists' second timings.
step "$minic" db show "$work/db.jsonl"
expect "12 records (6 of them finalists timed again), 2 workloads" "$work/out.txt"

# 4. Keep only the best record of each workload: the small file to ship with a model.
step "$minic" db best "$work/db.jsonl" -o "$work/best.jsonl"
expect "wrote 2 best records (of 12)" "$work/out.txt"

# 5. Run the model without records (default schedules), keeping its outputs, then with
#    the best records: one line says how many kernels used a record, and the outputs are
#    the same (a schedule changes how a kernel runs, never what it computes).
step "$minic" run "$model" --seed 3 --output-dir "$work/default"
step "$minic" run "$model" --seed 3 --records "$work/best.jsonl" --compare "$work/default"
expect "records: [1-4] of 4 kernels tuned" "$work/out.txt"
expect "all 1 outputs match" "$work/out.txt"

# 6. Go on from the database: its 6 trials count as measured, so 6 more are run. The
#    two tasks not tried yet come first; at the end the finalists of every task this run
#    measured are timed again (a task whose space has one point has none to choose from).
step "$minic" tune "$model" -o "$work/db.jsonl" --resume --trials 12 --per-round 3 --seed 1
expect "round   1  task 3/4 fc3_add" "$work/out.txt"
step "$minic" db show "$work/db.jsonl"
expect "records ([0-9]* of them finalists timed again), 4 workloads" "$work/out.txt"

# 7. The tuning curve: each task's best latency so far against its trials, relative to
#    its default schedule (scripts/plot_tuning.py; needs matplotlib, which
#    scripts/setup.sh installs).
if ! python3 -c "import matplotlib" 2> /dev/null; then
  echo "the tuning curve needs matplotlib, which python3 cannot import: run scripts/setup.sh" >&2
  exit 1
fi
step "$minic" tune -o "$work/db.jsonl" --plot "$work/curve.png"
expect "wrote" "$work/out.txt"
test -s "$work/curve.png"

# 8. Another search strategy: the Bayesian search fits a Gaussian process to each task's
#    timings and measures the points of highest expected improvement (no cost model). Its
#    first round of a task is random points: there is nothing to fit before two timings.
step "$minic" tune "$model" -o "$work/bayes.jsonl" --search bayesian --trials 12 \
  --per-round 3 --seed 1
expect "12 trials, bayesian search" "$work/out.txt"
expect "finalists timed again in turns" "$work/out.txt"
echo
echo "tutorial 5 finished"
