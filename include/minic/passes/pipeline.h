// minic's default pipelines: the graph passes and the loop passes it runs, in order.
//
// Course modules 2 and 4. Both lists are in src/passes/pipeline.cpp, read top to bottom
// with a comment a line; `minic opt --list-passes` prints them.
//
// Chapter: docs/module2-graph-passes.md#1-the-pass-manager
#pragma once

#include <string>
#include <vector>

namespace minic {

// The graph passes minic runs on an imported model, in order.
const std::vector<std::string>& default_pipeline();

namespace loop {

// The loop passes every scheduled kernel goes through before code generation, in order:
// what compile_model runs and what the autotuner measures.
const std::vector<std::string>& default_loop_pipeline();

}  // namespace loop
}  // namespace minic
