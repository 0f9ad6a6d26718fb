// Registering custom operators (include/minic/ops/custom_op.h). Course module 8.
//
// The op registry (registry.cpp) holds minic's own ops and the custom ones side by side;
// this file checks a custom schema before it joins them, and loads plugins.
//
// A MINIC_REGISTER_CUSTOM_OP object linked into a program runs while the program's statics
// are built, in no order against the other files' statics: building the registry then
// would read the tables of src/ops/ before they exist. So such an op waits in a list until
// the registry is first built (registry.cpp), which adds it after minic's own ops. One in
// a plugin loaded later registers at once.
//
// Chapter: docs/module8-deployment.md#6-custom-operators
#include "minic/ops/custom_op.h"

#include "minic/support/error.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

namespace minic {

// registry.cpp: adds a schema to the registry op_registry() returns.
void add_to_op_registry(OpSchema schema);

namespace {

std::set<std::string, std::less<>>& custom_ops() {
  static std::set<std::string, std::less<>> names;
  return names;
}

// The ops of MINIC_REGISTER_CUSTOM_OP objects built before the registry, and whether it is.
std::vector<OpSchema (*)()>& waiting_ops() {
  static std::vector<OpSchema (*)()> makers;
  return makers;
}
bool& registry_built() {
  static bool built = false;
  return built;
}

// Error unless `schema` may join `registry` (see custom_op.h).
void check_schema(const OpSchema& schema, const OpRegistry& registry) {
  const std::string& name = schema.name;
  const size_t dot = name.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == name.size()) {
    fail("custom op '{}': its name must be DOMAIN.NAME (com.example.Gelu)", name);
  }
  const std::string domain = name.substr(0, dot);
  if (domain == "ai.onnx" || domain == "minic") {
    fail("custom op '{}': domain {} is {}, not a custom one", name, domain,
         domain == "minic" ? "minic's own" : "ONNX's default");
  }
  if (registry.find(name)) fail("custom op '{}' is registered already", name);
  if (!schema.shape_rule || !schema.kernel) {
    fail("custom op '{}' needs a shape rule and a reference kernel", name);
  }
  if (schema.min_inputs < 0 || schema.max_inputs < schema.min_inputs ||
      schema.min_outputs < 1 || schema.max_outputs < schema.min_outputs) {
    fail("custom op '{}': inputs {}..{} and outputs {}..{} are not a valid range", name,
         schema.min_inputs, schema.max_inputs, schema.min_outputs, schema.max_outputs);
  }
  if (schema.fusion != FusionKind::opaque && !schema.compute) {
    fail("custom op '{}': fusion kind {} needs a compute rule (without one it is opaque)",
         name, fusion_kind_name(schema.fusion));
  }
  if (schema.cuda && (schema.cuda->source.empty() || !schema.cuda->launch)) {
    fail("custom op '{}': its CUDA kernel needs a source and a launch rule", name);
  }
}

// The schema as it joins the registry: a custom domain's versions are its own, so every
// one is accepted.
OpSchema any_version(OpSchema schema) {
  schema.min_opset = 1;
  schema.max_opset = kMaxOpset;
  custom_ops().insert(schema.name);
  return schema;
}

// What a registration that has no caller to throw to does with an Error.
[[noreturn]] void exit_with(const Error& error) {
  std::fprintf(stderr, "error: %s\n", error.what());
  std::exit(2);
}

}  // namespace

void register_custom_op(OpSchema schema) {
  check_schema(schema, op_registry());
  add_to_op_registry(any_version(std::move(schema)));
}

void add_waiting_custom_ops(OpRegistry& registry) {
  registry_built() = true;
  for (OpSchema (*make)() : waiting_ops()) {
    try {
      OpSchema schema = make();
      check_schema(schema, registry);
      registry.add(any_version(std::move(schema)));
    } catch (const Error& error) {
      exit_with(error);
    }
  }
  waiting_ops().clear();
}

std::vector<std::string> custom_op_names() {
  return {custom_ops().begin(), custom_ops().end()};
}

bool is_custom_op(std::string_view op) { return custom_ops().count(op) != 0; }

void load_custom_op_library(const std::string& path) {
  if (!std::filesystem::exists(path)) fail("{}: no such custom op library", path);
  // RTLD_NOW: a symbol the plugin needs and minic lacks is an error here, not a crash
  // later. RTLD_NODELETE: its code stays while the registry holds its functions.
  if (!dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)) {
    fail("{}: cannot load the custom op library: {}", path, dlerror());
  }
}

RegisterCustomOp::RegisterCustomOp(OpSchema (*make)()) {
  if (!registry_built()) {
    waiting_ops().push_back(make);
    return;
  }
  try {
    register_custom_op(make());
  } catch (const Error& error) {
    exit_with(error);
  }
}

bool runs_own_cuda_kernel(const Node& node, const Target& target) {
  if (!target.is_cuda() || node.is_fused()) return false;
  const OpSchema* schema = op_registry().find(node.op);
  return schema && schema->cuda;
}

CudaKernelSource elementwise_cuda_kernel(std::string source, std::string kernel, int block) {
  if (block < 1 || block > 1024) fail("CUDA kernel {}: a block of {} threads", kernel, block);
  CudaKernelSource cuda;
  cuda.source = std::move(source);
  cuda.launch = [kernel, block](const NodeContext& ctx) {
    const int64_t n = ctx.node().outputs().at(0)->type.num_elements();
    CudaKernelLaunch launch;
    launch.kernel = kernel;
    launch.grid[0] = std::max<int64_t>(1, (n + block - 1) / block);
    launch.block[0] = block;
    launch.scalars = {n};
    return launch;
  };
  return cuda;
}

}  // namespace minic
