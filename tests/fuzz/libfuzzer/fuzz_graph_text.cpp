// libFuzzer target: the graph IR text parser (.mgraph, include/minic/ir/graph/text.h).
// Course module 2.
//
// Parses the bytes as graph text. A graph that parses and verifies must round-trip
// through print and parse (graph_round_trip.h). Then it is typed again and verified, as
// `minic opt FILE.mgraph` does (tools/minic/graph_input.cpp), so the shape rules of
// src/ops/ see every op and attribute the fuzzer writes; the typed graph must round-trip
// too. minic::Error is a refusal; anything else is a finding (fuzz_target.h).
//
// Chapter: docs/module2-graph-ir.md#libfuzzer-targets-every-parser-under-the-sanitizers
#include <cstddef>
#include <cstdint>
#include <string>

#include "graph_round_trip.h"
#include "minic/ir/graph/text.h"
#include "minic/ir/graph/verifier.h"
#include "minic/ops/op.h"
#include "minic/ops/shape_inference.h"

namespace {
constexpr const char* kTarget = "graph_text";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace minic;
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::run_guarded(kTarget, text, [&] {
    Graph graph = parse_graph(text, "<fuzz>");
    fuzz::run_guarded(kTarget, text, [&] { fuzz::require_graph_round_trip(kTarget, graph); });
    if (graph.opset == 0) graph.opset = kMaxOpset;
    infer_shapes(graph);
    verify_graph(graph);
    fuzz::require_graph_round_trip(kTarget, graph);
  });
  return 0;
}
