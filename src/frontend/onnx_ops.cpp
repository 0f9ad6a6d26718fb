// ONNX's default-domain operators beside minic's op registry (onnx_ops.h). Course module 2.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/frontend/onnx_ops.h"

#include "minic/ops/op.h"

#include <onnx/common/version.h>
#include <onnx/defs/schema.h>

#include <algorithm>
#include <map>

namespace minic {
namespace {

// `op` as minic has it: missing, or compiled / reference only / imported with its opsets.
OnnxOpStatus status_of(const std::string& op, int onnx_version) {
  OnnxOpStatus status{op, onnx_version};
  if (op == "Constant") {  // every opset's form becomes a constant value on import
    status.support = OpSupport::imported;
    status.min_opset = 1;
    status.max_opset = kMaxOpset;
  } else if (const OpSchema* ours = op_registry().find(op)) {
    status.support = ours->compute ? OpSupport::compiled : OpSupport::reference_only;
    status.min_opset = ours->min_opset;
    status.max_opset = ours->max_opset;
  }
  return status;
}

}  // namespace

std::vector<OnnxOpStatus> onnx_op_statuses() {
  // The newest form of each op: get_all_schemas lists every op once, at its latest version.
  std::map<std::string, int> latest;
  for (const onnx::OpSchema& schema : onnx::OpSchemaRegistry::get_all_schemas()) {
    if (!schema.domain().empty() && schema.domain() != "ai.onnx") continue;
    if (schema.Deprecated()) continue;
    int& version = latest[schema.Name()];
    version = std::max(version, schema.SinceVersion());
  }
  std::vector<OnnxOpStatus> statuses;
  for (const auto& [op, version] : latest) statuses.push_back(status_of(op, version));
  for (const std::string& op : op_registry().names()) {
    if (!latest.count(op)) statuses.push_back(status_of(op, 0));
  }
  return statuses;
}

std::string onnx_schema_version() { return onnx::LAST_RELEASE_VERSION; }

const char* support_name(OpSupport support) {
  switch (support) {
    case OpSupport::compiled:
      return "compiled";
    case OpSupport::reference_only:
      return "reference only";
    case OpSupport::imported:
      return "imported";
    case OpSupport::missing:
      return "missing";
  }
  return "?";
}

}  // namespace minic
