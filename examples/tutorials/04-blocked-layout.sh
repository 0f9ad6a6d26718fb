#!/usr/bin/env bash
# Tutorial 4b (course module 4): a data layout chosen for the machine, NCHWc.
#
# A CPU computes a convolution fastest with one vector register holding neighbouring
# output channels. The `blocked-layout` pass puts chains of convolutions into a layout
# whose innermost axis is a block of channels as wide as a vector, and the blocked
# convolution rule tiles them. This tutorial shows the graph before and after the pass,
# the schedule the rule gives one convolution, and the same network timed with and
# without the pass. The times are this machine's, measured as you run it.
#
# Run it from the repository root after building:
#   examples/tutorials/04-blocked-layout.sh [path/to/minic]
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

# 1. A small network in the style of MobileNet: a strided convolution of the image, a
#    depthwise convolution, a pointwise one, each followed by an activation, then a
#    global pool and a Flatten. 24 channels do not fill blocks of 16: the last block of
#    each is padded.
cat > "$work/net.mgraph" <<'GRAPH'
graph net(%image: f32[1,3,64,64]) -> (%features: f32[1,48]) opset 17 {
  %w0 = const f32[24,3,3,3] splat<0.05>
  %w1 = const f32[24,1,3,3] splat<0.1>
  %w2 = const f32[48,24,1,1] splat<0.02>
  %lo = const f32[] dense<[0.0]>
  %hi = const f32[] dense<[6.0]>
  %c0 = Conv(%image, %w0) {pads=[1,1,1,1], strides=[2,2]}
  %a0 = Clip(%c0, %lo, %hi)
  %c1 = Conv(%a0, %w1) {group=24, pads=[1,1,1,1]}
  %a1 = Clip(%c1, %lo, %hi)
  %c2 = Conv(%a1, %w2)
  %a2 = Relu(%c2)
  %g = GlobalAveragePool(%a2)
  %features = Flatten(%g)
  return %features
}
GRAPH

# 2. blocked-layout alone, for an AVX-512 CPU (blocks of 16), checked numerically: the
#    interpreter runs the graph on random inputs before and after the pass. The image is
#    read plain; every other tensor of the chain is [N, C / 16, H, W, 16]; one FromNchwc
#    before the Flatten brings the plain layout back.
step "$minic" opt "$work/net.mgraph" --passes=blocked-layout --verify-each=numeric \
    --target "llvm -mcpu=skylake-avx512" | tee "$work/out.txt"
expect "minic.NchwcConv(%image" "$work/out.txt"
expect "{group=32, pads=\[1,1,1,1\]}" "$work/out.txt"
expect "minic.FromNchwc" "$work/out.txt"

# 3. The whole pipeline, and the rule each kernel's blocks get: the blocked convolution
#    rule for the convolutions, its trace ending with the epilogue (Clip or Relu) folded
#    into the copy-out of the register tile.
step "$minic" explain "$work/net.mgraph" --target "llvm -mcpu=skylake-avx512" \
    | tee "$work/out.txt"
expect "the blocked convolution rule" "$work/out.txt"
expect "reverse_compute_inline" "$work/out.txt"

# 4. The depthwise convolution's loops after scheduling: a tile of positions, each a
#    vector of 16 channels, the 9 taps each loading a vector of the input.
step "$minic" opt "$work/net.mgraph" --emit scheduled --target "llvm -mcpu=skylake-avx512" \
    | tee "$work/out.txt"
expect "parallel for" "$work/out.txt"

# 5. The same network with and without the pass, on this machine (one thread): the
#    default pipeline, then the same list without blocked-layout.
default_passes="$("$minic" opt --list-passes | sed -n 's/^graph passes (default pipeline: \(.*\)):$/\1/p')"
plain_passes="${default_passes//blocked-layout,/}"
step "$minic" bench "$work/net.mgraph" --threads 1 --warmup 2 --repeat 20 | tee "$work/blocked.txt"
step "$minic" bench "$work/net.mgraph" --threads 1 --warmup 2 --repeat 20 \
    --passes "$plain_passes" | tee "$work/plain.txt"
median() { awk '/^latency/ { getline; print $1 }' "$1"; }
echo
echo "median latency: $(median "$work/blocked.txt") ms in blocks, $(median "$work/plain.txt") ms plain"
echo
echo "tutorial 4b finished"
