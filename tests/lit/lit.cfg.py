# lit configuration for minic's golden text tests.
#
# Each test is a text file (.mgraph, .test) whose `RUN:` lines call minic and pipe its
# output through FileCheck, e.g.
#   // RUN: minic opt %s --passes=dce | FileCheck %s
# A test that needs several files holds them all and cuts itself into them with LLVM's
# split-file (beside FileCheck, so on PATH): schedule/*.test, see schedule/README.md.
# %minic is build/minic, or the binary --param minic=PATH names: ctest runs the suite on
# minic-solved too (exercises/README.md), with outputs and a kernel cache of its own.
import os
import shutil
import lit.formats

config.name = "minic"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mgraph", ".test", ".mloop"]
config.test_source_root = os.path.dirname(__file__)
minic = lit_config.params.get("minic")
own = "-" + os.path.basename(minic) if minic else ""
config.test_exec_root = os.path.join(config.minic_bin_dir, "tests", "lit-out" + own)
config.excludes = ["lit.cfg.py", "lit.site.cfg.py.in", "Inputs"]

config.substitutions.append(("%minic", minic or os.path.join(config.minic_bin_dir, "minic")))
# ONNX's backend test data, node/ and light/ (tests/CMakeLists.txt finds it).
config.substitutions.append(("%onnx", config.onnx_data))
config.substitutions.append(("%inputs", os.path.join(os.path.dirname(__file__), "Inputs")))
# The custom op plugin of examples/custom_ops/ (com.example.Gelu and FastGelu).
config.substitutions.append(("%gelu_ops", config.gelu_ops))
config.environment["PATH"] = os.pathsep.join(
    [config.minic_bin_dir, os.path.dirname(config.filecheck), config.environment.get("PATH", "")])

# NVRTC for `--emit ptx` and `minic compile --target cuda` (tests/CMakeLists.txt finds it).
config.environment["MINIC_NVRTC"] = config.nvrtc
config.environment["MINIC_CACHE_DIR"] = os.path.join(config.minic_bin_dir, "cache" + own)
# cuobjdump for `--emit sass`, with the nvdisasm it runs found beside it.
config.environment["MINIC_CUOBJDUMP"] = config.cuobjdump
config.environment["NVDISASM_PATH"] = os.path.dirname(config.cuobjdump)

# Tests that run Graphviz (`minic viz -o FILE.svg`) say `REQUIRES: graphviz`.
if shutil.which("dot"):
    config.available_features.add("graphviz")
