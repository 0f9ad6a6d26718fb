// The host/device split of a GPU-scheduled function (see host_device_split.h). Course
// module 6.
//
// Two walks. The host walk goes down Seq and global Allocate nodes from the top of the
// body; whatever else it meets is a launch. The launch walk (LaunchReader) visits one
// launch's statement and reads its extents, its shared memory and its buffers; it also
// refuses a blockIdx loop that is not among the launch's outer loops, where the
// interpreter would run it once per iteration of a host loop.
//
// Chapter: docs/module6-cuda.md#the-hostdevice-split
#include "host_device_split.h"

#include "minic/ir/loop/c_syntax.h"
#include "minic/ir/loop/gpu_axis.h"
#include "minic/ir/loop/visitor.h"
#include "minic/support/error.h"

#include <algorithm>
#include <set>

namespace minic::codegen {

using namespace loop;

int64_t buffer_bytes(const BufferNode& buffer, const std::string& func) {
  std::optional<int64_t> span = c_syntax::span(buffer);
  int64_t bytes = 0;
  if (!span || __builtin_mul_overflow(*span, dtype_size(buffer.dtype), &bytes)) {
    fail("{}: buffer {} does not fit in memory", func, buffer.name);
  }
  return bytes;
}

int64_t shared_slot_bytes(const BufferNode& buffer, const std::string& func) {
  return (buffer_bytes(buffer, func) + 15) / 16 * 16;
}

namespace {

constexpr int64_t kMaxThreadsPerBlock = 1024;

class LaunchReader : public IRVisitor {
 public:
  LaunchReader(const PrimFunc& func, const std::vector<Buffer>& args, LaunchNest& launch)
      : func_(func), args_(args), launch_(launch) {}

  // The launch's outer loops are blockIdx loops, one in another; below them, none. Fills
  // in the launch's grid, block, shared bytes and arguments.
  void read(const Stmt& body) {
    Stmt s = body;
    while (const For* loop = s.as<For>()) {
      if (loop->for_kind != ForKind::thread_binding || !is_block_axis(loop->thread_axis)) break;
      bind(loop, launch_.grid);
      s = loop->body;
    }
    visit(s);
    launch_.args.assign(used_.begin(), used_.end());
  }

  void visit_For(const For* node) override {
    if (node->for_kind == ForKind::thread_binding) {
      if (is_block_axis(node->thread_axis)) {
        fail("{}: loop {} is bound to {} inside another statement of the launch; blockIdx "
             "loops must be the outermost loops of a launch",
             func_.name, node->var.as<Var>()->name, node->thread_axis);
      }
      bind(node, launch_.block);
      launch_.binds_threads = true;
    }
    IRVisitor::visit_For(node);
  }
  void visit_Allocate(const Allocate* node) override {
    if (node->buffer->scope == MemoryScope::shared) {
      launch_.shared_bytes += shared_slot_bytes(*node->buffer, func_.name);
    } else if (node->buffer->scope == MemoryScope::global) {
      fail("{}: global buffer {} is allocated inside a launch; only the host code may "
           "allocate global memory",
           func_.name, node->buffer->name);
    }
    IRVisitor::visit_Allocate(node);
  }
  void visit_Load(const Load* node) override {
    use(node->buffer);
    IRVisitor::visit_Load(node);
  }
  void visit_Store(const Store* node) override {
    use(node->buffer);
    IRVisitor::visit_Store(node);
  }

 private:
  void bind(const For* node, std::array<int64_t, 3>& dims) {
    const IntImm* extent = node->extent.as<IntImm>();
    if (!extent || extent->value < 1) {
      fail("{}: loop {} is bound to {} with extent {}; a GPU axis needs a constant "
           "extent of 1 or more",
           func_.name, node->var.as<Var>()->name, node->thread_axis,
           extent ? std::to_string(extent->value) : "that is not a constant");
    }
    int64_t& dim = dims[gpu_axis(node->thread_axis)->dim];  // the verifier checked the axis
    dim = std::max(dim, extent->value);
  }
  void use(const Buffer& buffer) {
    for (size_t i = 0; i < args_.size(); ++i) {
      if (args_[i].get() == buffer.get()) used_.insert(static_cast<int>(i));
    }
  }

  const PrimFunc& func_;
  const std::vector<Buffer>& args_;
  LaunchNest& launch_;
  std::set<int> used_;  // indices into args_
};

class HostWalk {
 public:
  HostWalk(const PrimFunc& func, const Target& target) : func_(func), target_(target) {
    args_ = func.params;
  }

  HostPlan run() {
    host(func_.body);
    return std::move(plan_);
  }

 private:
  void host(const Stmt& s) {
    if (!s) return;
    if (const Seq* seq = s.as<Seq>()) {
      for (const Stmt& part : seq->stmts) host(part);
      return;
    }
    const Allocate* alloc = s.as<Allocate>();
    if (alloc && alloc->buffer->scope == MemoryScope::global) {
      buffer_bytes(*alloc->buffer, func_.name);  // fails if it cannot be allocated
      plan_.scratch.push_back(alloc->buffer);
      args_.push_back(alloc->buffer);
      host(alloc->body);
      return;
    }
    launch(s);
  }

  void launch(const Stmt& s) {
    LaunchNest nest;
    nest.body = s;
    LaunchReader(func_, args_, nest).read(s);
    int64_t threads = nest.block[0] * nest.block[1] * nest.block[2];
    if (threads > kMaxThreadsPerBlock) {
      fail("{}: a thread block of {} x {} x {} threads; CUDA allows at most {}", func_.name,
           nest.block[0], nest.block[1], nest.block[2], kMaxThreadsPerBlock);
    }
    int64_t limit = target_.cuda().shared_memory_per_block;
    if (nest.shared_bytes > limit) {
      fail("{}: a launch declares {} bytes of shared memory; target {} allows {} per block",
           func_.name, nest.shared_bytes, target_.str(), limit);
    }
    plan_.launches.push_back(std::move(nest));
  }

  const PrimFunc& func_;
  const Target& target_;
  std::vector<Buffer> args_;  // the parameters, then the scratch buffers met so far
  HostPlan plan_;
};

}  // namespace

HostPlan split_host_device(const PrimFunc& func, const Target& target) {
  return HostWalk(func, target).run();
}

}  // namespace minic::codegen
