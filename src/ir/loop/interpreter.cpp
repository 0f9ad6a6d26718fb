// The loop IR interpreter: arguments, and GPU thread blocks run phase by phase.
// Course module 3.
//
// run_func checks each argument against its parameter, wraps the tensors as storage and
// runs the body in the host Thread (interp_thread.cpp). run_thread_block is how the host
// runs a GPU thread block:
//   1. find every threadIdx loop inside the one reached; the largest extent bound to
//      each axis is the block's extent on it (evaluated with the host's variables);
//   2. make one Thread per thread index, each starting at the loop reached;
//   3. phase after phase: run each unfinished thread, in order of its index, until it
//      ends or reaches a barrier; all threads waiting must wait at the same barrier;
//      forget the accesses the race tracker saw (a barrier orders them); stop when no
//      thread waits.
// The sequential order within a phase is one of the orders the GPU may run the threads
// in; the race tracker reports any access whose result would depend on that order.
//
// Chapter: docs/module3-loop-ir.md#4-the-verifier-and-the-interpreter-the-oracle
#include "minic/ir/loop/interpreter.h"

#include "interp_thread.h"
#include "minic/ir/loop/verifier.h"
#include "minic/ir/loop/visitor.h"

namespace minic::loop {

namespace interp {

namespace {

constexpr int64_t kMaxThreadsPerBlock = 1024;  // CUDA's limit

// The threadIdx loops of a loop nest.
class ThreadLoops : public IRVisitor {
 public:
  std::vector<const For*> loops;
  void visit_For(const For* node) override {
    if (node->for_kind == ForKind::thread_binding && thread_idx_dim(node->thread_axis) >= 0) {
      loops.push_back(node);
    }
    IRVisitor::visit_For(node);
  }
};

}  // namespace

void run_thread_block(const For* loop, Thread& host) {
  ThreadBlock block;
  ThreadLoops finder;
  finder.visit_For(loop);
  for (const For* inner : finder.loops) {
    int64_t extent = 0;
    try {
      extent = eval_scalar(host, inner->extent);
    } catch (const Error& error) {
      fail("the extent of threadIdx loop {} must be known when the thread block starts: {}",
           inner->var.as<Var>()->name, error.what());
    }
    int64_t& block_extent = block.extents[thread_idx_dim(inner->thread_axis)];
    block_extent = std::max(block_extent, extent);
  }
  int64_t count = block.extents[0] * block.extents[1] * block.extents[2];
  if (count > kMaxThreadsPerBlock) {
    fail("a GPU thread block of {} x {} x {} threads: at most {}", block.extents[0],
         block.extents[1], block.extents[2], kMaxThreadsPerBlock);
  }
  if (count <= 0) return;
  block.races.extents = block.extents;

  std::vector<Thread> threads;
  threads.reserve(static_cast<size_t>(count));
  for (int64_t id = 0; id < count; ++id) {
    threads.emplace_back(&block, id, host);
    threads.back().start(loop);
  }
  std::vector<bool> ended(static_cast<size_t>(count), false);
  for (;;) {
    block.races.clear();
    const Evaluate* barrier = nullptr;
    int64_t first_waiting = -1;
    for (int64_t id = 0; id < count; ++id) {
      if (ended[id]) continue;
      const Evaluate* reached = threads[id].run();
      if (!reached) {
        ended[id] = true;
      } else if (!barrier) {
        barrier = reached;
        first_waiting = id;
      } else if (reached != barrier) {
        fail("{} and {} wait at two different barriers (threads diverge at a barrier)",
             thread_name(block.extents, first_waiting), thread_name(block.extents, id));
      }
    }
    if (!barrier) break;
  }
}

}  // namespace interp

void run_func(const PrimFunc& func, std::vector<Tensor*> args) {
  verify_func(func);
  if (args.size() != func.params.size()) {
    fail("@{} takes {} arguments, not {}", func.name, func.params.size(), args.size());
  }
  std::vector<std::unique_ptr<interp::Storage>> params;
  interp::BufferMap buffers;
  for (size_t i = 0; i < args.size(); ++i) {
    const Buffer& param = func.params[i];
    Tensor* arg = args[i];
    TensorType expected{param->dtype, param->shape};
    if (!arg) fail("@{}: no tensor for parameter {}", func.name, param->name);
    if (arg->type() != expected) {
      fail("@{}: parameter {} is {}, but its argument is {}", func.name, param->name,
           type_string(expected), type_string(arg->type()));
    }
    if (param->strides != row_major_strides(param->shape)) {
      fail("@{}: parameter {} has strides {}; the interpreter takes row-major tensors",
           func.name, param->name, shape_string(param->strides));
    }
    if (is_storage_only(param->dtype)) {
      fail("@{}: parameter {} is {}, which no kernel computes in", func.name, param->name,
           dtype_name(param->dtype));
    }
    params.push_back(interp::Storage::wrap(param, *arg));
    buffers[param.get()] = params.back().get();
  }
  interp::Thread host(std::move(buffers));
  host.start(func.body.get());
  try {
    host.run();
  } catch (const Error& error) {
    fail("running @{}: {}", func.name, error.what());
  }
}

}  // namespace minic::loop
