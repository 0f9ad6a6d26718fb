#!/usr/bin/env bash
# Builds minic and runs its whole test suite through ctest: Catch2 unit tests, lit +
# FileCheck golden tests, ONNX conformance (node tests and light models), the example
# models against ONNX Runtime, the tutorials and the docs check (tests/docs/).
#
#   scripts/test.sh              release build in build/, every test
#   scripts/test.sh --sanitize   ASan + UBSan build in build-sanitize/, unit and
#                                conformance tests but the heavy ones
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

build_dir=build
cmake_flags=(-DCMAKE_BUILD_TYPE=Release)
ctest_flags=()
targets=()
if [ "${1:-}" = "--sanitize" ]; then
  build_dir=build-sanitize
  # -O1 -g1 (line tables only): what ASan recommends, and the build takes less than half
  # the time of -O2 -g; the reports still name the file and line of every frame. clang:
  # it compiles this build in two thirds of GCC's time.
  cmake_flags=(-DCMAKE_CXX_COMPILER=clang++-19 -DCMAKE_BUILD_TYPE=RelWithDebInfo
               "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DMINIC_SANITIZE=ON)
  # Without the `heavy` tests (the light models through the interpreter, the graph passes
  # or compiled code, and the compiled node tests: tests/CMakeLists.txt and
  # tests/onnx/CMakeLists.txt): the release run has them. Only what those tests run is
  # built (not the exercises' executables).
  ctest_flags=(-L "unit|conformance" -LE heavy)
  targets=(minic tests/minic-unit-tests tests/onnx/minic-conformance)
  for target in onnx_importer graph_text loop_text trace_text; do
    targets+=("tests/fuzz/libfuzzer/minic-fuzz-replay-$target")
  done
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
fi

jobs="${MINIC_JOBS:-2}"
cmake -S . -B "$build_dir" -G Ninja "${cmake_flags[@]}" >/dev/null
ninja -C "$build_dir" -j "$jobs" "${targets[@]}"
cd "$build_dir"
ctest --output-on-failure -j "$jobs" "${ctest_flags[@]}"
