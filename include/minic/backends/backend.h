// Bring your own codegen: external back ends that compile parts of a model beside minic's
// own kernels. Course module 6 (hardware abstraction).
//
// A back end is a compiler (or a library) for some of a model's nodes: an accelerator's,
// a vendor library's (src/backends/onednn/onednn.cpp), a teaching one
// (src/backends/toy_npu/toy_npu.cpp). It plugs into
// minic in three places, as TVM's BYOC does:
//
//   1. claim      after the graph passes, the partitioner offers it every top-level node
//                 (plain, or fused by fuse-ops: a fusion group is the unit a back end
//                 sees, as a "composite" pattern); it claims the nodes it can compile
//                 (claims: a predicate, which may match the body's ops as a pattern);
//   2. compile    each claimed node becomes a host call behind minic's kernel calling
//                 convention (void** args: the node's distinct inputs, then its outputs,
//                 as kernel_arguments orders them), which the back end builds however it
//                 likes: a library's primitive, C compiled with the system's compiler, a
//                 program for a device;
//   3. run        the execution plan calls it as a step, beside the steps of minic's
//                 compiled kernels and reference kernels; `--profile` names the back end.
//
// The partitioner offers a node to the back ends in the order given; the first that claims
// it takes it, and minic lowers, schedules and compiles the rest. A back end may also name
// graph passes to leave out (skip_passes): those that would rewrite the ops it claims into
// minic's own forms (blocked layouts, Winograd) before it sees them.
//
//   minic run MODEL --backends toy-npu --profile     which steps ran where, and their time
//   minic inspect MODEL --partition toy-npu          what each back end would take
//
// Back ends register themselves with MINIC_REGISTER_BACKEND from a file of their own
// (src/backends/), as passes do.
//
// Chapter: docs/module6-llvm-cpu.md#bring-your-own-codegen
#pragma once

#include "minic/ir/graph/graph.h"
#include "minic/runtime/device.h"
#include "minic/target/target.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace minic {

class ExternalBackend {
 public:
  virtual ~ExternalBackend() = default;

  // True if the back end takes `node`, a top-level node of a graph of `opset` after the
  // graph passes, compiled for `target`. Called once per node; must not change anything.
  virtual bool claims(const Node& node, int opset, const Target& target) const = 0;

  // The call that computes `node` (claimed), behind the kernel calling convention. Error
  // (naming the node) where it cannot after all.
  virtual runtime::KernelCall compile(const Node& node, int opset, const Target& target) = 0;

  // What the back end made of `node`, for `minic inspect --partition`: one line, or a
  // few (its program's text, its estimated cost). Default: nothing.
  virtual std::string describe(const Node& node, int opset) const { return ""; }

  // What the back end's runs have cost so far, for `minic run --profile` (a device's cycle
  // count, say). Default: nothing.
  virtual std::string report() const { return ""; }

  // Graph passes of the default pipeline to leave out when this back end is used.
  virtual std::vector<std::string> skip_passes() const { return {}; }
};

// The buffers a node's kernel takes, in parameter order: its distinct inputs (omitted
// optional inputs left out), then its outputs. The order of `args` in every call: minic's
// compiled kernels, reference kernels and external back ends' calls alike.
std::vector<const Value*> kernel_arguments(const Node& node);

// For claims and compilers that look inside a node: the ops it computes (the node itself,
// or its body's nodes in order), and the kernel argument index of one of its values (a
// body value stands for the outer value it is), -1 if it is none.
std::vector<const Node*> body_ops(const Node& node);
int argument_index(const Node& node, const Value* value);

// True if `value` is f32 with `rank` dimensions.
bool is_f32(const Value* value, int64_t rank);

// A MatMul or Gemm in the form GEMM units and libraries take: Y [M, N] = A [M, K] B, with
// B [K, N] or (transpose_b) [N, K], f32, and for a Gemm alpha = beta = 1, A not transposed
// and a bias of one value per column of Y ([N] or [1, N]; null where there is none).
struct PlainGemm {
  const Value* a = nullptr;
  const Value* b = nullptr;
  const Value* bias = nullptr;
  bool transpose_b = false;
  int64_t m = 0, n = 0, k = 0;
};
// `op`'s form, or nullopt where it is no such GEMM.
std::optional<PlainGemm> plain_gemm(const Node& op);

struct BackendInfo {
  std::string name;     // "toy-npu"
  std::string summary;  // one line, for --help and errors
  std::function<std::unique_ptr<ExternalBackend>()> make;
};

class BackendRegistry {
 public:
  // Registers a back end; a name used twice is an internal error.
  static void add(BackendInfo info);
  // The back end named `name`, or null.
  static const BackendInfo* find(const std::string& name);
  // Every registered back end, sorted by name.
  static std::vector<const BackendInfo*> all();
};

// The back ends of one compilation and what the partitioner decided: the claimed nodes of
// a graph, each with the back end (an index into `names`) that took it.
class Partition {
 public:
  // The back ends `names`, made once, in order; Error naming one that is not registered
  // (the message lists those that are).
  explicit Partition(std::vector<std::string> names = {});

  // `passes` without those the back ends skip (ExternalBackend::skip_passes).
  std::vector<std::string> passes_to_run(std::vector<std::string> passes) const;
  // Offers every top-level node of `graph` to the back ends in order (see above) and
  // records in `claimed` the first that takes it.
  void claim(const Graph& graph, const Target& target);

  std::vector<std::string> names;
  std::vector<std::unique_ptr<ExternalBackend>> backends;  // made from `names`, in order
  std::map<const Node*, size_t> claimed;
};

struct RegisterBackend {
  RegisterBackend(const char* name, const char* summary,
                  std::function<std::unique_ptr<ExternalBackend>()> make);
};

}  // namespace minic

#define MINIC_BACKEND_CONCAT_INNER(a, b) a##b
#define MINIC_BACKEND_CONCAT(a, b) MINIC_BACKEND_CONCAT_INNER(a, b)

// Registers the back end class `Type` (default-constructible) under `name`.
#define MINIC_REGISTER_BACKEND(name, Type, summary)                                   \
  static const ::minic::RegisterBackend MINIC_BACKEND_CONCAT(minic_backend_, __LINE__)( \
      name, summary, [] { return std::unique_ptr<::minic::ExternalBackend>(new Type()); })
