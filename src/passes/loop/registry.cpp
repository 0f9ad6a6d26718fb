// The list of loop passes, and running them by name. Course module 3.
#include "minic/passes/loop/registry.h"

#include "minic/ir/loop/verifier.h"
#include "minic/support/error.h"

namespace minic::loop {

const std::vector<LoopPassInfo>& loop_passes() {
  static const std::vector<LoopPassInfo> passes = {
  };
  return passes;
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
