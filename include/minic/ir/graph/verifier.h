// The graph verifier: checks the structural invariants every pass must keep.
//
// Course module 2. Run after import and after every pass. Checks: value names are unique;
// every node input is omitted (nullptr), a graph input, a constant or the output of an
// earlier node (SSA, acyclic, topological order); producer and user links agree (a value's
// `users` lists each node once per use); every value has a valid type and constants hold
// data of exactly their type; graph outputs are defined; no node is listed twice; fused
// bodies and graph attributes (control-flow bodies, which may be untyped) verify too.
//
// Chapter: docs/module2-graph-ir.md#the-verifier
#pragma once

#include "minic/ir/graph/graph.h"

namespace minic {

// Throws Error describing the first violation found, naming the node and the value:
//   graph 'main': Relu node defining %b: input 0 %a is used before its definition by ...
void verify_graph(const Graph& graph);

}  // namespace minic
