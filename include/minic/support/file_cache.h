// A cache of compiled code on disk: values stored under a text key, so that compiling the
// same thing again reads the result instead. Course module 6.
//
// NVRTC's cubins (src/codegen/cuda/kernel_cache.cpp) and LLVM's object code for each
// kernel (src/codegen/llvm/target.cpp) are cached this way. A cache is a folder,
// $MINIC_CACHE_DIR/NAME, else $XDG_CACHE_HOME/minic/NAME, else ~/.cache/minic/NAME. An
// entry is a file per part, HASH.PART, and HASH.key holding the whole key, with HASH the
// key's 64-bit FNV-1a hash; the key is compared on reading, so a hash collision is a miss,
// and written last, so an entry is complete once its key is there. Files are written to
// temporary names and renamed into place, so two processes filling the cache at once see
// whole files. A cache that cannot be read or written is no cache: compiling again gives
// the same result.
//
// Chapter: docs/module6-llvm-cpu.md#4-optimisation-and-the-jit
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace minic {

// The 64-bit FNV-1a hash of `text`: small and stable (std::hash may differ between
// libraries), for cache keys and workload keys.
uint64_t fnv1a(const std::string& text);

class FileCache {
 public:
  // The cache in the folder for `name` ("cuda", "llvm"); none where no folder is found.
  explicit FileCache(const std::string& name);

  // The parts stored under `key`, in the order of `parts` (their file suffixes), or
  // nullopt if any is missing or the entry is another key's.
  std::optional<std::vector<std::string>> read(const std::string& key,
                                               const std::vector<std::string>& parts) const;

  // Stores each (suffix, bytes) part under `key`; failures are ignored.
  void write(const std::string& key,
             const std::vector<std::pair<std::string, std::string>>& parts) const;

 private:
  std::optional<std::string> dir_;
};

}  // namespace minic
