// The graph text round trip that two fuzz targets check (fuzz_graph_text.cpp on parsed
// text, fuzz_onnx_importer.cpp on imported models). Course module 2.
//
// text.h promises print_graph(parse_graph(text)) == text for every text print_graph
// prints from a graph that verifies. So: if `graph` verifies, print it, parse the print
// (which must not fail) and print that again; the two prints must be equal.
//
// Chapter: docs/module2-graph-ir.md#libfuzzer-targets-every-parser-under-the-sanitizers
#pragma once

#include <string_view>

#include "fuzz_target.h"
#include "minic/ir/graph/text.h"
#include "minic/ir/graph/verifier.h"

namespace minic::fuzz {

// Checks the round trip of `graph` if it verifies; a graph that does not verify is a
// refusal (verify_graph's Error), not a finding.
inline void require_graph_round_trip(std::string_view target, const Graph& graph) {
  verify_graph(graph);
  const std::string printed = print_graph(graph);
  Graph again = must_succeed(target, "the printed graph does not parse back",
                             [&] { return parse_graph(printed, "<printed>"); });
  const std::string printed_again = print_graph(again);
  if (printed_again != printed) {
    finding(target, "print(parse(print(graph))) differs from print(graph)",
            "first print:\n" + printed + "\nsecond print:\n" + printed_again);
  }
}

}  // namespace minic::fuzz
