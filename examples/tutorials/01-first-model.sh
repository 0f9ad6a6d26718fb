#!/usr/bin/env bash
# Tutorial 1 (course modules 1 and 2): a model through minic, interpreted and compiled.
#
# Run it from the repository root after building (scripts/demo.sh builds minic):
#   examples/tutorials/01-first-model.sh [path/to/minic]
# It also runs as a test (ctest -R tutorials), so every command shown here works.
# Each step prints the command, then its output.
set -euo pipefail
cd "$(dirname "$0")/../.."
minic="${1:-build/minic}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

# 1. What is in the model file? `inspect` reads the ONNX protobuf without compiling it:
#    inputs and outputs with their shapes, the opset, and how often each op is used.
step "$minic" inspect examples/models/mlp.onnx

# 2. The same model imported into minic's graph IR, printed as text: one node a line,
#    every value typed, weights as named blobs at the end (elided here for reading).
step "$minic" opt examples/models/mlp.onnx --passes=none --elide-constants

# 3. Run it on random inputs with the reference interpreter (`--backend interp`), the
#    oracle every later optimisation is checked against. The seed makes the inputs
#    repeatable; the outputs are written as numpy files.
step "$minic" run examples/models/mlp.onnx --backend interp --fill random --seed 7 \
    --output-dir "$work"

# 4. The same inputs through the compiler: without `--backend`, `minic run` compiles the
#    model with LLVM (graph passes, lowering, schedules, machine code) and runs that.
#    `--compare` checks its outputs against the interpreter's (rtol 1e-3, atol 1e-5).
step "$minic" run examples/models/mlp.onnx --fill random --seed 7 --compare "$work"

# 5. One of ONNX's own backend tests: a Conv with expected output. `--compare` checks it
#    and exits with status 1 on a mismatch.
#    The build links onnx-data, beside the minic binary, to ONNX's test data (the onnx
#    package's backend/test/data: node/ and light/).
data="$(dirname "$minic")/onnx-data"
case_dir="$data/node/test_conv_with_strides_padding"
if [ ! -d "$case_dir" ]; then
  echo "no ONNX test data at $data: configure the build first (scripts/demo.sh)" >&2
  exit 1
fi
step "$minic" run "$case_dir/model.onnx" --input "$case_dir/test_data_set_0/input_0.pb" \
    --input "$case_dir/test_data_set_0/input_1.pb" --compare "$case_dir/test_data_set_0"

# 6. Graphs can be written by hand in the text form, and minic checks them: here a
#    Relu(x * 2 + 1). `opt` parses it, infers the types it leaves out, and prints it back.
cat > "$work/hand.mgraph" <<'GRAPH'
graph hand(%x: f32[2,3]) -> (%y: f32[2,3]) opset 17 {
  %two = const f32[] dense<[2.0]>
  %one = const f32[] dense<[1.0]>
  %0 = Mul(%x, %two)
  %1 = Add(%0, %one)
  %y = Relu(%1)
  return %y
}
GRAPH
step "$minic" opt "$work/hand.mgraph" --passes=none

# 7. Bad input is an error with a reason, never a crash: exit status 2.
printf 'not a model' > "$work/broken.onnx"
printf '\n\033[1m$ %s\033[0m\n' "$minic run $work/broken.onnx"
if "$minic" run "$work/broken.onnx"; then
  echo "expected an error" >&2
  exit 1
else
  status=$?
  [ "$status" -eq 2 ] || { echo "expected exit status 2, got $status" >&2; exit 1; }
fi
echo
echo "tutorial 1 finished"
