"""What `benchmarks/run` measures: the models, the GEMMs, and their inputs. Course module 8.

The suite is the nine light models of the onnx package (backend/test/data/light: real
architectures whose weights are ConstantOfShape nodes, so the files are small), the example
models (ResNet-18, MobileNetV2, the BERT-style encoder and the same encoder at BERT-base's
size, a 100-step Loop recurrence, a bidirectional LSTM, ResNet-50 with random weights, built
by examples/models/build_models.py; the committed MLP), one-node MatMul models: square
N x N x N and the shapes of a BERT layer's projections, and int8 models: ResNet-18,
MobileNetV2, the encoder, BERT-base, the light ResNet-50 (its weights folded first) and
ResNet-50 with random weights quantised by ONNX Runtime's quantize_static (QDQ format, int8
weights per channel, uint8 activations, calibrated on 8 random inputs);
ResNet-18, the encoder, BERT-base and both ResNet-50s quantised by `minic quantize` the
same way (NAME_minic_int8); and the two encoders quantised by ONNX Runtime's
quantize_dynamic (NAME_dynamic_int8: int8 weights, each MatMul's activations quantised at
run time by DynamicQuantizeLinear). Every runtime runs each file as it is. A MatMul's
first operand is the model's input (activations); the second is an initializer (weights),
as in a real model, so ORT may prepack it.
"""

import os
import re
import subprocess
import sys
from dataclasses import dataclass

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
EXAMPLES_DIR = os.path.join(REPO, "examples", "models")

from compare_with_ort import random_inputs  # the model tests' input generator

LIGHT_MODELS = ["bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50",
                "shufflenet", "squeezenet", "vgg19", "zfnet512"]
BUILT_MODELS = ["resnet18", "mobilenetv2", "bert_encoder", "bert_base", "loop_rnn",
                "lstm_tagger", "resnet50_random"]
SQUARE_GEMMS = [256, 512, 1024, 2048]
# BERT-base-like layer at sequence length 128, hidden 256, FFN 1024 (the example encoder):
# Q/K/V/output projections, FFN up, FFN down. M x K x N.
BERT_GEMMS = [(128, 256, 256), (128, 256, 1024), (128, 1024, 256)]
# --quick without --models: a small CNN, a deep CNN, the MLP and the smaller GEMMs.
QUICK = ["squeezenet", "resnet50", "mlp", "matmul_256", "matmul_512", "matmul_128x256x256",
         "matmul_128x256x1024", "matmul_128x1024x256"]
# The int8 models: `NAME_int8` is the built model NAME quantised by ONNX Runtime,
# `NAME_minic_int8` by `minic quantize`, `NAME_dynamic_int8` by ONNX Runtime's
# quantize_dynamic (prepare).
# resnet50 is the light model (its weights all one value: its int8 time is real, its
# accuracy says nothing), resnet50_random the same network with random weights.
INT8_MODELS = ["resnet18", "mobilenetv2", "bert_encoder", "bert_base", "resnet50",
               "resnet50_random"]
MINIC_INT8_MODELS = ["resnet18", "bert_encoder", "bert_base", "resnet50", "resnet50_random"]
DYNAMIC_INT8_MODELS = ["bert_encoder", "bert_base"]


@dataclass
class Benchmark:
    name: str
    kind: str            # "model" or "gemm"
    source: str          # "light", "example", "built", "gemm" or "int8"
    path: str = ""       # the .onnx file, once it exists
    mkn: tuple = None    # GEMM shape (M, K, N)

    @property
    def flops(self):
        m, k, n = self.mkn
        return 2 * m * k * n


def gemm_name(m, k, n):
    return f"matmul_{m}" if m == k == n else f"matmul_{m}x{k}x{n}"


def light_models_dir():
    """The light models: build/onnx-data/light, the copy the build's tests use
    (tests/CMakeLists.txt), else those of the onnx package scripts/setup.sh installs."""
    linked = os.path.join(REPO, "build", "onnx-data", "light")
    if os.path.isdir(linked):
        return linked
    import onnx
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def full_suite():
    """Every benchmark, models first, in a fixed order."""
    light = light_models_dir()
    suite = [Benchmark(n, "model", "light", os.path.join(light, f"light_{n}.onnx"))
             for n in LIGHT_MODELS]
    suite += [Benchmark(n, "model", "built") for n in BUILT_MODELS]
    suite.append(Benchmark("mlp", "model", "example", os.path.join(EXAMPLES_DIR, "mlp.onnx")))
    shapes = [(n, n, n) for n in SQUARE_GEMMS] + BERT_GEMMS
    suite += [Benchmark(gemm_name(*mkn), "gemm", "gemm", mkn=mkn) for mkn in shapes]
    suite += [Benchmark(f"{n}_int8", "model", "int8") for n in INT8_MODELS]
    suite += [Benchmark(f"{n}_minic_int8", "model", "int8") for n in MINIC_INT8_MODELS]
    suite += [Benchmark(f"{n}_dynamic_int8", "model", "int8") for n in DYNAMIC_INT8_MODELS]
    return suite


def select(suite, patterns, quick):
    """The benchmarks whose name matches one of the comma-separated regular expressions
    (searched anywhere in the name); with no patterns, the quick subset or everything."""
    if patterns:
        expressions = [re.compile(p) for p in patterns.split(",") if p]
        return [b for b in suite if any(e.search(b.name) for e in expressions)]
    if quick:
        return [b for b in suite if b.name in QUICK]
    return list(suite)


