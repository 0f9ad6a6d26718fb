// The on-disk cache of NVRTC's output, keyed by a hash of the program and its options.
// Course module 6.
//
// NVRTC takes about half a second for the kernels of a model; `minic run --target cuda` on
// the same model again reads the cubin instead. The cache is the FileCache "cuda"
// (include/minic/support/file_cache.h: $MINIC_CACHE_DIR/cuda, ...), an entry HASH.ptx,
// HASH.cubin and HASH.log beside its key.
//
// Chapter: docs/module6-cuda.md#nvrtc-cuda-c-to-a-cubin
#pragma once

#include "minic/codegen/cuda.h"

#include <optional>
#include <string>

namespace minic::codegen {

// The binary stored under `key`, or nullopt.
std::optional<CudaBinary> read_cached_binary(const std::string& key, const std::string& arch);
// Stores `binary` under `key`; failures are ignored.
void write_cached_binary(const std::string& key, const CudaBinary& binary);

}  // namespace minic::codegen
