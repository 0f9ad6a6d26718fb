// The stages of one kernel under construction: the lowering driver's side of the compute
// rules. Course module 3. Private to src/lower.
//
// lower.cpp makes the parameters, runs each op's rule with a ComputeContext whose builders
// forward here (StageBuilder, include/minic/ops/compute.h), binds the tensors the rules
// return to the output parameters, and finishes the function. The builder decides what
// becomes a loop nest: a reduction, a kept stage, a stage whose expression grew large, and
// whatever must be written to an output; every other `compute` stage is inlined into its
// readers.
//
// Chapter: docs/module3-loop-ir.md#5-lowering-compute-rules
#pragma once

#include "compute_stage.h"

#include <set>
#include <string>
#include <vector>

namespace minic {

class KernelBuilder : public StageBuilder {
 public:
  // A parameter buffer named `name`, read as a tensor.
  ComputeTensor add_input(const std::string& name, const TensorType& type);
  // An output parameter buffer named `name`.
  loop::Buffer add_output(const std::string& name, const TensorType& type);
  // Asks that `tensor`, where it becomes a stage, write `output` directly: called as soon
  // as a rule returns a tensor that leaves the kernel, before anything reads it.
  void bind(const ComputeTensor& tensor, const loop::Buffer& output);
  // Makes sure `output` holds `tensor` once the kernel has run: the tensor's own stage
  // writes it, or a copy stage does.
  void write(const ComputeTensor& tensor, const loop::Buffer& output);
  // The function: its parameters in the order they were added, its stages in order, the
  // intermediate buffers allocated around them.
  loop::PrimFunc finish(const std::string& name);

  // StageBuilder: what ComputeContext's builders call.
  ComputeTensor compute(const std::string& name, const TensorType& type,
                        const std::function<loop::Expr(const Indices&)>& body) override;
  ComputeTensor reduce(const std::string& name, const TensorType& type,
                       const Shape& reduce_extents, Reducer reducer,
                       const std::function<loop::Expr(const Indices&, const Indices&)>& body)
      override;
  void keep(const ComputeTensor& tensor) override;

  // The buffer `stage` writes, emitting its loop nest the first time.
  loop::Buffer materialize(StageNode& stage);

 private:
  ComputeTensor add_stage(std::shared_ptr<StageNode> stage);
  // A buffer name not used yet in this kernel, from `hint`; the same for a block name.
  std::string unique_name(const std::string& hint);
  std::string unique_block_name(const std::string& hint);

  std::vector<loop::Buffer> params_;
  std::vector<loop::Buffer> temporaries_;
  std::vector<loop::Stmt> stages_;
  std::set<std::string> names_;
  std::set<std::string> block_names_;
};

}  // namespace minic
