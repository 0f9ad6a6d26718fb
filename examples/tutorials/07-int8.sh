#!/usr/bin/env bash
# Tutorial 7 (course module 7): an int8 model, from quantisation to VNNI code.
#
# A small CNN (examples/models/build_models.py) is quantised by ONNX Runtime's
# quantize_static into the QDQ format: int8 weights, uint8 activations, and every float op
# bracketed by DequantizeLinear and QuantizeLinear. Then minic reads it: the qdq-to-integer
# pass turns each Conv and Gemm on dequantised operands into ConvInteger or MatMulInteger
# and one DequantizeLinear, fusion makes one int8 kernel of each with its requantisation,
# and the kernels compute four byte products at a time (dot4_u8i8, vpdpbusd). The
# tutorial compares the int8 model's outputs with the float model's (the error
# quantisation costs) and with ONNX Runtime running the same QDQ file, then times both.
# Then where the error arises, layer by layer, for each calibration method of
# `minic quantize` (section 5), and the pruned ResNet-18s of section 6.
#
# Run it from the repository root after building:
#   examples/tutorials/07-int8.sh [path/to/minic]
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

step "1. the float model, and its int8 version written by ONNX Runtime's quantiser"
python3 examples/models/build_models.py --out "$work" small_cnn
python3 - "$work" <<'PYTHON'
import logging, sys
import numpy as np
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                      quantize_static)
logging.getLogger().setLevel(logging.ERROR)
work = sys.argv[1]
class Calibration(CalibrationDataReader):  # 16 random images stand in for a data set
    def __init__(self):
        rng = np.random.default_rng(0)
        self.feeds = iter([{"input": rng.normal(0, 1, (1, 3, 32, 32)).astype(np.float32)}
                           for _ in range(16)])
    def get_next(self):
        return next(self.feeds, None)
quantize_static(f"{work}/small_cnn.onnx", f"{work}/small_cnn_int8.onnx", Calibration(),
                quant_format=QuantFormat.QDQ, per_channel=True,
                activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
print(f"wrote {work}/small_cnn_int8.onnx")
PYTHON
"$minic" inspect "$work/small_cnn_int8.onnx" | tee "$work/inspect.txt"
expect "DequantizeLinear" "$work/inspect.txt"
expect "QuantizeLinear" "$work/inspect.txt"

step "2. qdq-to-integer: each Conv and Gemm on the integers, dequantised once after"
"$minic" opt "$work/small_cnn_int8.onnx" --passes simplify,qdq-to-integer \
  --elide-constants | tee "$work/integer.txt"
expect "ConvInteger(" "$work/integer.txt"
expect "MatMulInteger(" "$work/integer.txt"

step "3. the default pipeline: one fused int8 kernel per layer, its requantisation inside"
"$minic" opt "$work/small_cnn_int8.onnx" --passes default --elide-constants \
  | tee "$work/fused.txt"
expect "@convintegerwords_dequantizelinear" "$work/fused.txt"

step "4. the kernels sum dot4_u8i8 over words of four channels; on a VNNI CPU, vpdpbusd"
"$minic" opt "$work/small_cnn_int8.onnx" --emit loops | grep -m 3 "dot4_u8i8" \
  | tee "$work/loops.txt"
expect "dot4_u8i8(" "$work/loops.txt"
"$minic" opt "$work/small_cnn_int8.onnx" --emit asm --target "llvm -mcpu=cascadelake" \
  | grep -c "vpdpbusd" | tee "$work/vnni.txt"
test "$(cat "$work/vnni.txt")" -gt 0

step "5. the int8 model against the float model and against ONNX Runtime, same input"
python3 -c "
import numpy as np
np.save('$work/image.npy', np.random.default_rng(7).normal(0, 1, (1, 3, 32, 32)).astype(np.float32))"
"$minic" run "$work/small_cnn.onnx" --input "input=$work/image.npy" --output-dir "$work/float"
"$minic" run "$work/small_cnn_int8.onnx" --input "input=$work/image.npy" \
  --output-dir "$work/int8"
python3 - "$work" <<'PYTHON'
import sys
import numpy as np
import onnxruntime as ort
work = sys.argv[1]
image = np.load(f"{work}/image.npy")
session = ort.InferenceSession(f"{work}/small_cnn_int8.onnx",
                               providers=["CPUExecutionProvider"])
ort_int8 = session.run(None, {"input": image})[0].ravel()
float_out = np.load(f"{work}/float/output_0.npy").ravel()
int8_out = np.load(f"{work}/int8/output_0.npy").ravel()
def cosine(a, b):
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))
print(f"minic int8 against minic float: max abs err {np.abs(int8_out - float_out).max():.4f}, "
      f"cosine similarity {cosine(int8_out, float_out):.5f}, "
      f"same top-1 class: {int8_out.argmax() == float_out.argmax()}")
print(f"minic int8 against ONNX Runtime int8: max abs err "
      f"{np.abs(int8_out - ort_int8).max():.4f}, cosine similarity "
      f"{cosine(int8_out, ort_int8):.5f}")
assert cosine(int8_out, float_out) > 0.99, "the int8 model lost too much accuracy"
assert cosine(int8_out, ort_int8) > 0.999, "minic and ONNX Runtime disagree on the int8 model"
PYTHON

step "6. the time of each (one thread; the ratio depends on the machine, nothing is asserted)"
"$minic" bench "$work/small_cnn.onnx" --threads 1
"$minic" bench "$work/small_cnn_int8.onnx" --threads 1

step "7. each layer's error, for each calibration method of minic quantize (section 5)"
python3 examples/int8/calibration_layers.py "$work/small_cnn.onnx" --minic "$minic" \
  | tee "$work/layers.txt"
expect "relative RMS error of each layer's output" "$work/layers.txt"
# Three layers (two Conv, one Gemm), each losing a few percent at most under every method.
awk 'NR > 2 { n++; for (i = 2; i <= NF; i++) if ($i + 0 > 0.1) bad = 1 }
     END { exit !(n == 3 && !bad) }' "$work/layers.txt"

step "8. a pruned ResNet-18: zeros cost the same time, fewer channels less (section 6)"
python3 examples/pruning/prune_resnet18.py --out "$work/pruned"
python3 -c "
import numpy as np
np.save('$work/image224.npy', np.random.default_rng(3).normal(0, 1, (1, 3, 224, 224)).astype(np.float32))"
for name in resnet18_sparse90 resnet18_channels50; do
  "$minic" run "$work/pruned/$name.onnx" --input "input=$work/image224.npy" \
    --output-dir "$work/pruned/$name"
done
python3 - "$work" <<'PYTHON'
import sys
import numpy as np
import onnxruntime as ort
work = sys.argv[1]
image = np.load(f"{work}/image224.npy")
for name in ["resnet18_sparse90", "resnet18_channels50"]:
    session = ort.InferenceSession(f"{work}/pruned/{name}.onnx",
                                   providers=["CPUExecutionProvider"])
    expected = session.run(None, {"input": image})[0]
    got = np.load(f"{work}/pruned/{name}/output_0.npy")
    error = np.abs(got - expected).max() / np.abs(expected).max()
    print(f"{name}: minic against ONNX Runtime, max abs error / max |output| {error:.2e}")
    assert error < 1e-4, f"minic and ONNX Runtime disagree on {name}"
PYTHON
for name in resnet18 resnet18_sparse90 resnet18_channels50; do
  "$minic" bench "$work/pruned/$name.onnx" --threads 1 --repeat 5
done
