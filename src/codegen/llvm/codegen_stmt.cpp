// Loop IR statements → LLVM IR control flow. Course module 6.
//
// Each statement runs as the interpreter runs it (src/ir/loop/interp_thread.cpp):
//   For         a counted loop (codegen_func.cpp) with hints for LLVM on its back edge:
//               unrolled → llvm.loop.unroll.full, vectorized (one vectorize_loops left
//               serial) → llvm.loop.vectorize.enable; a parallel loop is outlined and run
//               by the thread pool, unless it is inside another, where it runs serially;
//               GPU loops are an Error.
//   Block       skipped where its predicate is false; binds each iteration variable to
//               its binding, allocates its alloc_buffers, runs init when every reduction
//               variable is 0, then its body.
//   Allocate    storage live while its body runs (stack or heap: emit_storage).
//   IfThenElse  a branch; Seq in order; Evaluate computes its value (a barrier is an Error).
//
//   block C(vi = spatial(64) i, vk = reduce(32) k) { init { C[vi] = 0.0 } C[vi] = ... }
//   →  %vi = i, %vk = k; if (%vk == 0) { C[%vi] = 0.0 }; C[%vi] = ...
//
// Chapter: docs/module6-llvm-cpu.md#2-expressions-statements-intrinsics
#include "codegen.h"

#include "minic/ir/loop/analysis.h"
#include "minic/support/error.h"

#include <utility>

