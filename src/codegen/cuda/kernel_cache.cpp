// The on-disk cache of NVRTC's output (see kernel_cache.h). Course module 6.
//
// Chapter: docs/module6-cuda.md#nvrtc-cuda-c-to-a-cubin
#include "kernel_cache.h"

#include "minic/support/file_cache.h"

namespace minic::codegen {

// The cubin, its PTX and NVRTC's log, each a part of the entry.
std::optional<CudaBinary> read_cached_binary(const std::string& key, const std::string& arch) {
  std::optional<std::vector<std::string>> parts =
      FileCache("cuda").read(key, {"ptx", "cubin", "log"});
  if (!parts || parts->at(1).empty()) return std::nullopt;
  return CudaBinary{arch, parts->at(0), parts->at(1), parts->at(2)};
}

void write_cached_binary(const std::string& key, const CudaBinary& binary) {
  FileCache("cuda").write(key,
                          {{"ptx", binary.ptx}, {"cubin", binary.cubin}, {"log", binary.log}});
}

}  // namespace minic::codegen
