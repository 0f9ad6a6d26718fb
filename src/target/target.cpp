// The Target value, its text form, the CUDA table and the host's caches and cores
// (include/minic/target/target.h). Course module 6.
//
// Chapter: docs/module6-llvm-cpu.md#the-target
#include "minic/target/target.h"

#include "minic/support/error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>
#include <sstream>

namespace minic {
namespace {

constexpr int64_t kKiB = 1024;
constexpr const char* kDefaultCudaArch = "sm_90";

// The architectures of the CUDA table, with the numbers of each one's flagship part. Shared
// memory per block is the opt-in maximum (the default without opting in is 48 KiB).
struct CudaArchitecture {
  const char* arch;
  const char* part;
  int sm_count;
  int64_t shared_memory_per_sm;
  int64_t shared_memory_per_block;
  int64_t registers_per_sm;
};

constexpr std::array<CudaArchitecture, 5> kCudaArchitectures = {{
    {"sm_80", "A100", 108, 164 * kKiB, 163 * kKiB, 65536},
    {"sm_86", "RTX 3090", 82, 100 * kKiB, 99 * kKiB, 65536},
    {"sm_89", "RTX 4090", 128, 100 * kKiB, 99 * kKiB, 65536},
    {"sm_90", "H100 SXM", 132, 228 * kKiB, 227 * kKiB, 65536},
    {"sm_90a", "H100 SXM", 132, 228 * kKiB, 227 * kKiB, 65536},
}};

// "32 KiB", "1.5 MiB"; "unknown" for 0.
std::string size_text(int64_t bytes) {
  if (bytes == 0) return "unknown";
  if (bytes % (kKiB * kKiB) == 0) return fmt::format("{} MiB", bytes / (kKiB * kKiB));
  if (bytes >= kKiB * kKiB) return fmt::format("{:.1f} MiB", bytes / double(kKiB * kKiB));
  return fmt::format("{} KiB", bytes / kKiB);
}

// Splits "-mcpu=znver4" into its option "-mcpu" and value "znver4" (empty without '=').
std::pair<std::string, std::string> option_and_value(const std::string& word) {
  size_t equals = word.find('=');
  if (equals == std::string::npos) return {word, ""};
  return {word.substr(0, equals), word.substr(equals + 1)};
}

std::vector<std::string> split_features(const std::string& text, const std::string& where) {
  std::vector<std::string> features;
  std::stringstream stream(text);
  for (std::string feature; std::getline(stream, feature, ',');) {
    if (feature.size() < 2 || (feature[0] != '+' && feature[0] != '-')) {
      fail("{}: '{}' in -mattr is not +FEATURE or -FEATURE", where, feature);
    }
    features.push_back(feature);
  }
  if (features.empty()) fail("{}: -mattr names no feature", where);
  std::sort(features.begin(), features.end());
  return features;
}

// --- the host -------------------------------------------------------------------------------

// The first line of a file, or empty if it cannot be read.
std::string first_line(const std::string& path) {
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  return line;
}

// A sysfs cache size ("32K", "1M", "1024") in bytes; 0 if it does not read as one.
int64_t cache_bytes(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0) return 0;
  int64_t value = std::stoll(text.substr(0, digits));
  std::string unit = text.substr(digits);
  if (unit == "K") return value * kKiB;
  if (unit == "M") return value * kKiB * kKiB;
  return unit.empty() ? value : 0;
}

// The data caches of CPU 0: /sys/devices/system/cpu/cpu0/cache/indexN/{level,type,size}.
CacheSizes read_caches() {
  CacheSizes caches;
  for (int index = 0;; ++index) {
    std::string dir = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/", index);
    std::string level = first_line(dir + "level");
    if (level.empty()) break;
    std::string type = first_line(dir + "type");
    if (type == "Instruction") continue;
    int64_t bytes = cache_bytes(first_line(dir + "size"));
    if (level == "1") caches.l1d = bytes;
    if (level == "2") caches.l2 = bytes;
    if (level == "3") caches.l3 = bytes;
  }
  return caches;
}

int read_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(CPU_COUNT(&set), 1);
}

}  // namespace

const CpuTarget& Target::cpu() const {
  MINIC_CHECK(is_cpu());
  return std::get<CpuTarget>(value_);
}

const CudaTarget& Target::cuda() const {
  MINIC_CHECK(is_cuda());
  return std::get<CudaTarget>(value_);
}

