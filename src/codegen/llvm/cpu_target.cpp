// CPU targets as LLVM knows them: the host's, and one named by -mcpu. Course module 6,
// docs/module6-llvm-cpu.md#the-target.
//
// What a CPU name means -- its features, so its vector registers -- is in LLVM's subtarget
// tables (MCSubtargetInfo); the host's features come from the host itself
// (sys::getHostCPUFeatures, cpuid on x86). Both give a Target (include/minic/target/target.h):
//   1. the features, sorted, as LLVM is given them ("+avx2,-avx512f,...");
//   2. the vector registers they give: 64-byte zmm (32 of them) with AVX-512, 32-byte ymm
//      (16) with AVX, 16 bytes otherwise; AArch64's 32 NEON registers of 16 bytes;
//   3. the host's caches and cores (host_resources), the machine the code runs on;
//   4. for the host, -mattr: the features where the host differs from LLVM's idea of its
//      CPU (a virtual machine may hide some), so that the text names the host exactly.
//
// Chapter: docs/module6-llvm-cpu.md#the-target
#include "target.h"

#include "minic/support/error.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>

namespace minic::codegen {
namespace {

using FeatureMap = std::map<std::string, bool>;  // name → enabled

std::unique_ptr<llvm::MCSubtargetInfo> subtarget_info(const std::string& cpu,
                                                      const std::string& features) {
  llvm_backend::initialize_llvm();
  std::string triple = llvm::sys::getProcessTriple();
  std::string message;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, message);
  if (!target) fail("LLVM backend: no target for the host ({}): {}", triple, message);
  return std::unique_ptr<llvm::MCSubtargetInfo>(
      target->createMCSubtargetInfo(triple, cpu, features));
}

// Every feature LLVM's tables know for the host's architecture, by name.
std::set<std::string> known_features() {
  std::set<std::string> names;
  std::unique_ptr<llvm::MCSubtargetInfo> info = subtarget_info("", "");
  for (const llvm::SubtargetFeatureKV& feature : info->getAllProcessorFeatures()) {
    names.insert(feature.Key);
  }
  return names;
}

// Step 1 for a named CPU: the features LLVM enables for it (with `mattr` applied).
FeatureMap named_features(const std::string& cpu, const std::vector<std::string>& mattr) {
  std::unique_ptr<llvm::MCSubtargetInfo> info =
      subtarget_info(cpu, fmt::format("{}", fmt::join(mattr, ",")));
  FeatureMap features;
  for (const llvm::SubtargetFeatureKV& feature : info->getAllProcessorFeatures()) {
    if (info->getFeatureBits()[feature.Value]) features[feature.Key] = true;
  }
  return features;
}

// The host's features as its CPU reports them.
FeatureMap reported_host_features() {
  FeatureMap features;
  for (const auto& feature : llvm::sys::getHostCPUFeatures()) {
    features[feature.getKey().str()] = feature.getValue();
  }
  return features;
}

bool enabled(const FeatureMap& features, const std::string& name) {
  auto found = features.find(name);
  return found != features.end() && found->second;
}

// Steps 1-3: the target of `cpu` with these features.
CpuTarget cpu_with_features(const std::string& cpu, const FeatureMap& features) {
  CpuTarget target;
  target.cpu = cpu;
  for (const auto& [name, on] : features) target.features.push_back((on ? "+" : "-") + name);
  std::sort(target.features.begin(), target.features.end());
  llvm::Triple triple(llvm::sys::getProcessTriple());
  if (triple.isX86()) {
    // LLVM 19 can keep AVX-512's instructions to 256 bits (-evex512): ymm only then.
    bool zmm = enabled(features, "avx512f") && features.count("evex512") != 0
                   ? enabled(features, "evex512")
                   : enabled(features, "avx512f");
    target.vector_bytes = zmm ? 64 : enabled(features, "avx") ? 32 : 16;
    target.vector_registers = enabled(features, "avx512f") ? 32 : 16;
  } else if (triple.isAArch64()) {
    target.vector_bytes = 16;
    target.vector_registers = 32;
  }
  target.caches = host_resources().caches;
  target.cores = host_resources().cores;
  return target;
}

void check_cpu_and_features(const std::string& cpu, const std::vector<std::string>& mattr) {
  std::string attributes = mattr.empty() ? "" : fmt::format(" -mattr={}", fmt::join(mattr, ","));
  std::string where = fmt::format("target 'llvm -mcpu={}{}'", cpu, attributes);
  if (!subtarget_info("", "")->isCPUStringValid(cpu)) {
    fail("{}: LLVM knows no CPU '{}' for {} (try x86-64-v3, skylake-avx512, znver4)", where, cpu,
         llvm::Triple(llvm::sys::getProcessTriple()).getArchName().str());
  }
  std::set<std::string> known = known_features();
  for (const std::string& feature : mattr) {
    if (!known.count(feature.substr(1))) {
      fail("{}: LLVM knows no CPU feature '{}'", where, feature.substr(1));
    }
  }
}

Target read_host_target() {
  std::string cpu = llvm::sys::getHostCPUName().str();
  FeatureMap reported = reported_host_features();
  CpuTarget host = cpu_with_features(cpu, reported);
  // Step 4: where the host differs from its CPU's name.
  FeatureMap named = named_features(cpu, {});
  std::set<std::string> known = known_features();
  for (const auto& [name, on] : reported) {
    if (known.count(name) && on != enabled(named, name)) {
      host.mattr.push_back((on ? "+" : "-") + name);
    }
  }
  std::sort(host.mattr.begin(), host.mattr.end());
  return Target(std::move(host));
}

}  // namespace

Target host_target() {
  static const Target host = read_host_target();
  return host;
}

Target cpu_target(const std::string& cpu, const std::vector<std::string>& mattr) {
  check_cpu_and_features(cpu, mattr);
  CpuTarget target = cpu_with_features(cpu, named_features(cpu, mattr));
  target.mattr = mattr;
  std::sort(target.mattr.begin(), target.mattr.end());
  return Target(std::move(target));
}

void check_runs_here(const Target& target) {
  if (!target.is_cpu()) fail("target {}: the CUDA back end is not built yet", target.str());
  static const FeatureMap host = reported_host_features();
  std::vector<std::string> missing;
  for (const std::string& feature : target.cpu().features) {
    if (feature[0] != '+') continue;
    // Only the features the host reports, on or off: the others (tuning flags such as
    // fast-gather, or what every CPU of the architecture has) add no instruction it lacks.
    auto found = host.find(feature.substr(1));
    if (found != host.end() && !found->second) missing.push_back(feature.substr(1));
  }
  if (missing.empty()) return;
  fail("target {}: this machine ({}) lacks CPU features its code needs: {}; compile for it "
       "(minic compile, opt --emit asm) but run it elsewhere",
       target.str(), host_target().cpu().cpu, fmt::join(missing, ", "));
}

}  // namespace minic::codegen
