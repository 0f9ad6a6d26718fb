#!/usr/bin/env bash
# The libFuzzer run: minic's four parsers (tests/fuzz/libfuzzer/fuzz_*.cpp) under ASan and
# UBSan, each for a time budget, one after another. Builds them with clang in
# build-libfuzz/ (-DMINIC_LIBFUZZER=ON), makes seed corpora from the test inputs
# (tests/fuzz/libfuzzer/make_corpus.py), fuzzes, and reports per target the seconds, the
# executions and the findings. A finding's input is written to build-libfuzz/findings/TARGET/;
# a fixed one goes, minimised, to tests/fuzz/libfuzzer/regressions/TARGET/, which ctest
# replays (docs/module2-graph-ir.md#libfuzzer-targets-every-parser-under-the-sanitizers).
#
#   scripts/libfuzz.sh [SECONDS_PER_TARGET (default 600)] [TARGET...]
#
# TARGET is onnx_importer, graph_text, loop_text or trace_text (default: all four). A target
# stops at its first finding; MINIC_LIBFUZZ_KEEP_GOING=1 fuzzes on past findings (libFuzzer's
# fork mode), collecting every one. Builds and runs at low priority (nice), MINIC_JOBS
# (default 2) compiles at once.
set -euo pipefail
cd "$(dirname "$0")/.."
budget="${1:-600}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(onnx_importer graph_text loop_text trace_text)
build=build-libfuzz
jobs="${MINIC_JOBS:-2}"

# -O1 -g1: the ASan recommendation, and a build under half as long as -O2 -g.
if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++-19 -DMINIC_LIBFUZZER=ON \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
      >/dev/null
fi
nice -n 15 ninja -C "$build" -j "$jobs" "${targets[@]/#/minic-fuzz-}"
python3 tests/fuzz/libfuzzer/make_corpus.py --root . --onnx-data "$build/onnx-data" \
    --out "$build/corpus"

# The input limits: a model up to 64 KiB (the node tests' models are smaller), text up to
# 8 KiB, a trace up to 2 KiB. Over 10 s for one input, or over 4 GiB, is a finding.
declare -A max_len=([onnx_importer]=65536 [graph_text]=8192 [loop_text]=8192 [trace_text]=2048)
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
dicts=tests/fuzz/libfuzzer/dicts
report=()
for target in "${targets[@]}"; do
  findings="$build/findings/$target"
  log="$build/logs/$target.log"
  mkdir -p "$findings" "$(dirname "$log")"
  mode=()
  [ "${MINIC_LIBFUZZ_KEEP_GOING:-0}" = 1 ] && mode=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  start=$(date +%s)
  status=0
  nice -n 15 "$build/tests/fuzz/libfuzzer/minic-fuzz-$target" "$build/corpus/$target" \
      "${mode[@]}" -max_total_time="$budget" -timeout=10 -rss_limit_mb=4096 \
      -max_len="${max_len[$target]}" -dict="$dicts/$target.dict" \
      -artifact_prefix="$findings/" -print_final_stats=1 >"$log" 2>&1 || status=$?
  seconds=$(( $(date +%s) - start ))
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1)
  count=$(find "$findings" -type f | wc -l)
  report+=("$target: ${seconds}s, ${execs:-?} executions, ${cov:-cov: ?}, exit $status, $count finding(s) in $findings (log $log)")
done
printf '%s\n' "${report[@]}"
