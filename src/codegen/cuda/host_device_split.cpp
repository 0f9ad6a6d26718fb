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
#include "minic/ir/loop/visitor.h"
#include "minic/support/error.h"

#include <algorithm>
#include <set>

namespace minic::codegen {

using namespace loop;

int axis_index(const std::string& thread_axis) {
  char last = thread_axis.empty() ? 'x' : thread_axis.back();
  return last == 'z' ? 2 : last == 'y' ? 1 : 0;
}

bool is_block_axis(const std::string& thread_axis) {
  return thread_axis.rfind("blockIdx", 0) == 0;
}

int64_t buffer_bytes(const BufferNode& buffer, const std::string& func) {
  std::optional<int64_t> span = c_syntax::span(buffer);
  int64_t bytes = 0;
  if (!span || __builtin_mul_overflow(*span, dtype_size(buffer.dtype), &bytes)) {
    fail("{}: buffer {} does not fit in memory", func, buffer.name);
  }
  return bytes;
}

namespace {

constexpr int64_t kMaxThreadsPerBlock = 1024;

class LaunchReader : public IRVisitor {
 public:
  LaunchReader(const PrimFunc& func, const std::vector<Buffer>& args, LaunchNest& launch)
      : func_(func), args_(args), launch_(launch) {}

  // The launch's outer loops are blockIdx loops, one in another; below them, none.
  void read(const Stmt& body) {
    Stmt s = body;
    while (const For* loop = s.as<For>()) {
      if (loop->for_kind != ForKind::thread_binding || !is_block_axis(loop->thread_axis)) break;
      bind(loop, launch_.grid);
      s = loop->body;
    }
    visit(s);
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
      int64_t bytes = buffer_bytes(*node->buffer, func_.name);
      launch_.shared_bytes += (bytes + 15) / 16 * 16;
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
    int64_t& dim = dims[axis_index(node->thread_axis)];
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

 public:
  std::set<int> used_;
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
    LaunchReader reader(func_, args_, nest);
    reader.read(s);
    nest.args.assign(reader.used_.begin(), reader.used_.end());
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
