#!/usr/bin/env bash
# Tutorial 6 (course module 6): scheduling a GEMM for the GPU, step by step, without one.
#
# The same kind of trace as tutorial 4, for a CUDA target: the rows and columns of C are
# split into tiles, the tiles bound to thread blocks and the elements of a tile to
# threads; then the k loop in steps whose tiles of A and B the threads copy into shared
# memory together (the barriers come from the insert-barriers pass). After each step the tutorial prints the CUDA C that minic's CUDA back end
# writes for the kernel, and checks the schedule on the loop interpreter (`--check`): it
# runs the GPU code thread block by thread block, with every thread's memory accesses
# checked for races, and compares the results with the unscheduled kernel's. At the end a
# whole model runs with `--target cuda --emulate` and gives the CPU's answer.
#
# Run it from the repository root after building:
#   examples/tutorials/06-schedule-gemm-gpu.sh [path/to/minic]
# It also runs as a test (ctest -R tutorials), so every command shown here works.
set -euo pipefail
cd "$(dirname "$0")/../.."
minic="${1:-build/minic}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

expect() {  # expect PATTERN FILE: the output must contain PATTERN
  grep -qF -- "$1" "$2" || { echo "expected '$1' in the output above" >&2; exit 1; }
}

# C = A * B, 64 x 64 x 64: small, so that the interpreter checks each step in a moment.
cat > "$work/gemm.mloop" <<'KERNEL'
func @gemm(A: f32[64,64], B: f32[64,64], C: f32[64,64]) {
  for i in 0..64 {
    for j in 0..64 {
      for k in 0..64 {
        block C(vi = spatial(64) i, vj = spatial(64) j, vk = reduce(64) k) {
          reads(A[vi, vk], B[vk, vj], C[vi, vj]) writes(C[vi, vj])
          init { C[vi, vj] = 0.0 }
          C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
        }
      }
    }
  }
}
KERNEL

# Each step appends one line to the trace, replays it, runs the default loop passes (as
# `minic run` does), checks the result on the interpreter and prints the CUDA C.
: > "$work/gemm.trace"
apply() {  # apply "TRACE LINE" "what it does"
  echo "$1" >> "$work/gemm.trace"
  printf '\n\033[1m# %s\033[0m\n\033[1m$ %s\033[0m\n' "$2" "$1"
  "$minic" schedule "$work/gemm.mloop" --trace "$work/gemm.trace" --target cuda \
    --passes default --check --emit cuda | sed -n '/^\/\/ grid/,$p' | tee "$work/step.cu"
}

apply 'b = get_block("C")' \
  "unscheduled: no loop is bound, so the kernel is one launch of one thread"
expect "grid (1, 1, 1), block (1, 1, 1)" "$work/step.cu"
apply 'i, j, k = get_loops(b)' "name the loops"
apply 'i0, i1 = split(i, [-1, 16])' "rows in tiles of 16"
apply 'j0, j1 = split(j, [-1, 16])' "columns in tiles of 16"
apply 'reorder(i0, j0, i1, j1, k)' "tile loops outside, the 16x16 elements of a tile inside"
apply 'bind(i0, "blockIdx.y")' "a row of tiles per blockIdx.y"
apply 'bind(j0, "blockIdx.x")' "a column of tiles per blockIdx.x: a 4 x 4 grid"
expect "grid (4, 4, 1), block (1, 1, 1)" "$work/step.cu"
apply 'bind(i1, "threadIdx.y")' "a row of a tile per threadIdx.y"
apply 'bind(j1, "threadIdx.x")' "an element per thread: 16 x 16 threads a block"
expect "grid (4, 4, 1), block (16, 16, 1)" "$work/step.cu"
expect "const int j_1 = (int)threadIdx.x;" "$work/step.cu"

# Every thread still reads a row of A and a column of B from global memory. The block's
# threads can share them: for each step of 16 along k, they copy the 16 x 16 tiles of A
# and B into shared memory together, then read them from there. compute_at under a
# threadIdx loop takes a shared buffer's region for the whole block; binding the copy's
# loops to the same threadIdx axes (same extents) gives each thread one element to copy.
# The loop passes shrink the tiles to 16 x 16 and add the barriers (insert-barriers).
apply 'k0, k1 = split(k, [-1, 16])' "k in steps of 16"
# (cache_read alone would copy all of A before the launch: a step CUDA cannot run.)
apply $'a = cache_read(b, 0, "shared")\ncompute_at(a, k0)' \
  "A through shared memory: the tile of each k step, each thread copying all of it"
apply 'ai0, aj0, ai1, aj1, ak0, ar, ac = get_loops(a)' "name the copy's loops"
apply 'bind(ar, "threadIdx.y")' "the tile's rows over threadIdx.y"
apply 'bind(ac, "threadIdx.x")' "one element of the A tile per thread"
apply $'bt = cache_read(b, 1, "shared")\ncompute_at(bt, k0)' "B through shared memory, by tiles"
apply 'bi0, bj0, bi1, bj1, bk0, br, bc = get_loops(bt)' "name the copy's loops"
apply 'bind(br, "threadIdx.y")' "the tile's rows over threadIdx.y"
apply 'bind(bc, "threadIdx.x")' "one element of the B tile per thread"
expect "__shared__ float A_shared[256];" "$work/step.cu"
expect "__syncthreads();" "$work/step.cu"

# A schedule that races is refused by bind before anything runs: k1 feeds the reduction.
echo 'bind(k1, "threadIdx.z")' >> "$work/gemm.trace"
printf '\n\033[1m$ %s\033[0m\n' "(append) bind(k1, \"threadIdx.z\")"
if "$minic" schedule "$work/gemm.mloop" --trace "$work/gemm.trace" 2> "$work/err.txt"; then
  echo "expected bind(k1) to be refused" >&2
  exit 1
fi
cat "$work/err.txt"
expect "race on the accumulator" "$work/err.txt"

# A whole model: every kernel gets the default GPU schedule (one thread per output
# element, 256 threads a block) and runs on the interpreter; the answer is the CPU's.
printf '\n\033[1m$ %s\033[0m\n' "$minic run examples/models/mlp.onnx --target cuda --emulate"
"$minic" run examples/models/mlp.onnx --target cuda --emulate | tee "$work/gpu.txt"
"$minic" run examples/models/mlp.onnx > "$work/cpu.txt"
expect "(emulated)" "$work/gpu.txt"
diff <(grep '^output' "$work/gpu.txt") <(grep '^output' "$work/cpu.txt")
echo
echo "tutorial 6 finished"