namespace minic::codegen::llvm_backend {

using namespace minic::loop;

void CodeGen::emit(const Stmt& stmt) {
  switch (stmt.kind()) {
    case StmtKind::For:
      emit_for(stmt.as<For>());
      return;
    case StmtKind::Block:
      emit_block(stmt.as<Block>());
      return;
    case StmtKind::Store:
      emit_store(stmt.as<Store>());
      return;
    case StmtKind::Allocate: {
      const Allocate* node = stmt.as<Allocate>();
      emit_allocate(node->buffer, [&] { emit(node->body); });
      return;
    }
    case StmtKind::Seq:
      for (const Stmt& inner : stmt.as<Seq>()->stmts) emit(inner);
      return;
    case StmtKind::IfThenElse: {
      const IfThenElse* node = stmt.as<IfThenElse>();
      std::function<void()> else_case;
      if (node->else_case) else_case = [&] { emit(node->else_case); };
      emit_if(emit(node->condition), [&] { emit(node->then_case); }, else_case);
      return;
    }
    case StmtKind::Evaluate: {
      if (is_barrier(stmt)) {
        error("a barrier synchronises GPU threads: barriers need the CUDA backend");
      }
      emit(stmt.as<Evaluate>()->value);
      return;
    }
  }
  error("unknown statement kind");
}

void CodeGen::emit_if(llvm::Value* condition, const std::function<void()>& then_case,
                      const std::function<void()>& else_case) {
  llvm::Function* function = builder_.GetInsertBlock()->getParent();
  auto* then_block = llvm::BasicBlock::Create(context_, "if.then", function);
  auto* merge_block = llvm::BasicBlock::Create(context_, "if.end");
  llvm::BasicBlock* else_block = merge_block;
  if (else_case) else_block = llvm::BasicBlock::Create(context_, "if.else", function);
  builder_.CreateCondBr(condition, then_block, else_block);
  builder_.SetInsertPoint(then_block);
  then_case();
  builder_.CreateBr(merge_block);
  if (else_case) {
    builder_.SetInsertPoint(else_block);
    else_case();
    builder_.CreateBr(merge_block);
  }
  merge_block->insertInto(function);
  builder_.SetInsertPoint(merge_block);
}

void CodeGen::emit_for(const For* node) {
  const Var* var = node->var.as<Var>();
  if (node->for_kind == ForKind::thread_binding) {
    error("loop " + var->name + " is bound to " + node->thread_axis +
          ": bind loops need the CUDA backend");
  }
  if (node->for_kind == ForKind::parallel && parallel_depth_ == 0) {
    emit_parallel_for(node);
    return;
  }
  llvm::Value* min = emit(node->min);
  llvm::Value* end = builder_.CreateAdd(min, emit(node->extent), "", false, true);
  // A parallel loop inside another runs serially: the outer one already has the threads.
  ForKind kind = node->for_kind == ForKind::parallel ? ForKind::serial : node->for_kind;
  emit_counted_loop(min, end, var->name, loop_metadata(kind), [&](llvm::Value* counter) {
    emit_loop_body(node, min, counter);
  });
}

void CodeGen::emit_loop_body(const For* node, llvm::Value* min, llvm::Value* counter) {
  // The loop's prefetch annotations hold in its body (codegen_prefetch.cpp); the enclosing
  // loop's are restored after it.
  PrefetchState outer = std::move(prefetch_);
  prefetch_ = {outer.ahead, outer.spread, outer.share, outer.step, {}, 0};
  const LoopPosition position{builder_.CreateSub(counter, min),
                              as_const_int(node->extent).value_or(0)};
  if (auto ahead = node->annotations.find("prefetch_ahead"); ahead != node->annotations.end()) {
    prefetch_.ahead = ahead->second;
    prefetch_.step = position;
  } else if (prefetch_.step.index) {
    // A loop inside the prefetch_ahead loop: a step is one iteration of the innermost,
    // counted across the nest (the steps of a convolution's taps and input lanes).
    prefetch_.step = {builder_.CreateAdd(builder_.CreateMul(prefetch_.step.index,
                                                            i64(position.extent)),
                                         position.index),
                      prefetch_.step.extent * position.extent};
  }
  if (auto spread = node->annotations.find("prefetch_spread");
      spread != node->annotations.end() && position.extent > 0) {
    prefetch_.spread = spread->second;
    prefetch_.share = position;
  }
  const Var* var = node->var.as<Var>();
  vars_[var] = counter;
  emit(node->body);
  vars_.erase(var);
  prefetch_ = std::move(outer);
}

void CodeGen::emit_block(const Block* node) {
  blocks_.push_back(node->name);
  auto run = [&] {
    // Bindings use only variables from outside the block (the verifier checks it), so
    // they may be evaluated before any iteration variable is bound.
    std::vector<llvm::Value*> values;
    for (const IterVar& iter : node->iter_vars) values.push_back(emit(iter.binding));
    llvm::Value* first_reduction_step = nullptr;
    for (size_t i = 0; i < node->iter_vars.size(); ++i) {
      const IterVar& iter = node->iter_vars[i];
      vars_[iter.var.as<Var>()] = values[i];
      if (iter.kind != IterKind::reduce) continue;
      llvm::Value* is_zero = builder_.CreateICmpEQ(
          values[i], llvm::Constant::getNullValue(values[i]->getType()));
      first_reduction_step =
          first_reduction_step ? builder_.CreateAnd(first_reduction_step, is_zero) : is_zero;
    }
    // alloc_buffers, then init and body inside them.
    std::function<void(size_t)> with_buffers = [&](size_t next) {
      if (next < node->alloc_buffers.size()) {
        emit_allocate(node->alloc_buffers[next], [&] { with_buffers(next + 1); });
        return;
      }
      if (node->init && first_reduction_step) {
        emit_if(first_reduction_step, [&] { emit(node->init); }, {});
      }
      emit(node->body);
    };
    with_buffers(0);
    for (const IterVar& iter : node->iter_vars) vars_.erase(iter.var.as<Var>());
  };
  if (node->predicate) {
    emit_if(emit(node->predicate), run, {});
  } else {
    run();
  }
  blocks_.pop_back();
}

void CodeGen::emit_allocate(const Buffer& buffer, const std::function<void()>& body) {
  if (is_storage_only(buffer->dtype)) {
    error("buffer " + buffer->name + " is " + std::string(dtype_name(buffer->dtype)) +
          ", which no kernel computes in");
  }
  bool heap = false;
  llvm::Value* storage = emit_storage(buffer, heap);
  buffers_[buffer.get()] = storage;
  body();
  buffers_.erase(buffer.get());
  if (heap) emit_free(storage);
}

}  // namespace minic::codegen::llvm_backend