int64_t Target::vector_lanes(DType dtype) const {
  if (!is_cpu()) fail("target {}: a GPU has no CPU vector registers", str());
  return std::max<int64_t>(cpu().vector_bytes / dtype_size(dtype), 1);
}

bool Target::has_feature(std::string_view feature) const {
  if (!is_cpu()) return false;
  const std::vector<std::string>& features = cpu().features;
  return std::find(features.begin(), features.end(), "+" + std::string(feature)) !=
         features.end();
}

std::string Target::str() const {
  if (is_cuda()) return "cuda -arch=" + cuda().arch;
  std::string text = "llvm -mcpu=" + cpu().cpu;
  if (!cpu().mattr.empty()) text += fmt::format(" -mattr={}", fmt::join(cpu().mattr, ","));
  return text;
}

std::string Target::describe() const {
  if (is_cuda()) {
    const CudaTarget& gpu = cuda();
    return fmt::format("{}\n  {} SMs; shared memory {} per SM, {} per block; {} registers per SM",
                       str(), gpu.sm_count, size_text(gpu.shared_memory_per_sm),
                       size_text(gpu.shared_memory_per_block), gpu.registers_per_sm);
  }
  const CpuTarget& c = cpu();
  return fmt::format("{}\n  {} vector registers of {} bytes ({} f32 lanes); caches L1d {}, "
                     "L2 {}, L3 {}; {} cores",
                     str(), c.vector_registers, c.vector_bytes, vector_lanes(DType::f32),
                     size_text(c.caches.l1d), size_text(c.caches.l2), size_text(c.caches.l3),
                     c.cores);
}

TargetSpec parse_target_spec(std::string_view text) {
  const std::string where = fmt::format("target '{}'", text);
  std::vector<std::string> words;
  std::stringstream stream{std::string(text)};
  for (std::string word; stream >> word;) words.push_back(word);
  if (words.empty()) fail("the target is empty: give `llvm -mcpu=NAME` or `cuda -arch=sm_XX`");
  TargetSpec spec;
  if (words[0] == "cuda") {
    spec.kind = TargetKind::cuda;
  } else if (words[0] != "llvm") {
    fail("{}: '{}' is not a kind of target (llvm or cuda)", where, words[0]);
  }
  bool has_mattr = false;
  for (size_t w = 1; w < words.size(); ++w) {
    auto [option, value] = option_and_value(words[w]);
    bool cpu_option = spec.kind == TargetKind::llvm && (option == "-mcpu" || option == "-mattr");
    bool gpu_option = spec.kind == TargetKind::cuda && option == "-arch";
    if (!cpu_option && !gpu_option) {
      fail("{}: '{}' is not an option of a {} target (it takes {})", where, words[w], words[0],
           spec.kind == TargetKind::llvm ? "-mcpu=NAME and -mattr=+F,-G" : "-arch=sm_XX");
    }
    if (value.empty()) fail("{}: '{}' needs a value ({}=...)", where, words[w], option);
    bool repeated = option == "-mcpu" ? spec.cpu.has_value()
                    : option == "-mattr" ? has_mattr
                                         : !spec.arch.empty();
    if (repeated) fail("{}: '{}' is given twice", where, option);
    if (option == "-mcpu") spec.cpu = value;
    if (option == "-arch") spec.arch = value;
    if (option == "-mattr") {
      spec.mattr = split_features(value, where);
      has_mattr = true;
    }
  }
  // `cuda` alone is Hopper's sm_90: the GPU of the course's machines (an H200).
  if (spec.kind == TargetKind::cuda && spec.arch.empty()) spec.arch = kDefaultCudaArch;
  return spec;
}

Target cuda_target(std::string_view arch) {
  for (const CudaArchitecture& known : kCudaArchitectures) {
    if (arch != known.arch) continue;
    CudaTarget gpu;
    gpu.arch = known.arch;
    gpu.sm_count = known.sm_count;
    gpu.shared_memory_per_sm = known.shared_memory_per_sm;
    gpu.shared_memory_per_block = known.shared_memory_per_block;
    gpu.registers_per_sm = known.registers_per_sm;
    return Target(std::move(gpu));
  }
  fail("cuda target: minic knows no architecture '{}' (known: {})", arch,
       fmt::join(cuda_architectures(), ", "));
}

std::vector<std::string> cuda_architectures() {
  std::vector<std::string> names;
  for (const CudaArchitecture& known : kCudaArchitectures) names.push_back(known.arch);
  return names;
}

const HostResources& host_resources() {
  static const HostResources host{read_caches(), read_cores()};
  return host;
}

}  // namespace minic