def build_gemm_model(bench, models_dir):
    """Writes a one-node MatMul model, Y[M,N] = A[M,K] @ B[K,N], B an initializer."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    m, k, n = bench.mkn
    weights = np.random.default_rng(7).uniform(-1, 1, (k, n)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["A", "B"], ["Y"], name="matmul")], bench.name,
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(weights, "B")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="minic benchmarks")
    model.ir_version = 8
    onnx.checker.check_model(model)
    path = os.path.join(models_dir, f"{bench.name}.onnx")
    onnx.save(model, path)
    return path


def float_model_of(bench):
    """The built model an int8 benchmark quantises: resnet18 for resnet18_minic_int8."""
    return bench.name[:-len("_int8")].removesuffix("_minic").removesuffix("_dynamic")


def prepare(benchmarks, models_dir, log, minic="build/minic"):
    """Gives every benchmark its .onnx file: builds the example models and GEMMs that are
    not in models_dir yet (the builds are deterministic, so a file there is reused)."""
    os.makedirs(models_dir, exist_ok=True)
    # An int8 model needs its float model built first.
    floats = {b.name for b in benchmarks if b.source == "built"}
    floats |= {float_model_of(b) for b in benchmarks
               if b.source == "int8" and float_model_of(b) not in LIGHT_MODELS}
    to_build = [name for name in sorted(floats)
                if not os.path.exists(os.path.join(models_dir, f"{name}.onnx"))]
    if to_build:
        log(f"building {', '.join(to_build)} with examples/models/build_models.py")
        subprocess.run([sys.executable, os.path.join(EXAMPLES_DIR, "build_models.py"),
                        "--out", models_dir, *to_build], check=True, stdout=subprocess.DEVNULL)
    for bench in benchmarks:
        if bench.source == "light" and not os.path.exists(bench.path):
            sys.exit(f"benchmarks: {bench.path} is missing (scripts/setup.sh installs the onnx "
                     "package that has the light models)")
        if bench.source == "built":
            bench.path = os.path.join(models_dir, f"{bench.name}.onnx")
        elif bench.source == "gemm":
            bench.path = build_gemm_model(bench, models_dir)
        elif bench.source == "int8":
            bench.path = os.path.join(models_dir, f"{bench.name}.onnx")
            source = os.path.join(models_dir, f"{float_model_of(bench)}.onnx")
            if float_model_of(bench) in LIGHT_MODELS:
                source = os.path.join(light_models_dir(), f"light_{float_model_of(bench)}.onnx")
            if os.path.exists(bench.path):
                pass
            elif bench.name.endswith("_dynamic_int8"):
                log(f"quantising {float_model_of(bench)} with onnxruntime's quantize_dynamic")
                quantize_model_dynamic(source, bench.path)
            elif bench.name.endswith("_minic_int8"):
                log(f"quantising {float_model_of(bench)} with minic quantize")
                subprocess.run([minic, "quantize", source, "-o", bench.path, "--per-channel",
                                "--calibrate-random", "8", "--held-out", "0"], check=True,
                               stdout=subprocess.DEVNULL)
            else:
                log(f"quantising {float_model_of(bench)} with onnxruntime's quantize_static")
                if float_model_of(bench) in LIGHT_MODELS:
                    source = folded_light_model(source, models_dir, minic)
                quantize_model(source, bench.path)


def folded_light_model(source, models_dir, minic):
    """A light model as ONNX Runtime's quantiser can take it: its ConstantOfShape weights
    folded into initializers (`minic opt --passes fold-constants --emit onnx`; the
    quantiser would quantise them as activations), and its opset 9 converted to 13 by
    ONNX's version converter (per-channel DequantizeLinear begins at 13). Returns the path."""
    import onnx
    from onnx import version_converter

    name = os.path.splitext(os.path.basename(source))[0]
    folded = os.path.join(models_dir, f"{name}_folded.onnx")
    subprocess.run([minic, "opt", source, "--passes", "fold-constants", "--emit", "onnx",
                    "-o", folded], check=True, stdout=subprocess.DEVNULL)
    onnx.save(version_converter.convert_version(onnx.load(folded), 13), folded)
    return folded


def quantize_model(source, destination):
    """Writes `source` quantised by ONNX Runtime in the QDQ format: int8 weights per output
    channel, uint8 activations, ranges calibrated (min-max) on 8 random inputs."""
    import logging

    import onnx
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)

    logging.getLogger().setLevel(logging.ERROR)  # the quantiser's advice on preprocessing
    model = onnx.load(source)

    class Calibration(CalibrationDataReader):
        def __init__(self):
            self.feeds = iter([random_inputs(model, seed) for seed in range(8)])

        def get_next(self):
            return next(self.feeds, None)

    quantize_static(source, destination, Calibration(), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8)


def quantize_model_dynamic(source, destination):
    """Writes `source` quantised by ONNX Runtime's quantize_dynamic: int8 weights (per
    tensor, symmetric), and each MatMul's activations quantised to uint8 at run time."""
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.getLogger().setLevel(logging.ERROR)
    quantize_dynamic(source, destination, weight_type=QuantType.QInt8)


def write_inputs(bench, inputs_dir, seed):
    """Random inputs for the model (the model tests' generator: normal(0, 1) floats, token
    ids within the embedding table, padding masks) as .npy files; returns name -> path."""
    import onnx

    model = onnx.load(bench.path, load_external_data=False)
    folder = os.path.join(inputs_dir, bench.name)
    os.makedirs(folder, exist_ok=True)
    paths = {}
    for index, (name, array) in enumerate(random_inputs(model, seed).items()):
        path = os.path.join(folder, f"input_{index}.npy")
        np.save(path, array)
        paths[name] = path
    return paths
