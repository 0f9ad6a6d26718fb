// A target from its text form (include/minic/driver/target.h). Course module 6.
//
// Chapter: docs/module6-llvm-cpu.md#the-target
#include "minic/driver/target.h"

#include "minic/codegen/llvm.h"

namespace minic {

Target parse_target(std::string_view text) {
  TargetSpec spec = parse_target_spec(text);
  if (spec.kind == TargetKind::cuda) return cuda_target(spec.arch);
  const Target host = codegen::host_target();
  // The host's own text names the host, with the features it reports.
  if (!spec.cpu && spec.mattr.empty()) return host;
  if (spec.cpu == host.cpu().cpu && spec.mattr == host.cpu().mattr) return host;
  std::string cpu = spec.cpu ? *spec.cpu : host.cpu().cpu;
  return codegen::cpu_target(cpu, spec.mattr);
}

}  // namespace minic
