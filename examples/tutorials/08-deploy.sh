#!/usr/bin/env bash
# Tutorial 8 (course module 8): a model deployed as C, and a model whose steps run in two
# ways at once.
#
# minic compile writes a model's kernels ahead of time into a directory: an object file
# and a shared library of the kernels, the executor's loop for this one model written out
# as C (model.c, declared in model.h), and the weights (weights.bin). A C program that
# includes model.h and links those files runs the model with no minic, no LLVM and no
# ONNX at run time. Then a graph with an op that has no compute rule: its step runs the
# op's reference kernel on the host, beside compiled kernels, on the CPU and on the
# emulated GPU.
#
# Run it from the repository root after building:
#   examples/tutorials/08-deploy.sh [path/to/minic]
# It also runs as a test (ctest -R tutorials), so every command shown here works.
set -euo pipefail
cd "$(dirname "$0")/../.."
minic="${1:-build/minic}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

expect() {  # expect PATTERN FILE: the output must contain PATTERN
  grep -qF -- "$1" "$2" || { echo "expected '$1' in the output above" >&2; exit 1; }
}
step() { printf '\n\033[1m# %s\033[0m\n' "$1"; }

step "1. The MLP compiled ahead of time into a directory"
"$minic" compile examples/models/mlp.onnx -o "$work/mlp" | tee "$work/compile.txt"
expect "model.h, model.c, weights.bin" "$work/compile.txt"
ls -l "$work/mlp"

step "2. What a C program sees: model.h"
cat "$work/mlp/model.h"

step "3. A C program that runs the model on an input of ones and prints the scores"
cat > "$work/main.c" <<'C'
#include <stdio.h>

#include "model.h"

int main(int argc, char** argv) {
  if (argc != 2 || minic_model_init(argv[1]) != 0) {
    fprintf(stderr, "usage: main WEIGHTS.bin\n");
    return 1;
  }
  static float image[784];  /* the MLP's input, f32[1,784] */
  float scores[10];         /* its output, f32[1,10] */
  for (int i = 0; i < 784; ++i) image[i] = 1.0f;
  void* inputs[1] = {image};
  void* outputs[1] = {scores};
  minic_model_run(inputs, outputs);
  for (int i = 0; i < 10; ++i) printf("%.9g\n", scores[i]);
  minic_model_free();
  return 0;
}
C
cat "$work/main.c"

step "4. Built with the C compiler alone: the plan (model.c), the kernels, the runtime"
m="$work/mlp"
echo "\$ cc -O2 -I $m main.c $m/model.c $m/kernels.o $m/minic_runtime.c -o app"
cc -std=c11 -O2 -I "$m" "$work/main.c" "$m/model.c" "$m/kernels.o" "$m/minic_runtime.c" \
   -o "$work/app"
"$work/app" "$m/weights.bin" | tee "$work/c_scores.txt"

step "5. The same scores as minic run's"
"$minic" run examples/models/mlp.onnx --fill ones --output-dir "$work/ref" > /dev/null
python3 - "$work/c_scores.txt" "$work/ref/output_0.npy" <<'PY'
import sys
import numpy as np
c = np.loadtxt(sys.argv[1])
m = np.load(sys.argv[2]).ravel()
assert c.shape == m.shape and np.allclose(c, m, rtol=1e-5, atol=1e-6), (c, m)
print(f"the C program's {c.size} scores match minic run's (max abs diff {np.abs(c - m).max():.2g})")
PY

step "6. Heterogeneous: TopK has no compute rule, so its step runs its reference kernel"
cat > "$work/scores.mgraph" <<'GRAPH'
graph scores(%x: f32[4,64], %w: f32[64,32]) -> (%values: f32[4,5], %indices: i64[4,5]) opset 18 {
  %k = const i64[1] dense<[5]>
  %s = MatMul(%x, %w)
  %r = Relu(%s)
  %values, %indices = TopK(%r, %k) {axis=-1}
  return %values, %indices
}
GRAPH
cat "$work/scores.mgraph"
"$minic" run "$work/scores.mgraph" --profile --output-dir "$work/cpu" | tee "$work/cpu.txt"
expect "(1 compiled, 1 reference: TopK)" "$work/cpu.txt"
expect "reference TopK" "$work/cpu.txt"

step "7. On the (emulated) GPU: the MatMul + Relu kernel on the device, TopK on the host"
"$minic" run "$work/scores.mgraph" --target cuda --emulate --profile --output-dir "$work/gpu" \
  | tee "$work/gpu.txt"
expect "reference TopK" "$work/gpu.txt"
python3 - "$work/cpu" "$work/gpu" <<'PY'
import os
import sys
import numpy as np
for name in sorted(os.listdir(sys.argv[1])):
    cpu, gpu = (np.load(os.path.join(folder, name)) for folder in sys.argv[1:])
    assert cpu.dtype == gpu.dtype and np.allclose(cpu, gpu, rtol=1e-5, atol=1e-6), name
    print(f"{name}: the same on the CPU and the emulated GPU")
PY
echo
echo "tutorial 8 finished"
