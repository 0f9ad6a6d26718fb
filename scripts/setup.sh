#!/usr/bin/env bash
# Installs everything minic needs on a fresh Debian bookworm machine: the build tools and
# libraries from Debian's archive, and the Python packages the tests use from PyPI.
# Idempotent: a second run only checks that everything is present.
set -euo pipefail

# gcc: `cc` links the shared libraries `minic compile` writes. chromium: the test that
# loads a `minic report` page in a real browser (tests/report/). clang-19 and its runtimes:
# the sanitizer build of `scripts/test.sh --sanitize`. pybind11-dev: the Python package
# (python/). libdnnl-dev: oneDNN, the external back end of src/backends/onednn.
APT_PACKAGES=(
  cmake ninja-build ccache gcc g++ python3-pip clang-19 libclang-rt-19-dev
  llvm-19-dev llvm-19-tools
  libprotobuf-dev protobuf-compiler libonnx-dev
  libfmt-dev catch2 libcli11-dev nlohmann-json3-dev libxgboost-dev graphviz chromium
  pybind11-dev libdnnl-dev
)
# nvidia-cuda-nvrtc: NVRTC for the CUDA back end's tests where there is no CUDA toolkit;
# nvidia-cuda-cuobjdump and -nvdisasm: the cubins' machine code (`minic opt --emit sass`).
# openvino: the second CPU peer of benchmarks/run. pytest: the Python package's tests.
PY_PACKAGES=(numpy onnx==1.22.0 onnxruntime matplotlib openvino==2026.4.1 pytest
             nvidia-cuda-nvrtc==13.0.88 nvidia-cuda-cuobjdump==13.2.78
             nvidia-cuda-nvdisasm==13.2.78)

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import numpy, onnx, onnxruntime, matplotlib, openvino, pytest, importlib.metadata as m
assert onnx.__version__ == "1.22.0" and m.version("nvidia-cuda-nvrtc") == "13.0.88"
assert m.version("nvidia-cuda-cuobjdump") == m.version("nvidia-cuda-nvdisasm") == "13.2.78"' \
    2>/dev/null; then
  echo "setup: installing ${PY_PACKAGES[*]} for $PYTHON"
  "$PYTHON" -m pip install -q "${PY_PACKAGES[@]}" 2>/dev/null ||
    "$PYTHON" -m pip install -q --break-system-packages "${PY_PACKAGES[@]}"
fi

# `import minic` for this Python: a .pth file in its site-packages names build/python,
# where the build lays out the package (python/CMakeLists.txt).
site_packages=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
package_dir="$(cd "$(dirname "$0")/.." && pwd)/build/python"
if [ "$(cat "$site_packages/minic.pth" 2>/dev/null)" != "$package_dir" ]; then
  echo "$package_dir" > "$site_packages/minic.pth"
  echo "setup: $site_packages/minic.pth names $package_dir (import minic after the build)"
fi
echo "setup: done"
