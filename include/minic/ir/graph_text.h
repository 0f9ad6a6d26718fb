// The text form of the graph IR (.mgraph): print and parse.
//
// Course module 2. One node a line with its output type; constants summarised:
//
//   graph main(%x: f32[1,4]) -> (%y: f32[1,4]) opset 17 {
//     %c = const f32[4] dense<[1, 2, 3, 4]>
//     %w = const f32[64,64,3,3] splat<0.02>
//     %y = Add(%x, %c) : f32[1,4]
//     return %y
//   }
//
// print_graph(parse_graph(text)) == text for every text print_graph produces.
#pragma once

#include "minic/ir/graph.h"

#include <string>

namespace minic {

struct GraphPrintOptions {
  // Constants with more elements than this print as a summary (not parseable back
  // unless `elide_large_constants` is false).
  bool elide_large_constants = false;
  int64_t max_inline_elements = 16;
};

std::string print_graph(const Graph& graph, const GraphPrintOptions& options = {});

// Parses the text form. Throws Error with "<source>:<line>:<column>: ..." on bad input.
Graph parse_graph(const std::string& text, const std::string& source = "<input>");

}  // namespace minic
