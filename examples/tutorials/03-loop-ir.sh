#!/usr/bin/env bash
# Tutorial 3 (course module 3): a kernel in the loop IR, as text and as C.
#
# Run it from the repository root after building:
#   examples/tutorials/03-loop-ir.sh [path/to/minic]
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

# 1. A kernel written by hand: y = relu(a + b) over 1024 floats, the inner loop
#    vectorised by hand: each iteration loads 16 lanes with a ramp of indices.
cat > "$work/add_relu.mloop" <<'KERNEL'
func @add_relu(A: f32[1024], B: f32[1024], Y: f32[1024]) {
  for i.0 in 0..64 {
    block Y(v = spatial(64) i.0) {
      Y[ramp(v * 16, 1, 16)] = max(A[ramp(v * 16, 1, 16)] + B[ramp(v * 16, 1, 16)], broadcast(0.0, 16))
    }
  }
}
KERNEL

# 2. minic parses it, checks every node's invariants, and prints it back.
step "$minic" schedule "$work/add_relu.mloop" | tee "$work/out.txt"
expect "ramp(v \* 16, 1, 16)" "$work/out.txt"

# 3. The same kernel as the C a student would write: the vector access becomes a
#    small loop over the 16 lanes.
step "$minic" schedule "$work/add_relu.mloop" --emit c -o "$work/add_relu.c"
sed -n '/^void add_relu/,$p' "$work/add_relu.c"
expect "void add_relu(" "$work/add_relu.c"

# 4. That C compiles (where a C compiler is installed).
if command -v cc >/dev/null; then
  step cc -std=c99 -O2 -c "$work/add_relu.c" -o "$work/add_relu.o"
fi

# 5. A mistake is an error with its position, not a crash.
printf 'func @bad(A: f32[4]) {\n  A[0] = 1\n}\n' > "$work/bad.mloop"
printf '\n\033[1m$ %s\033[0m\n' "$minic schedule $work/bad.mloop"
if "$minic" schedule "$work/bad.mloop"; then
  echo "expected an error" >&2
  exit 1
fi
echo
echo "tutorial 3 finished"
