// The graph IR as a Graphviz drawing (DOT text), for people to look at.
//
// Course module 2. graph_to_dot draws a graph the way the course draws computational
// graphs: one box per node, labelled with its op and, on a second line, its output
// types; the graph's inputs and outputs as ellipses; small constants as notes (large ones,
// the weights, are left out with their edges so that the drawing stays readable); every
// edge labelled with the type of the tensor it carries. A fused node (Node::body) is a
// `subgraph cluster_...` box around the nodes of its body, so a drawing of the optimised
// graph shows each fusion group as one kernel; edges into and out of the group go straight
// to the body nodes that read or define them.
//
//   digraph "main" {
//     ...
//     in0 [label="%x\nf32[1,4]", shape=ellipse, ...];
//     n0 [label="Add\nf32[1,4]", shape=box, ...];
//     out0 [label="%y\nf32[1,4]", shape=ellipse, ...];
//     in0 -> n0 [label="f32[1,4]"];
//     n0 -> out0 [label="f32[1,4]"];
//   }
//
// The text is deterministic: ids come from positions (inputs in0.., constants c0.., nodes
// n0.., outputs out0..; a fused body's ids are prefixed with its node's id), and
// everything is written in the graph's own order. `dot -Tsvg` turns it into a picture
// (`minic viz MODEL -o model.svg` does that).
//
// Chapter: docs/module2-graph-passes.md#7-seeing-it
#pragma once

#include "minic/ir/graph/graph.h"

#include <cstdint>
#include <string>

namespace minic {

struct GraphDotOptions {
  // Constants with at most this many elements, and splats (all elements equal), are
  // drawn as notes showing their values; larger ones are left out, with their edges.
  int64_t max_constant_elements = 8;
};

std::string graph_to_dot(const Graph& graph, const GraphDotOptions& options = {});

}  // namespace minic
