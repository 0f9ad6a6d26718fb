#!/usr/bin/env bash
# Tutorial 4 (course module 4): scheduling a GEMM step by step.
#
# A schedule is a trace: a list of primitive applications. This tutorial grows the trace
# of a 256x256x256 matrix multiply one primitive at a time and, after each, prints the
# loop nest, the equivalent C and the time of one call compiled (`--bench`: before the
# trace and after it, with the GFLOP/s), so you can watch what each primitive does to the
# loops and to the speed. The times are this machine's, measured as you run it.
# At the end the trace replays to the same loop IR, a primitive that would change
# what the kernel computes is refused, and the default schedule of a product with
# constant weights reads them in the panels a graph pass stored them in. (That every primitive keeps the kernel's results is
# checked by the unit tests, which run the loop interpreter before and after.)
#
# Run it from the repository root after building:
#   examples/tutorials/04-schedule-gemm.sh [path/to/minic]
# It also runs as a test (ctest -R tutorials), so every command shown here works.
set -euo pipefail
cd "$(dirname "$0")/../.."
minic="${1:-build/minic}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

expect() {  # expect PATTERN FILE: the output must contain PATTERN
  grep -q -- "$1" "$2" || { echo "expected '$1' in the output above" >&2; exit 1; }
}

# The kernel as lowering writes it: C[i, j] = sum over k of A[i, k] * B[k, j].
cat > "$work/gemm.mloop" <<'KERNEL'
func @gemm(A: f32[256,256], B: f32[256,256], C: f32[256,256]) {
  for i in 0..256 {
    for j in 0..256 {
      for k in 0..256 {
        block C(vi = spatial(256) i, vj = spatial(256) j, vk = reduce(256) k) {
          reads(A[vi, vk], B[vk, vj], C[vi, vj]) writes(C[vi, vj])
          init { C[vi, vj] = 0.0 }
          C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
        }
      }
    }
  }
}
KERNEL

# Each step appends one line to the trace, replays the whole trace on the original
# kernel, and prints the loop nest, the C and the times.
: > "$work/gemm.trace"
apply() {  # apply "TRACE LINE" "what it does"
  echo "$1" >> "$work/gemm.trace"
  printf '\n\033[1m# %s\033[0m\n\033[1m$ %s\033[0m\n' "$2" "$1"
  "$minic" schedule "$work/gemm.mloop" --trace "$work/gemm.trace" | tee "$work/step.mloop"
  "$minic" schedule "$work/gemm.mloop" --trace "$work/gemm.trace" --emit c |
    sed -n '/^void gemm/,$p' > "$work/step.c"
  echo "--- as C:"
  cat "$work/step.c"
  echo "--- timed:"
  "$minic" schedule "$work/gemm.mloop" --trace "$work/gemm.trace" --bench 2>&1 >/dev/null |
    tee "$work/bench.txt"
  expect "the schedule runs" "$work/bench.txt"
}

apply 'b = get_block("C")' "name the block; nothing changes yet"
apply 'i, j, k = get_loops(b)' "name its loops, outermost first"
apply 'i0, i1 = split(i, [-1, 8])' "tile rows: 32 tiles of 8 rows"
expect "for i.1 in 0..8" "$work/step.mloop"
apply 'j0, j1 = split(j, [-1, 32])' "tile columns: 8 tiles of 32 columns (two AVX-512 vectors)"
apply 'reorder(i0, j0, k, i1, j1)' \
  "the 8x32 tile of C innermost: it stays in registers while k runs"
expect "for k in 0..256" "$work/step.mloop"
apply 'init = decompose_reduction(b, k)' \
  "zero the tile before the k loop, not with a test inside it"
expect "block C_init" "$work/step.mloop"
apply 'unroll(i1)' "unroll the 8 rows of the tile"
apply 'vectorize(j1)' "the 32 columns become vector lanes"
expect "vectorized for j.1" "$work/step.mloop"
apply 'parallel(i0)' "row tiles run on all cores"
expect "parallel for i.0" "$work/step.mloop"

# The schedule is data: --emit trace prints it, and replaying it gives the same kernel.
printf '\n\033[1m$ %s\033[0m\n' "$minic schedule gemm.mloop --trace gemm.trace --emit trace"
"$minic" schedule "$work/gemm.mloop" --trace "$work/gemm.trace" --emit trace |
  tee "$work/replayed.trace"
"$minic" schedule "$work/gemm.mloop" --trace "$work/replayed.trace" > "$work/again.mloop"
diff "$work/step.mloop" "$work/again.mloop"

# A primitive that would compute something else is refused, naming the reason.
echo 'parallel(k)' >> "$work/gemm.trace"
printf '\n\033[1m$ %s\033[0m\n' "(append) parallel(k)"
if "$minic" schedule "$work/gemm.mloop" --trace "$work/gemm.trace" 2> "$work/err.txt"; then
  echo "expected parallel(k) to be refused" >&2
  exit 1
fi
cat "$work/err.txt"
expect "parallel" "$work/err.txt"

# The default schedule does all of the above, and stages B: the panel of B one column tile
# reads is copied into a contiguous buffer (b_global) before its row tiles run. When B is
# a model's weights, a constant, the pack-matmul-weights pass stores B in those panels once,
# at compile time (minic.MatMulPanels), and the kernel reads them in place.
cat > "$work/weights.mgraph" <<'GRAPH'
graph g(%a: f32[256,256], %b: f32[256,256]) -> (%c: f32[256,256], %d: f32[256,256]) opset 17 {
  %w = const f32[256,256] splat<0.5>
  %c = MatMul(%a, %b)
  %d = MatMul(%a, %w)
  return %c, %d
}
GRAPH
printf '\n\033[1m$ %s\033[0m\n' \
  "$minic opt weights.mgraph --emit scheduled --target 'llvm -mcpu=skylake-avx512' | grep ..."
"$minic" opt "$work/weights.mgraph" --emit scheduled --target "llvm -mcpu=skylake-avx512" \
  > "$work/weights.mloop"
grep 'alloc b_global\|c_local\[ramp(0, 1, 32)\] = c_local.*b_global\|d_local\[ramp(0, 1, 32)\] = d_local.*w_panels' \
  "$work/weights.mloop" | sed 's/^ *//'
expect "alloc b_global" "$work/weights.mloop"
expect "func @MatMulPanels_d(a: f32\[65536\], w_panels" "$work/weights.mloop"
if grep -q "alloc w_panels_global" "$work/weights.mloop"; then
  echo "expected the packed weights to be read in place" >&2
  exit 1
fi
echo
echo "tutorial 4 finished"
