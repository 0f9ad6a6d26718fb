// Statement execution for the loop IR interpreter: one Thread, a stack of frames.
// Course module 3.
//
// run() looks at the frame on top of the stack and takes one step of its statement:
//   For         stage 0 evaluates the bounds; then each step binds the variable to the
//               next value and pushes the body, and the last one unbinds and pops.
//               A threadIdx loop reached by the host launches the thread block
//               (run_thread_block); reached by a GPU thread, it runs its body once, with
//               the thread's own index (or not at all if the index is beyond its extent).
//   Block       stage 0 checks the predicate, binds the iteration variables, allocates
//               alloc_buffers and pushes init (if every reduction variable is 0); stage 1
//               pushes the body; stage 2 unbinds and pops.
//   Seq         pushes its statements one by one.
//   Allocate, IfThenElse   push the body or the branch taken, then pop.
//   Store, Evaluate        run at once. A barrier pops itself and returns from run().
// Popping a frame releases what it allocated. A step never touches its frame after a
// push: the push may move the stack.
//
// Chapter: docs/module3-loop-ir.md#4-the-verifier-and-the-interpreter-the-oracle
#include "interp_thread.h"

#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/gpu_axis.h"

namespace minic::loop::interp {

int thread_idx_dim(const std::string& axis) {
  std::optional<GpuAxis> gpu = gpu_axis(axis);
  return gpu && !gpu->block ? gpu->dim : -1;
}

Thread::Thread(ThreadBlock* block, int64_t id, const Thread& host)
    : block_(block), id_(id), env_(host.env_) {
  const auto& extents = block->extents;
  index_ = {id % extents[0], id / extents[0] % extents[1], id / (extents[0] * extents[1])};
  // The host's local buffers are its own; a GPU thread allocates its own local buffers.
  for (const auto& [buffer, storage] : host.buffers_) {
    if (buffer->scope != MemoryScope::local) buffers_.emplace(buffer, storage);
  }
}

const Evaluate* Thread::run() {
  try {
    while (!stack_.empty()) {
      Frame& frame = stack_.back();
      switch (frame.stmt->kind) {
        case StmtKind::For:
          step_for(frame, static_cast<const For*>(frame.stmt));
          break;
        case StmtKind::Block:
          step_block(frame, static_cast<const Block*>(frame.stmt));
          break;
        case StmtKind::Store: {
          const Store* store = static_cast<const Store*>(frame.stmt);
          pop();
          step_store(store);
          break;
        }
        case StmtKind::Allocate: {
          const Allocate* node = static_cast<const Allocate*>(frame.stmt);
          if (frame.stage++ > 0) {
            pop();
            break;
          }
          allocate(frame, node->buffer);
          push(node->body.get());
          break;
        }
        case StmtKind::Seq: {
          const Seq* seq = static_cast<const Seq*>(frame.stmt);
          if (frame.next == static_cast<int64_t>(seq->stmts.size())) {
            pop();
            break;
          }
          const StmtNode* next = seq->stmts[frame.next++].get();
          push(next);
          break;
        }
        case StmtKind::IfThenElse: {
          const IfThenElse* node = static_cast<const IfThenElse*>(frame.stmt);
          if (frame.stage++ > 0) {
            pop();
            break;
          }
          const Stmt& branch = eval_scalar(*this, node->condition) ? node->then_case
                                                                   : node->else_case;
          if (branch) push(branch.get());
          break;
        }
        case StmtKind::Evaluate: {
          const Evaluate* node = static_cast<const Evaluate*>(frame.stmt);
          pop();
          if (!is_barrier(node->value)) {
            eval(*this, node->value);
          } else if (block_) {
            return node;
          } else {
            fail("a barrier outside the threadIdx loops");
          }
          break;
        }
      }
    }
  } catch (const RunError&) {
    throw;
  } catch (const Error& error) {
    // Say where: the innermost block being run, and the GPU thread.
    std::string where;
    for (auto it = stack_.rbegin(); it != stack_.rend() && where.empty(); ++it) {
      if (it->stmt->kind == StmtKind::Block) {
        where = "block " + static_cast<const Block*>(it->stmt)->name;
      }
    }
    if (block_) where += (where.empty() ? "" : ", ") + thread_name(block_->extents, id_);
    throw RunError(where.empty() ? error.what() : where + ": " + error.what());
  }
  return nullptr;
}

void Thread::pop() {
  for (const BufferNode* buffer : stack_.back().allocated) buffers_.erase(buffer);
  stack_.pop_back();
}

void Thread::step_for(Frame& frame, const For* loop) {
  const Var* var = loop->var.as<Var>();
  if (frame.stage == 0) {
    frame.stage = 1;
    int64_t min = eval_scalar(*this, loop->min);
    int64_t extent = eval_scalar(*this, loop->extent);
    bool bound = loop->for_kind == ForKind::thread_binding;
    int dim = bound ? thread_idx_dim(loop->thread_axis) : -1;
    if (dim >= 0 && !block_) {
      pop();
      run_thread_block(loop, *this);
      return;
    }
    if (bound && dim < 0 && block_) fail("a {} loop inside the threadIdx loops", loop->thread_axis);
    if (dim >= 0) {
      frame.next = min + index_[dim];
      frame.end = index_[dim] < extent ? frame.next + 1 : frame.next;
    } else {
      frame.next = min;
      frame.end = min + std::max<int64_t>(extent, 0);
    }
    env_.emplace_back(var, 0);
    frame.binding = env_.size() - 1;
  }
  if (frame.next < frame.end) {
    env_[frame.binding].second = frame.next++;
    push(loop->body.get());
  } else {
    env_.pop_back();
    pop();
  }
}

void Thread::step_block(Frame& frame, const Block* block) {
  if (frame.stage == 0) {
    if (block->predicate && !eval_scalar(*this, block->predicate)) {
      pop();
      return;
    }
    // Bindings use only variables from outside the block (verifier), so binding one
    // iteration variable before evaluating the next binding changes nothing.
    bool first_reduction_step = true;
    for (const IterVar& iter : block->iter_vars) {
      int64_t value = eval_scalar(*this, iter.binding);
      if (value < 0 || value >= iter.extent) {
        fail("iteration variable {} = {} is outside [0, {})", iter.var.as<Var>()->name, value,
             iter.extent);
      }
      env_.emplace_back(iter.var.as<Var>(), value);
      if (iter.kind == IterKind::reduce && value != 0) first_reduction_step = false;
    }
    for (const Buffer& buffer : block->alloc_buffers) allocate(frame, buffer);
    if (block->init && first_reduction_step) {
      frame.stage = 1;
      push(block->init.get());
      return;
    }
    frame.stage = 1;
  }
  if (frame.stage == 1) {
    frame.stage = 2;
    push(block->body.get());
    return;
  }
  env_.resize(env_.size() - block->iter_vars.size());
  pop();
}

void Thread::step_store(const Store* store) {
  Storage& storage = this->storage(store->buffer);
  Value value = eval(*this, store->value);
  Value offsets = element_offsets(*this, storage, store->indices, value.lanes(), "store to");
  for (int lane = 0; lane < value.lanes(); ++lane) write(storage, offsets[lane].i, value[lane]);
}

void Thread::allocate(Frame& frame, const Buffer& buffer) {
  Storage* storage = nullptr;
  if (block_ && buffer->scope != MemoryScope::local) {
    // Shared (or global) memory allocated inside the threadIdx loops: one per thread
    // block, made by the first thread to get here, kept until the block ends.
    std::unique_ptr<Storage>& slot = block_->buffers[buffer.get()];
    if (!slot) slot = Storage::allocate(buffer);
    storage = slot.get();
  } else {
    frame.owned.push_back(Storage::allocate(buffer));
    storage = frame.owned.back().get();
    storage->thread_private = block_ != nullptr;
  }
  buffers_[buffer.get()] = storage;
  frame.allocated.push_back(buffer.get());
}

int64_t Thread::var(const Var* var) const {
  for (auto it = env_.rbegin(); it != env_.rend(); ++it) {
    if (it->first == var) return it->second;
  }
  fail("variable {} has no value here", var->name);
}

Storage& Thread::storage(const Buffer& buffer) const {
  auto it = buffers_.find(buffer.get());
  if (it != buffers_.end()) return *it->second;
  if (block_ && buffer->scope == MemoryScope::local) {
    fail("local buffer {} is not allocated in this GPU thread (a local buffer allocated "
         "outside the threadIdx loops is the host's own)", buffer->name);
  }
  fail("buffer {} is not allocated here", buffer->name);
}

Scalar Thread::read(Storage& storage, int64_t offset) {
  if (block_ && !storage.thread_private) block_->races.on_read(storage, offset, id_);
  return storage.read(offset);
}

void Thread::write(Storage& storage, int64_t offset, Scalar value) {
  bool changed = storage.write(offset, value);
  if (changed && block_ && !storage.thread_private) block_->races.on_change(storage, offset, id_);
}

}  // namespace minic::loop::interp
