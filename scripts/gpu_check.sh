#!/usr/bin/env bash
# The CUDA back end on a real GPU (the H200 machine), in under 8 minutes:
#
#   bash scripts/gpu_check.sh OUT_DIR      (after scripts/gpu_bundle.sh, here)
#
# Each phase runs under `timeout` and leaves its log in OUT_DIR; OUT_DIR/summary.txt and
# summary.json say, phase by phase:
#   device       the GPU, its driver, minic's view of it
#   node         every ONNX node test on the GPU against its expected outputs
#   light        the nine light models on the GPU against their expected outputs
#   models       the example models on the GPU against the CPU backend's outputs
#   profile      the per-kernel profile of ResNet-50 (light) and the BERT encoder
#   custom-op    the GELU plugin's hand-written CUDA kernels on the GPU against ONNX
#                Runtime's contrib ops (tests/models/custom_op_ort.py)
#   elementwise  relu(A + B) over 64M floats: its kernel's bandwidth against PyTorch's
#                device-to-device copy
#   gemm         the 4096^3 fp32 MatMul kernel against PyTorch's (cuBLAS, no TF32)
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: gpu_check.sh OUT_DIR}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
bundle="$PWD/gpu-bundle"
work="$(mktemp -d)"
summary="$out/summary.txt"
: > "$summary"
json_fields=()

say() { echo "$*" | tee -a "$summary"; }
field() { json_fields+=("\"$1\": $2"); }  # field NAME JSON-VALUE

[ -d "$bundle" ] || { say "no $bundle: run scripts/gpu_bundle.sh first"; exit 1; }
tar -C "$work" -xJf "$bundle/lib.tar.xz"
tar -C "$work" -xJf "$bundle/data.tar.xz"
export LD_LIBRARY_PATH="$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CUDA_MODULE_LOADING=EAGER  # load every kernel at cuModuleLoadData, not at its first launch
minic="$bundle/bin/minic"
conformance="$bundle/bin/minic-conformance"
for candidate in /usr/local/cuda/lib64/libnvrtc.so.13 /usr/local/cuda/lib/libnvrtc.so.13 \
    $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null |
      tr ' ' '\n' | sed 's|$|/nvidia/cu13/lib/libnvrtc.so.13|'); do
  if [ -f "$candidate" ]; then export MINIC_NVRTC="$candidate"; break; fi
done
say "minic gpu_check $(date -u +%FT%TZ); NVRTC: ${MINIC_NVRTC:-not found}"

# The whole check stays under 8 minutes: no phase runs past 460 s from the start.
limit() {  # limit SECONDS: SECONDS, or what is left of the 460 s if that is less
  local left=$((460 - SECONDS))
  [ "$left" -lt 1 ] && left=1
  echo $(("$1" < left ? "$1" : left))
}

phase() {  # phase NAME SECONDS COMMAND...: runs it, its output in OUT_DIR/NAME.log
  local name="$1" seconds
  seconds="$(limit "$2")"
  shift 2
  local start=$SECONDS
  timeout "$seconds" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  say "[$name] exit $rc in $((SECONDS - start)) s"
  return $rc
}

# --- device -------------------------------------------------------------------------------
phase device 30 bash -c "nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm \
  --format=csv; ldd '$minic' | grep 'not found'; '$minic' --version"
say "  $(sed -n 2p "$out/device.log")"
field device "\"$(sed -n 2p "$out/device.log")\""

# --- conformance on the GPU ---------------------------------------------------------------
phase node 150 "$conformance" node "$work/node" --backend cuda \
  --cases tests/onnx/node_cases.tsv --expected tests/onnx/expected_pass.txt
node_line="$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out/node.log" | tail -1)"
say "  node tests: ${node_line:-no result}; $(grep -c '^REGRESSION' "$out/node.log") regressions"
field node "\"${node_line:-none}\""
phase light 120 "$conformance" light-models "$work/light" --passes default --backend cuda
light_line="$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out/light.log" | tail -1)"
say "  light models: ${light_line:-no result}"
field light "\"${light_line:-none}\""

