#!/usr/bin/env bash
# Tutorial 4d (course module 4): attention as one kernel.
#
# Exporters write a transformer's attention as five ops -- the scores Q x K_t, their
# scale, the mask, Softmax, the product with V -- which would run as three kernels, each
# a pass through memory over every head's S x T scores. The `fuse-attention` pass makes
# them one op, minic.FusedAttention, and the CPU's attention rule computes it a block of
# rows at a time, every stage of the block under one loop, so the scores never leave the
# L1 cache. This tutorial shows the rewrite, checks it numerically, shows the schedule,
# and times the block with and without the pass. The times are this machine's, measured
# as you run it.
#
# Run it from the repository root after building:
#   examples/tutorials/04-attention.sh [path/to/minic]
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

# 1. One attention block the size of a small BERT's: 4 heads of 128 queries and keys,
#    head size 64, a mask over the keys, written the way exporters write it.
cat > "$work/attention.mgraph" <<'GRAPH'
graph attention(%q: f32[1,4,128,64], %k_t: f32[1,4,64,128], %v: f32[1,4,128,64], %mask: f32[128]) -> (%y: f32[1,4,128,64]) opset 17 {
  %sqrt_d = const f32[] dense<[8.0]>
  %s = MatMul(%q, %k_t)
  %x = Div(%s, %sqrt_d)
  %a = Add(%x, %mask)
  %p = Softmax(%a) {axis=-1}
  %y = MatMul(%p, %v)
  return %y
}
GRAPH

# 2. fuse-attention, checked numerically: the interpreter runs the graph on random inputs
#    before and after the pass and compares. The five nodes become one, the division by
#    8 a scale of 1/8.
step "$minic" opt "$work/attention.mgraph" --passes=fuse-attention --verify-each=numeric \
    2>&1 | tee "$work/out.txt"
expect "after fuse-attention: ok" "$work/out.txt"
expect "minic.FusedAttention(%q, %k_t, %v, %mask) {scale=0.125}" "$work/out.txt"

# 3. How the kernel is scheduled, for an AVX-512 CPU: blocks of two register tiles of 6
#    rows; under each block the scores, their maxima, the exponentials, their sums and the
#    product with V.
step "$minic" explain "$work/attention.mgraph" --target "llvm -mcpu=skylake-avx512" \
    | tee "$work/out.txt"
expect "the attention rule, every stage computed in row blocks: blocks of 2 x 6 rows" \
    "$work/out.txt"

# 4. The loops of the scheduled kernel, without their bodies: the head loop, the block
#    loop, and the stages inside it.
step "$minic" opt "$work/attention.mgraph" --emit scheduled \
    --target "llvm -mcpu=skylake-avx512" > "$work/kernel.txt"
grep -E '^ *(parallel )?for |exp\(' "$work/kernel.txt" | cut -c1-110 | head -40
expect "exp(fusedattention_scores" "$work/kernel.txt"

# 5. The block with and without the pass, on this machine (one thread): the default
#    pipeline, then the same list without fuse-attention.
default_passes="$("$minic" opt --list-passes | sed -n 's/^graph passes (default pipeline: \(.*\)):$/\1/p')"
unfused_passes="${default_passes//fuse-attention,/}"
step "$minic" bench "$work/attention.mgraph" --threads 1 --warmup 10 --repeat 100 \
    | tee "$work/fused.txt"
step "$minic" bench "$work/attention.mgraph" --threads 1 --warmup 10 --repeat 100 \
    --passes "$unfused_passes" | tee "$work/unfused.txt"
median() { awk '/^latency/ { getline; print $1 }' "$1"; }
echo
echo "median latency: $(median "$work/fused.txt") ms fused, $(median "$work/unfused.txt") ms as five ops"
echo
echo "tutorial 4d finished"
