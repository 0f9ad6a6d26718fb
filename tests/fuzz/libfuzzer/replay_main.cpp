// The replay driver: a main() that runs one libFuzzer entry point on saved inputs, so the
// regressions and seeds of tests/fuzz/libfuzzer/ run in the ordinary build (ctest label
// `fuzz`) without clang or libFuzzer. Course module 2.
//
//   minic-fuzz-replay-TARGET PATH...
//
// Each PATH is a file or a folder (its regular files, in name order, not recursive).
// Every input is passed to LLVMFuzzerTestOneInput; a finding aborts (fuzz_target.h), so
// the exit status is non-zero exactly when some input fails. A PATH that does not exist
// is an error too: a test that replays nothing must not pass.
//
// Chapter: docs/module2-graph-ir.md#libfuzzer-targets-every-parser-under-the-sanitizers
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> inputs_of(const fs::path& path) {
  if (!fs::is_directory(path)) return {path};
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(path)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

void replay(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::fprintf(stderr, "replay %s (%zu bytes)\n", file.c_str(), bytes.size());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PATH...  (files or folders of fuzz inputs)\n", argv[0]);
    return 2;
  }
  size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    const fs::path path(argv[i]);
    if (!fs::exists(path)) {
      std::fprintf(stderr, "error: %s does not exist\n", argv[i]);
      return 2;
    }
    for (const fs::path& file : inputs_of(path)) {
      replay(file);
      ++count;
    }
  }
  std::printf("replayed %zu inputs: no finding\n", count);
  return 0;
}
