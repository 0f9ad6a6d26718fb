// Custom operators: ops of a domain other than ONNX's, registered by the program that uses
// minic instead of shipped in src/ops/. Course module 8 (extending a compiler).
//
// A custom op is an OpSchema like any op of src/ops/ (op.h): its name is qualified by its
// domain, "com.example.Gelu", and it brings a shape rule and a reference kernel, and
// optionally a compute rule (compute.h). Once registered:
//   - the importer accepts nodes of that domain and op type (any version of the domain:
//     a custom domain's versions are its owner's business), where before it lists the op
//     among those minic does not support;
//   - shape inference, the interpreter and a compiled model's reference steps use its
//     shape rule and kernel;
//   - with a compute rule and a fusion kind other than opaque, operator fusion groups it
//     with its neighbours, and it is lowered, scheduled and compiled like a built-in op;
//   - with a hand-written CUDA kernel (OpSchema::cuda), a CUDA target runs that kernel as
//     given: the node stays alone (fuse-ops leaves it out on a CUDA target), its source
//     joins the model's CUDA program, and its launch follows the schema's launch rule.
//     `--emulate` runs the node's reference kernel instead, on the host: the loop
//     interpreter runs loop IR, not CUDA C.
//
// Three ways to register one:
//   register_custom_op(schema);                  // from C++, before importing a model
//   MINIC_REGISTER_CUSTOM_OP(make_schema);       // a static object in a file of its own
//   load_custom_op_library("libmy_ops.so");      // a plugin: a shared library whose static
//                                                // objects register ops when it is loaded
// `minic run|bench|opt|compile|inspect|tune MODEL --custom-ops LIB.so` loads a plugin;
// Python registers ops with minic.register_op or loads a plugin with
// minic.load_custom_ops (python/minic/custom_op.py). examples/custom_ops/gelu_ops.cpp is
// a plugin with GELU and its tanh approximation.
//
// Registering happens before compiling: the registry is not locked against a model being
// imported or compiled at the same time.
//
// Chapter: docs/module8-deployment.md#6-custom-operators
#pragma once

#include "minic/ops/op.h"
#include "minic/target/target.h"

#include <string>
#include <string_view>
#include <vector>

namespace minic {

// Registers `schema`. Error (naming the op) unless its name is "DOMAIN.NAME" with a domain
// that is neither ONNX's (empty, "ai.onnx") nor minic's own ("minic"), its input and output
// counts are sensible, it has a shape rule and a kernel, and no op of that name is
// registered already.
void register_custom_op(OpSchema schema);

// The custom ops registered so far, sorted; and whether `op` is one of them.
std::vector<std::string> custom_op_names();
bool is_custom_op(std::string_view op);

// Loads a plugin with dlopen (its static objects register its ops). Loading the same file
// twice does nothing the second time. Error naming `path` if it does not load (dlerror's
// reason: a missing file, a symbol of minic the plugin needs and this program lacks).
void load_custom_op_library(const std::string& path);

// The CUDA kernel of an elementwise op, for OpSchema::cuda: `kernel` of `source` is launched
// with one thread per element of output 0, `block` threads a block, and takes the node's
// buffers and then the element count n:
//   extern "C" __global__ void gelu_f32(const float* x, float* y, int64_t n)
// Error for a block outside 1..1024 threads.
CudaKernelSource elementwise_cuda_kernel(std::string source, std::string kernel,
                                         int block = 256);

// True for a node that runs its op's hand-written CUDA kernel on `target`: a CUDA target,
// and an op (not a fused node) whose schema has one. fuse-ops keeps such a node alone, and
// the driver launches its kernel.
bool runs_own_cuda_kernel(const Node& node, const Target& target);

// What MINIC_REGISTER_CUSTOM_OP makes: an object that registers `make()`'s schema when it
// is built, or, when that is before the registry is (a program's statics), as the registry
// is built. An error there (a bad schema) is printed and ends the program: there is no
// caller to throw to while statics are built or a library loads.
struct RegisterCustomOp {
  explicit RegisterCustomOp(OpSchema (*make)());
};

}  // namespace minic

#define MINIC_CUSTOM_OP_CONCAT_INNER(a, b) a##b
#define MINIC_CUSTOM_OP_CONCAT(a, b) MINIC_CUSTOM_OP_CONCAT_INNER(a, b)

// Registers the schema `make()` returns (OpSchema make()) when the file's statics are built.
#define MINIC_REGISTER_CUSTOM_OP(make)                                  \
  static const ::minic::RegisterCustomOp MINIC_CUSTOM_OP_CONCAT(       \
      minic_custom_op_, __LINE__)(make)
