// `--verify-each=numeric`: the interpreters as the oracle of every pass.
//
// Course modules 2 and 4 (docs/module2-graph-passes.md#1-the-pass-manager). Rule 4 of the
// design, for anyone, on any model or kernel: before the first pass, run the IR on fixed
// random inputs and keep what it computes; after each pass, run it again on the same
// inputs and compare, within the tolerance `minic run --compare` uses (compare.h). The
// first pass that changes a result is named, with the result and how far it is off; each
// pass before it gets a line on stderr, "after simplify: ok (max abs err 2.38e-07)", the
// largest difference over every result.
//
//   PassManagerOptions<loop::LoopModule> options;
//   add_numeric_check(options, make_input);   // installs before_all and after_each
//   run_passes(module, {"lower-blocks", "simplify"}, options);
//
// A graph runs in the reference interpreter (interpreter.h), and its outputs are
// compared. A loop module runs function by function in the loop interpreter
// (include/minic/ir/loop/interpreter.h), every parameter filled, and every parameter is
// compared after the run. A pass may give a parameter a new shape of the same size
// (flatten-buffers makes them one-dimensional): the same elements are passed in that shape.
//
// Chapter: docs/module2-graph-passes.md#1-the-pass-manager
#pragma once

#include "minic/ir/graph/graph.h"
#include "minic/ir/loop/stmt.h"
#include "minic/passes/pass_manager.h"
#include "minic/runtime/compare.h"

#include <functional>

namespace minic {

// Makes one random input of the given type; called in a fixed order (graph inputs in
// order; functions, then their parameters, in order), so a seeded maker gives the same
// inputs on every run.
using InputMaker = std::function<Tensor(const TensorType& type)>;

// Adds the check to `options`' hooks (after any hooks already there). Throws Error from
// the hook after the first pass that changes a result, naming it.
void add_numeric_check(PassManagerOptions<Graph>& options, InputMaker make_input,
                       Tolerance tolerance = {});
void add_numeric_check(PassManagerOptions<loop::LoopModule>& options, InputMaker make_input,
                       Tolerance tolerance = {});

}  // namespace minic
