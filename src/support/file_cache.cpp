// The on-disk cache of compiled code (include/minic/support/file_cache.h). Course
// module 6.
//
// Chapter: docs/module6-llvm-cpu.md#4-optimisation-and-the-jit
#include "minic/support/file_cache.h"

#include <fmt/format.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace minic {
namespace {

namespace fs = std::filesystem;

std::optional<fs::path> cache_root() {
  auto from_env = [](const char* name) -> std::optional<fs::path> {
    const char* value = std::getenv(name);
    if (!value || !*value) return std::nullopt;
    return fs::path(value);
  };
  if (auto dir = from_env("MINIC_CACHE_DIR")) return *dir;
  if (auto dir = from_env("XDG_CACHE_HOME")) return *dir / "minic";
  if (auto dir = from_env("HOME")) return *dir / ".cache" / "minic";
  return std::nullopt;
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

uint64_t fnv1a(const std::string& text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

FileCache::FileCache(const std::string& name) {
  if (std::optional<fs::path> root = cache_root()) dir_ = (*root / name).string();
}

std::optional<std::vector<std::string>> FileCache::read(
    const std::string& key, const std::vector<std::string>& parts) const {
  if (!dir_) return std::nullopt;
  const std::string base = (fs::path(*dir_) / fmt::format("{:016x}", fnv1a(key))).string();
  std::optional<std::string> stored_key = read_bytes(base + ".key");
  if (!stored_key || *stored_key != key) return std::nullopt;
  std::vector<std::string> values;
  for (const std::string& part : parts) {
    std::optional<std::string> bytes = read_bytes(base + "." + part);
    if (!bytes) return std::nullopt;
    values.push_back(std::move(*bytes));
  }
  return values;
}

void FileCache::write(const std::string& key,
                      const std::vector<std::pair<std::string, std::string>>& parts) const {
  if (!dir_) return;
  std::error_code error;
  fs::create_directories(*dir_, error);
  if (error) return;
  const std::string base = (fs::path(*dir_) / fmt::format("{:016x}", fnv1a(key))).string();
  for (const auto& [part, bytes] : parts) {
    if (!write_bytes(base + "." + part, bytes)) return;
  }
  write_bytes(base + ".key", key);  // last: the entry is complete
}

}  // namespace minic
