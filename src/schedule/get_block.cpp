// get_block, get_block_names and get_loops: how a schedule names what it transforms.
// Course module 4.
//
//   for i in 0..128 {              get_block(f, "C")  → the block C
//     for j in 0..256 {            get_loops(f, "C")  → [i, j, k]
//       for k in 0..64 {
//         block C(...) { ... }
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#include "minic/schedule/primitives.h"

#include "loop_tree.h"

namespace minic::schedule {

const loop::Block& get_block(const PrimFunc& func, const std::string& name) {
  return *block_path(func, name, "get_block").back().as<loop::Block>();
}

std::vector<std::string> get_block_names(const PrimFunc& func) {
  std::vector<std::string> names;
  for (const loop::Block* block : collect_blocks(func.body)) names.push_back(block->name);
  return names;
}

std::vector<Expr> get_loops(const PrimFunc& func, const std::string& block) {
  std::vector<Expr> loops;
  for (const loop::For* node : loops_on_path(block_path(func, block, "get_loops"))) {
    loops.push_back(node->var);
  }
  return loops;
}

}  // namespace minic::schedule