# --- the example models against the CPU ---------------------------------------------------
phase build-models 90 python3 examples/models/build_models.py --out "$work/models"
cp examples/models/mlp.onnx "$work/models/" 2>/dev/null
models_ok=0
models_total=0
for model in "$work"/models/*.onnx; do
  name="$(basename "$model" .onnx)"
  models_total=$((models_total + 1))
  timeout "$(limit 30)" "$minic" run "$model" --fill random --seed 1 \
    --output-dir "$work/cpu-$name" > "$out/models-$name-cpu.log" 2>&1
  if timeout "$(limit 30)" "$minic" run "$model" --fill random --seed 1 --target cuda \
      --compare "$work/cpu-$name" > "$out/models-$name-gpu.log" 2>&1; then
    models_ok=$((models_ok + 1))
    say "  $name: GPU = CPU"
  else
    say "  $name: FAILED ($(tail -1 "$out/models-$name-gpu.log"))"
  fi
done
field models "\"$models_ok of $models_total match the CPU\""

# --- profiles -----------------------------------------------------------------------------
for model in "$work/light/light_resnet50.onnx" "$work/models/bert_encoder.onnx"; do
  name="$(basename "$model" .onnx)"
  phase "profile-$name" 60 "$minic" run "$model" --target cuda --profile --passes default
  grep -E '^ran|^profile' "$out/profile-$name.log" | sed 's/^/  /' | tee -a "$summary"
done

# --- custom ops with their own CUDA kernels ----------------------------------------------
phase custom-op 90 python3 tests/models/custom_op_ort.py --minic "$minic" \
  --ops "$bundle/bin/libminic_gelu_ops.so" --out "$work/custom-op"
custom_line="$(grep -c '^  ok   cuda' "$out/custom-op.log") GPU outputs match ORT, \
$(grep -c '^  skip cuda' "$out/custom-op.log") skipped; $(tail -1 "$out/custom-op.log")"
say "  custom ops: $custom_line"
field custom_op "\"$custom_line\""

# --- elementwise bandwidth ----------------------------------------------------------------
kernel_ms() {  # the compiled steps' milliseconds of a --profile log
  awk '$3 == "compiled" {sum += $1} END {printf "%.4f", sum}' "$1"
}
n=$((64 * 1024 * 1024))
python3 scripts/gpu_check_models.py add "$work/add.onnx" "$n"
phase elementwise 60 "$minic" run "$work/add.onnx" --target cuda --profile --fill zeros
ms="$(kernel_ms "$out/elementwise.log")"
copy="$(timeout "$(limit 60)" python3 scripts/gpu_check_models.py torch-copy $((n * 4)) 2>>"$out/elementwise.log")"
ours="$(python3 -c "print(f'{3 * $n * 4 / ($ms * 1e-3) / 1e9:.1f}')" 2>/dev/null)"
ratio="$(python3 -c "print(f'{$ours / $copy * 100:.0f}')" 2>/dev/null)"
say "  relu(A + B), 64M floats: ${ms} ms, ${ours:-?} GB/s; copy ${copy:-?} GB/s: ${ratio:-?}%"
field elementwise "{\"kernel_ms\": ${ms:-null}, \"gbps\": ${ours:-null}, \"copy_gbps\": ${copy:-null}}"

# --- GEMM ---------------------------------------------------------------------------------
python3 scripts/gpu_check_models.py matmul "$work/mm.onnx" 4096 4096 4096
phase gemm 120 "$minic" run "$work/mm.onnx" --target cuda --profile --fill zeros
ms="$(kernel_ms "$out/gemm.log")"
torch_ms="$(timeout "$(limit 60)" python3 scripts/gpu_check_models.py torch-matmul 4096 2>>"$out/gemm.log")"
tflops() { python3 -c "print(f'{2 * 4096 ** 3 / ($1 * 1e-3) / 1e12:.2f}')" 2>/dev/null; }
say "  MatMul 4096^3 fp32: minic ${ms} ms ($(tflops "$ms") TFLOP/s); PyTorch ${torch_ms:-?} ms ($(tflops "${torch_ms:-0}") TFLOP/s)"
field gemm "{\"minic_ms\": ${ms:-null}, \"torch_ms\": ${torch_ms:-null}}"

(IFS=,; echo "{${json_fields[*]}}") > "$out/summary.json"
rm -rf "$work"
say "done in ${SECONDS} s"
