#!/usr/bin/env bash
# Tutorial 2 (course module 2): graph passes, one at a time, then the whole pipeline.
#
# Run it from the repository root after building:
#   examples/tutorials/02-graph-passes.sh [path/to/minic]
# It also runs as a test (ctest -R tutorials), so every command shown here works.
set -euo pipefail
cd "$(dirname "$0")/../.."
minic="${1:-build/minic}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }
expect() {  # expect PATTERN FILE: the step's output must contain PATTERN
  grep -q -- "$1" "$2" || { echo "expected '$1' in the output above" >&2; exit 1; }
}

# 1. A small graph written by hand, with the kind of clutter exporters leave behind: an
#    Identity, a multiply by one, a weight built by ConstantOfShape, and a Conv followed
#    by an elementwise Add and Relu.
cat > "$work/block.mgraph" <<'GRAPH'
graph block(%x: f32[1,2,4,4]) -> (%y: f32[1,2,4,4]) opset 17 {
  %shape = const i64[4] dense<[2, 2, 3, 3]>
  %one = const f32[] dense<[1.0]>
  %w = ConstantOfShape(%shape) {value=tensor<f32[1] dense<[0.5]>>}
  %0 = Identity(%x)
  %1 = Mul(%0, %one)
  %2 = Conv(%1, %w) {kernel_shape=[3,3], pads=[1,1,1,1]}
  %3 = Add(%2, %x)
  %y = Relu(%3)
  return %y
}
GRAPH

# 2. simplify: Identity and x * 1 disappear.
step "$minic" opt "$work/block.mgraph" --passes=simplify | tee "$work/out.txt"
expect "Conv(%x, %w)" "$work/out.txt"

# 3. fold-constants: the weight becomes a constant, computed by ConstantOfShape's
#    reference kernel at compile time.
step "$minic" opt "$work/block.mgraph" --passes=simplify,fold-constants | tee "$work/out.txt"
expect "%w = const f32\[2,2,3,3\] splat<0.5>" "$work/out.txt"

# 4. fuse-ops: Conv, Add and Relu become one fused node, one kernel.
step "$minic" opt "$work/block.mgraph" --passes=simplify,fold-constants,fuse-ops \
    | tee "$work/out.txt"
expect "fused(" "$work/out.txt"

# 5. The default pipeline, checked numerically after every pass: the interpreter runs the
#    graph on random inputs before and after each pass, and the outputs must agree.
step "$minic" opt "$work/block.mgraph" --verify-each=numeric --time-passes

# 6. expand-recurrent: a GRU becomes the projection of its input for every step at once
#    (MatMul) and a Scan over time whose body is one step of the cell, in ops that
#    compile. The numeric check compares the rewritten graph with GRU's reference kernel.
cat > "$work/gru.mgraph" <<'GRAPH'
graph tagger(%x: f32[8,1,4], %w: f32[1,9,4], %r: f32[1,9,3]) -> (%y_h: f32[1,1,3]) opset 17 {
  %y, %y_h = GRU(%x, %w, %r) {hidden_size=3}
  return %y_h
}
GRAPH
step "$minic" opt "$work/gru.mgraph" --passes=expand-recurrent --verify-each=numeric \
    | tee "$work/out.txt"
expect "= Scan(" "$work/out.txt"
expect "body=graph gru_forward" "$work/out.txt"

# 7. A real network: the ResNet-50 light model before and after the pipeline.
#    The build links onnx-data, beside the minic binary, to ONNX's test data.
model="$(dirname "$minic")/onnx-data/light/light_resnet50.onnx"
[ -f "$model" ] || { echo "no $model: configure the build first (scripts/demo.sh)" >&2; exit 1; }
step "$minic" inspect "$model" --optimized | tee "$work/out.txt"
expect "kernels" "$work/out.txt"
step "$minic" viz "$model" --stage optimized -o "$work/resnet50.dot"
expect "cluster_" "$work/resnet50.dot"
echo
echo "tutorial 2 finished"
