// The on-disk cache of NVRTC's output (see kernel_cache.h). Course module 6.
//
// Chapter: docs/module6-cuda.md#nvrtc-cuda-c-to-a-cubin
#include "kernel_cache.h"

#include <fmt/format.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace minic::codegen {
namespace {

namespace fs = std::filesystem;

std::optional<fs::path> cache_dir() {
  auto from_env = [](const char* name) -> std::optional<fs::path> {
    const char* value = std::getenv(name);
    if (!value || !*value) return std::nullopt;
    return fs::path(value);
  };
  if (auto dir = from_env("MINIC_CACHE_DIR")) return *dir / "cuda";
  if (auto dir = from_env("XDG_CACHE_HOME")) return *dir / "minic" / "cuda";
  if (auto dir = from_env("HOME")) return *dir / ".cache" / "minic" / "cuda";
  return std::nullopt;
}

std::string fnv1a(const std::string& text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return fmt::format("{:016x}", hash);
}

std::optional<std::string> read_bytes(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

bool write_bytes(const fs::path& path, const std::string& bytes) {
  fs::path temporary = path;
  temporary += fmt::format(".tmp{}", getpid());
  {
    std::ofstream file(temporary, std::ios::binary);
    if (!file || !file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
      return false;
    }
  }
  std::error_code error;
  fs::rename(temporary, path, error);
  return !error;
}

}  // namespace

std::optional<CudaBinary> read_cached_binary(const std::string& key, const std::string& arch) {
  std::optional<fs::path> dir = cache_dir();
  if (!dir) return std::nullopt;
  fs::path base = *dir / fnv1a(key);
  std::optional<std::string> stored_key = read_bytes(base.string() + ".key");
  if (!stored_key || *stored_key != key) return std::nullopt;
  std::optional<std::string> ptx = read_bytes(base.string() + ".ptx");
  std::optional<std::string> cubin = read_bytes(base.string() + ".cubin");
  std::optional<std::string> log = read_bytes(base.string() + ".log");
  if (!ptx || !cubin || !log || cubin->empty()) return std::nullopt;
  return CudaBinary{arch, *ptx, *cubin, *log};
}

void write_cached_binary(const std::string& key, const CudaBinary& binary) {
  std::optional<fs::path> dir = cache_dir();
  if (!dir) return;
  std::error_code error;
  fs::create_directories(*dir, error);
  if (error) return;
  fs::path base = *dir / fnv1a(key);
  // The key last: an entry is complete once its key file is there.
  bool complete = write_bytes(base.string() + ".ptx", binary.ptx) &&
                  write_bytes(base.string() + ".cubin", binary.cubin) &&
                  write_bytes(base.string() + ".log", binary.log);
  if (complete) write_bytes(base.string() + ".key", key);
}

}  // namespace minic::codegen
