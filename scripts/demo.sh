#!/usr/bin/env bash
# The main job: build minic, then inspect and run the bundled example model
# (examples/models/mlp.onnx) on random inputs, showing the time it took, and time it
# after the default graph pipeline with `minic bench`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build -j "${MINIC_JOBS:-2}" minic-cli >/dev/null
model=examples/models/mlp.onnx
echo "\$ minic inspect $model"
build/minic inspect "$model"
echo
echo "\$ minic run $model --fill random --seed 1"
build/minic run "$model" --fill random --seed 1
echo
echo "\$ minic bench $model --repeat 50"
build/minic bench "$model" --repeat 50
