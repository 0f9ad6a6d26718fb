// The loop passes by name: what `minic schedule FILE.mloop --passes a,b` runs.
//
// Course module 3. Each loop pass is one function `loop::PrimFunc pass(loop::PrimFunc)`
// declared in its own header under include/minic/passes/loop/ and defined in one file of
// src/passes/loop/. The registry lists them once, with a line of description, so that the
// CLI, the tests and a student's new pass all find a pass by its name. A new pass is one
// line in src/passes/loop/registry.cpp.
#pragma once

#include "minic/ir/loop/stmt.h"

#include <functional>
#include <string>
#include <vector>

namespace minic::loop {

using LoopPassFn = std::function<PrimFunc(PrimFunc)>;

struct LoopPassInfo {
  std::string name;         // "simplify", "flatten-buffers", ...
  std::string description;  // one line, for --list-passes
  LoopPassFn run;
};

// Every loop pass, in the order of the default loop pipeline (src/passes/loop/registry.cpp).
const std::vector<LoopPassInfo>& loop_passes();

// The pass named `name`; throws Error listing the known names if there is none.
const LoopPassInfo& find_loop_pass(const std::string& name);

// The passes every scheduled kernel goes through before code generation, in order: what
// compile_model runs and what the autotuner measures (src/passes/loop/registry.cpp).
const std::vector<std::string>& default_loop_pipeline();

// Runs the named passes in order on every function of the module, verifying each function
// after each pass (a pass that breaks the IR is reported by name).
void run_loop_passes(LoopModule& module, const std::vector<std::string>& names);

}  // namespace minic::loop
