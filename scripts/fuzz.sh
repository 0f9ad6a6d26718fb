#!/usr/bin/env bash
# The long fuzzing run: random graphs (tests/fuzz/fuzz_graphs.py) through minic and ONNX
# Runtime for a time budget, on every core; each failing graph is shrunk and written, with
# its inputs, to build/fuzz-out/seedN/. ctest's fuzz/graphs runs a fixed batch of 300.
#
#   scripts/fuzz.sh [SECONDS (default 3600)] [CONFIGS (default interp,llvm,emulate)]
set -euo pipefail
cd "$(dirname "$0")/.."
budget="${1:-3600}"
configs="${2:-interp,llvm,emulate}"
ninja -C build minic-cli >/dev/null
# Seeds from 100000 up: not the ones ctest's batch runs.
python3 tests/fuzz/fuzz_graphs.py --minic build/minic --count 0 --seed 100000 \
    --time-budget "$budget" --jobs "$(nproc)" --configs "$configs" --out build/fuzz-out
