// Every operator of ONNX's default domain beside what minic has for it (`minic inspect
// --ops`).
//
// Course module 2. The list comes from ONNX's own schema registry (libonnx, Debian's
// libonnx-dev), so it is every op the ONNX version minic builds against defines, not a
// copy kept here, and then the ops minic has that this version does not define yet (newer
// ones, such as Gelu from opset 20); what minic has comes from its op registry
// (src/ops/registry.cpp). An op is *compiled* when it has a compute rule (it lowers to
// loop IR and fuses), *reference only* when it runs on its reference kernel alone, and
// *missing* when minic refuses it.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#pragma once

#include <string>
#include <vector>

namespace minic {

// imported: the importer turns the op into something else (Constant becomes a value).
enum class OpSupport { compiled, reference_only, imported, missing };

struct OnnxOpStatus {
  std::string op;
  int onnx_version = 0;  // the opset of ONNX's latest form of the op; 0: not in libonnx
  OpSupport support = OpSupport::missing;
  int min_opset = 0;     // the opsets minic handles (0 when missing)
  int max_opset = 0;
};

// The default-domain ops libonnx defines (deprecated ones left out), sorted by name, then
// minic's ops that it does not define.
std::vector<OnnxOpStatus> onnx_op_statuses();

// The release of ONNX whose schemas libonnx holds ("1.12.0").
std::string onnx_schema_version();

// "compiled", "reference only" or "missing".
const char* support_name(OpSupport support);

}  // namespace minic
