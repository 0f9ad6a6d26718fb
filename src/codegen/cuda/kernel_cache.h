// The on-disk cache of NVRTC's output, keyed by a hash of the program and its options.
// Course module 6.
//
// NVRTC takes about half a second for the kernels of a model; `minic run --target cuda` on
// the same model again reads the cubin instead. The cache lives in $MINIC_CACHE_DIR/cuda,
// else $XDG_CACHE_HOME/minic/cuda, else ~/.cache/minic/cuda. An entry is four files named
// by the key's 64-bit FNV-1a hash: HASH.key (the whole key, compared on reading, so a hash
// collision is a miss), HASH.ptx, HASH.cubin and HASH.log, written to temporary names and
// renamed into place. A cache that cannot be read or written is no cache: compiling
// again gives the same result.
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
