#!/usr/bin/env bash
# The main job: build minic, then compile a real network with it and set it beside ONNX
# Runtime. The network is ResNet-18 at 224x224, built with random weights by
# examples/models/build_models.py (seeded, so every run builds the same model). minic
#   1. inspects the ONNX file: inputs, outputs, opset, ops;
#   2. imports, optimises (graph passes, fusion) and compiles it with LLVM, and runs it on
#      random inputs, saying how long each took;
#   3. through benchmarks/run: checks its outputs against ONNX Runtime's on the same inputs,
#      then times both on one thread, interleaved, and prints the two latencies and their
#      ratio.
# About half a minute after the build. Everything it writes is under build/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build -j "${MINIC_JOBS:-2}" minic-cli >/dev/null

demo=build/demo
model="$demo/models/resnet18.onnx"
show() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

if [ ! -f "$model" ]; then
  echo "building ResNet-18 (random weights) into $model"
  python3 examples/models/build_models.py --out "$demo/models" resnet18 >/dev/null
fi
show build/minic inspect "$model"
show build/minic run "$model" --fill random --seed 1 --threads 1
show python3 benchmarks/run --models '^resnet18$' --rounds 3 --out "$demo"

cat <<'NEXT'

Where to look next:
  build/minic run MODEL --profile        the time of every kernel
  build/minic opt MODEL                  the graph IR after the default passes
  build/minic inspect MODEL --optimized  the kernels the fusion made
  build/demo/report.md                   this comparison in full; benchmarks/run (no
                                         arguments) runs the whole suite
  docs/README.md                         the course chapters, one per stage of the compiler
NEXT
