// One stage of a kernel under construction: what the builders of kernel_builder.cpp
// describe and compute_stage.cpp turns into a loop nest. Course module 3. Private to
// src/lower.
//
// Chapter: docs/module3-loop-ir.md#5-lowering-compute-rules
#pragma once

#include "minic/ops/compute.h"

namespace minic {

class KernelBuilder;

// A tensor of a compute rule (ComputeTensor holds one): a parameter buffer, or a stage
// described by the value of one element in terms of its iteration variables.
struct StageNode : TensorNode {
  // The buffer that holds the tensor: a parameter, or the stage's buffer once its loop
  // nest is emitted. Consumers load from it when it is set.
  loop::Buffer buffer;
  // The output parameter the stage writes when it is emitted (KernelBuilder::bind).
  loop::Buffer target;
  // Consumers load the tensor from a buffer instead of inlining it.
  bool keep = false;
  // The element at `axes` is `value` (a reduction: value combined over `reduce_axes`).
  std::vector<loop::Expr> axes;
  std::vector<loop::Expr> reduce_axes;
  Shape reduce_extents;
  std::optional<Reducer> reducer;
  loop::Expr value;
  KernelBuilder* builder = nullptr;

  bool is_stage() const { return static_cast<bool>(value); }

  // A load from `buffer` once there is one (a reduction or a kept stage gets its buffer,
  // and its loop nest, on the first read); else `value` with `indices` for `axes`.
  loop::Expr element(const Indices& indices) override;
};

// The StageNode behind a ComputeTensor (every tensor of a lowering is one).
StageNode& stage_of(const ComputeTensor& tensor);

// The loop nest of `stage` writing `output`: one loop per axis and reduction axis around
// one block (compute_stage.cpp).
loop::Stmt make_loop_nest(const StageNode& stage, const loop::Buffer& output,
                          const std::string& block_name);

// One step of `reducer`: combine(accumulated, value).
loop::Expr reducer_combine(Reducer reducer, loop::Expr accumulated, loop::Expr value);

}  // namespace minic
