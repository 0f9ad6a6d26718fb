// Reading and writing whole files (include/minic/support/file.h). Course module 1.
//
// Chapter: docs/module1-overview.md#support-code-srcsupport
#include "minic/support/file.h"

#include "minic/support/error.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace minic {

std::string read_file(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) fail("{}: no such file", path);
  if (std::filesystem::is_directory(path, error)) fail("{}: is a directory, not a file", path);
  std::ifstream stream(path, std::ios::binary);
  if (!stream) fail("{}: cannot open the file for reading", path);
  std::ostringstream contents;
  contents << stream.rdbuf();
  if (stream.bad()) fail("{}: error while reading the file", path);
  return std::move(contents).str();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream stream(path, std::ios::binary | std::ios::trunc);
  stream << text;
  stream.close();
  if (!stream) fail("{}: cannot write the file", path);
}

}  // namespace minic
