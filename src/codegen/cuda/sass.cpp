// disassemble_cubin: a cubin's machine code (SASS) through NVIDIA's cuobjdump (see
// include/minic/codegen/cuda.h). Course module 6.
//
// The CUDA toolkit has cuobjdump in its bin/; so does the PyPI wheel nvidia-cuda-cuobjdump
// (under nvidia/cu13/bin/), which reads NVRTC's cubins. minic writes the cubin to a
// temporary file and reads what `cuobjdump -sass FILE` prints.
//
// Chapter: docs/module6-cuda.md#nvrtc-cuda-c-to-a-cubin
#include "minic/codegen/cuda.h"

#include "minic/support/error.h"
#include "minic/support/file.h"

#include <fmt/format.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace minic::codegen {
namespace {

std::optional<std::string> find_cuobjdump(std::string& tried) {
  std::vector<std::string> candidates;
  if (const char* path = std::getenv("MINIC_CUOBJDUMP"); path && *path) candidates.push_back(path);
  if (const char* path = std::getenv("PATH")) {
    std::string dirs = path;
    size_t start = 0;
    while (start <= dirs.size()) {
      size_t end = dirs.find(':', start);
      if (end == std::string::npos) end = dirs.size();
      if (end > start) candidates.push_back(dirs.substr(start, end - start) + "/cuobjdump");
      start = end + 1;
    }
  }
  candidates.push_back("/usr/local/cuda/bin/cuobjdump");
  for (const std::string& candidate : candidates) {
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  tried = "$MINIC_CUOBJDUMP, PATH and /usr/local/cuda/bin";
  return std::nullopt;
}

}  // namespace

std::string disassemble_cubin(const CudaBinary& binary) {
  std::string tried;
  std::optional<std::string> cuobjdump = find_cuobjdump(tried);
  if (!cuobjdump) {
    fail("--emit sass needs cuobjdump, which is not in {}: install the CUDA toolkit or "
         "`pip install nvidia-cuda-cuobjdump` and set MINIC_CUOBJDUMP to its "
         "nvidia/cu13/bin/cuobjdump",
         tried);
  }
  std::filesystem::path file = std::filesystem::temp_directory_path() /
                               fmt::format("minic-{}-{}.cubin", getpid(), binary.arch);
  write_file(file.string(), binary.cubin);
  std::string command = fmt::format("'{}' -sass '{}' 2>&1", *cuobjdump, file.string());
  std::string text;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) fail("could not run {}", *cuobjdump);
  char buffer[4096];
  size_t count = 0;
  while ((count = fread(buffer, 1, sizeof buffer, pipe)) > 0) text.append(buffer, count);
  int status = pclose(pipe);
  std::filesystem::remove(file);
  if (status != 0) fail("{} -sass failed:\n{}", *cuobjdump, text);
  return text;
}

}  // namespace minic::codegen
