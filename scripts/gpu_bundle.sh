#!/usr/bin/env bash
# Prepares, on this machine, what scripts/gpu_check.sh needs on the GPU machine, which
# has no package registry and where only the checkout travels (64 MiB at most):
#
#   gpu-bundle/bin/       minic and minic-conformance from build/ (a release build), and
#                         the GELU custom op plugin (examples/custom_ops/)
#   gpu-bundle/lib.tar.xz the shared libraries they load that are not glibc's (libLLVM
#                         alone is 129 MB, about 26 MB compressed)
#   gpu-bundle/data.tar.xz ONNX's node tests of tests/onnx/node_cases.tsv and the light
#                         models, from build/onnx-data (the onnx package does not travel)
#
# gpu-bundle/ is ignored by git (.gitignore); name it in the device tool's `carry`:
#   scripts/gpu_bundle.sh && <device run> carry=[gpu-bundle] \
#     command="bash scripts/gpu_check.sh $OUT"
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
out=gpu-bundle

data="$build/onnx-data"  # tests/CMakeLists.txt links it
[ -d "$data/node" ] && [ -d "$data/light" ] ||
  { echo "gpu_bundle: no ONNX test data at $data: configure the build first" >&2; exit 1; }
plugin="$build/examples/custom_ops/libminic_gelu_ops.so"
for binary in "$build/minic" "$build/tests/onnx/minic-conformance" "$plugin"; do
  [ -x "$binary" ] || { echo "gpu_bundle: $binary is missing: build first" >&2; exit 1; }
done
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
cp "$build/minic" "$build/tests/onnx/minic-conformance" "$plugin" "$out/bin/"
# Their symbol tables are 2 MB of the 64 MiB the device tool carries. (The dynamic symbols
# that the plugin resolves against minic stay.)
strip "$out"/bin/*

# Every library the binaries load, but glibc's own (the GPU machine's is newer).
ldd "$build/minic" "$build/tests/onnx/minic-conformance" | awk '/=> \// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" "$out/lib/"; done
tar -C "$out" -cf - lib | xz -T2 -6 > "$out/lib.tar.xz"
rm -rf "$out/lib"

grep -v '^#' tests/onnx/node_cases.tsv | cut -f1 | sed 's|^|node/|' > "$out/cases.txt"
tar -C "$data" -cf - light -T "$out/cases.txt" | xz -T2 -6 > "$out/data.tar.xz"
rm "$out/cases.txt"
du -sh "$out" "$out"/*
total=$(du -sk "$out" | cut -f1)
if [ "$total" -gt $((60 * 1024)) ]; then
  echo "gpu_bundle: $out is ${total} KiB, too close to the 64 MiB the device tool carries" >&2
  exit 1
fi
echo "gpu_bundle: ready ($out, ${total} KiB)"
