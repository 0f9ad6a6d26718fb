# lit configuration for the exercises' tests (exercises/README.md).
#
# An exercise's tests are the .mgraph, .mloop and .test files of its folder, as in
# tests/lit: `RUN:` lines that call minic and check its output with FileCheck. These
# substitutions are its own:
#   %minic  the binary under test: --param minic=PATH (minic, or minic-solved when ctest
#           proves the solution), build/minic by default;
#   %seed   the seed of the inputs a student does not see (each exercise's hidden.py
#           makes them at test time): --param seed=N, or a new one each run, which the
#           failing command line shows;
#   %catch2 the exercises' Catch2 tests (test_*.cpp), linked with the starting code
#           (build/exercises/minic-exercise-tests), or with --param solved=1 with the
#           solutions (minic-exercise-tests-solved);
#   %files  the folder of the files a student writes that are not compiled into minic (a
#           schedule trace): the exercise's own, or with --param solved=1 its solution's
#           (solutions/NAME/), as ctest's solved run passes;
#   %onnx_node  ONNX's backend node tests (build/onnx-data/node, which the tests' CMake
#           links to the `onnx` package's data).
import os
import random
import lit.formats

config.name = "minic-exercises"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mgraph", ".test", ".mloop"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["solutions", "lit.cfg.py", "lit.site.cfg.py.in"]

minic = lit_config.params.get("minic", os.path.join(config.minic_bin_dir, "minic"))
# One output folder per binary under test: ctest runs an exercise on minic and on
# minic-solved at once, and the two runs must not share their temporary files.
config.test_exec_root = os.path.join(
    config.minic_bin_dir, "exercises", "lit-out", os.path.basename(minic))
seed = lit_config.params.get("seed", str(random.randrange(1 << 31)))
# lit substitutes these before %S, so the solved form of %files can name the test's folder
# and leave the shell to take it apart.
files = "$(dirname %S)/solutions/$(basename %S)" if lit_config.params.get("solved") else "%S"
config.substitutions.append(("%files", files))
catch2 = os.path.join(config.minic_bin_dir, "exercises", "minic-exercise-tests" +
                      ("-solved" if lit_config.params.get("solved") else ""))
config.substitutions.append(("%catch2", catch2))
config.substitutions.append(("%onnx_node", os.path.join(config.minic_bin_dir, "onnx-data", "node")))
config.substitutions.append(("%minic", minic))
config.substitutions.append(("%seed", seed))
config.environment["PATH"] = os.pathsep.join(
    [os.path.dirname(config.filecheck), config.environment.get("PATH", "")])
