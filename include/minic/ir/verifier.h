// The graph verifier: checks the structural invariants every pass must keep.
//
// Course module 2. Run after import and after every pass. Checks: value names are unique;
// every node input is a graph input, a constant or the output of an earlier node (SSA,
// acyclic, topological order); producer and user links agree; every value has a type and
// constants match their type; graph outputs are defined.
#pragma once

#include "minic/ir/graph.h"

namespace minic {

// Throws Error describing the first violation found.
void verify_graph(const Graph& graph);

}  // namespace minic
