#!/usr/bin/env bash
# Tutorial 4c (course module 4): fewer multiplications, Winograd's F(4x4, 3x3).
#
# A 3x3 convolution of stride 1 computes m x m outputs with 9 m^2 multiplications per
# pair of channels; Winograd's minimal filtering needs (m + 2)^2, once the weights are
# carried to "transform space" at compile time. The `winograd` pass rewrites such a
# convolution into an input transform, a batched MatMul and an output transform, where the
# image has the tiles to pay for the memory this moves. This tutorial shows the rewrite,
# checks it numerically, shows which convolutions the pass takes and why, and times the
# network with and without the pass. The times are this machine's, measured as you run it.
#
# Run it from the repository root after building:
#   examples/tutorials/04-winograd.sh [path/to/minic]
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

# 1. Three 3x3 convolutions of 64 channels in the style of a ResNet stage: two on a
#    28 x 28 image, then one of stride 2, each followed by a Relu.
cat > "$work/net.mgraph" <<'GRAPH'
graph net(%x: f32[1,64,28,28]) -> (%y: f32[1,64,14,14]) opset 17 {
  %w0 = const f32[64,64,3,3] splat<0.02>
  %w1 = const f32[64,64,3,3] splat<0.03>
  %w2 = const f32[64,64,3,3] splat<0.01>
  %c0 = Conv(%x, %w0) {pads=[1,1,1,1]}
  %r0 = Relu(%c0)
  %c1 = Conv(%r0, %w1) {pads=[1,1,1,1]}
  %r1 = Relu(%c1)
  %c2 = Conv(%r1, %w2) {pads=[1,1,1,1], strides=[2,2]}
  %y = Relu(%c2)
  return %y
}
GRAPH

# 2. blocked-layout, then winograd, for an AVX-512 CPU, checked numerically: the
#    interpreter runs the graph on random inputs after each pass and compares. Each
#    stride-1 convolution becomes WinogradInput, MatMul and WinogradOutput over 7 x 7
#    tiles of 4 x 4; the weights in transform space are a new constant [36, 64, 64]
#    (--elide-constants summarises it).
step "$minic" opt "$work/net.mgraph" --passes=blocked-layout,winograd --verify-each=numeric \
    --elide-constants --target "llvm -mcpu=skylake-avx512" 2>&1 | tee "$work/out.txt"
expect "after winograd: ok" "$work/out.txt"
expect "minic.WinogradInput(%x_nchwc, %winograd_bt4) {pads=\[1,1\], tiles=\[7,7\]}" "$work/out.txt"
expect "const f32\[36,64,64\]" "$work/out.txt"

# 3. Why each convolution went the way it did, and the kernels of the whole pipeline: the
#    output transform takes the Relu (fuse-ops), the MatMul gets the GEMM rule.
step "$minic" explain "$work/net.mgraph" --target "llvm -mcpu=skylake-avx512" \
    | tee "$work/out.txt"
expect "computed as Winograd F(4x4, 3x3) over 49 tiles" "$work/out.txt"
expect "stays direct: its stride is not 1" "$work/out.txt"
expect "(minic.WinogradOutput, Relu)" "$work/out.txt"

# 4. The same network with and without the pass, on this machine (one thread): the
#    default pipeline, then the same list without winograd.
default_passes="$("$minic" opt --list-passes | sed -n 's/^graph passes (default pipeline: \(.*\)):$/\1/p')"
direct_passes="${default_passes//winograd,/}"
step "$minic" bench "$work/net.mgraph" --threads 1 --warmup 2 --repeat 20 | tee "$work/winograd.txt"
step "$minic" bench "$work/net.mgraph" --threads 1 --warmup 2 --repeat 20 \
    --passes "$direct_passes" | tee "$work/direct.txt"
median() { awk '/^latency/ { getline; print $1 }' "$1"; }
echo
echo "median latency: $(median "$work/winograd.txt") ms with winograd, $(median "$work/direct.txt") ms direct"
echo
echo "tutorial 4c finished"
