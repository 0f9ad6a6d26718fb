// The list of loop passes, and running them by name. Course module 3.
#include "minic/passes/loop/registry.h"

#include "minic/ir/loop/verifier.h"
#include "minic/passes/loop/compact_buffers.h"
#include "minic/passes/loop/flatten_buffers.h"
#include "minic/passes/loop/lower_blocks.h"
#include "minic/passes/loop/partition_loops.h"
#include "minic/passes/loop/remove_no_ops.h"
#include "minic/passes/loop/simplify.h"
#include "minic/passes/loop/storage_rewrite.h"
#include "minic/passes/loop/unroll_loops.h"
#include "minic/passes/loop/vectorize_loops.h"
#include "minic/support/error.h"

namespace minic::loop {

const std::vector<LoopPassInfo>& loop_passes() {
  // The default loop pipeline, in order: blocks out, guards out of main loops, unrolled
  // loops copied, arithmetic cleaned, vector loops to vector code, memory flattened and
  // shared, leftovers removed.
  static const std::vector<LoopPassInfo> passes = {
      {"lower-blocks", "replace blocks by plain loops, ifs and allocations", lower_blocks},
      {"compact-buffers", "shrink allocations to the region one loop iteration uses",
       compact_buffers},
      {"partition-loops", "cut loops with guarded tails into a guard-free main part and a rest",
       partition_loops},
      {"unroll-loops", "replace unrolled loops of constant extent by copies of their body",
       unroll_loops},
      {"simplify", "fold constants and simplify index arithmetic with the loop bounds", simplify},
      {"vectorize-loops", "turn vectorized loops into vector expressions (ramp, broadcast)",
       vectorize_loops},
      {"flatten-buffers", "make every buffer one-dimensional, indexed through its strides",
       flatten_buffers},
      {"storage-rewrite", "let allocations of disjoint lifetimes share memory", storage_rewrite},
      {"remove-no-ops", "remove statements that do nothing", remove_no_ops},
  };
  return passes;
}

// Blocks to plain statements, staging buffers shrunk to their tiles (so that accumulators
// can live in registers), unrolled loops expanded, buffers flattened to offsets (where a
// reshaped index such as (p / W) * W + p % W simplifies back to p), index arithmetic
// simplified, vector loops as vector code.
const std::vector<std::string>& default_loop_pipeline() {
  static const std::vector<std::string> pipeline = {"lower-blocks",    "compact-buffers",
                                                    "unroll-loops",    "flatten-buffers",
                                                    "simplify",        "vectorize-loops"};
  return pipeline;
}

const LoopPassInfo& find_loop_pass(const std::string& name) {
  std::string known;
  for (const LoopPassInfo& pass : loop_passes()) {
    if (pass.name == name) return pass;
    known += known.empty() ? pass.name : ", " + pass.name;
  }
  fail("unknown loop pass '{}' (known: {})", name, known.empty() ? "none" : known);
}

void run_loop_passes(LoopModule& module, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    const LoopPassInfo& pass = find_loop_pass(name);
    for (PrimFunc& func : module.functions) {
      func = pass.run(std::move(func));
      try {
        verify_func(func);
      } catch (const Error& error) {
        fail("loop pass '{}' produced invalid IR: {}", name, error.what());
      }
    }
  }
}

}  // namespace minic::loop
