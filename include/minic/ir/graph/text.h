// The text form of the graph IR (.mgraph): print and parse.
//
// Course module 2. One statement a line; a student can read it and write it by hand:
//
//   graph main(%x: f32[1,64,56,56]) -> (%out: f32[1,64,56,56]) opset 17 {
//     %w = const f32[64,64,3,3] resource<w>      // the bytes are in `resources` below
//     %b = const f32[64] splat<0.02>             // every element equal
//     %s = const i64[2] dense<[1, -1]>           // the elements, row-major
//     %0 = Conv(%x, %w, %b) {kernel_shape=[3,3], pads=[1,1,1,1]} : f32[1,64,56,56] @conv1
//     %a, %m = Dropout(%0, _, _) : f32[1,64,56,56], bool[1,64,56,56]
//     %"res/add:0" = Add(%a, %x) : f32[1,64,56,56]
//     %out = Relu(%"res/add:0") : f32[1,64,56,56]
//     return %out
//   }
//
//   resources {
//     w: "0a1b2c..."                             // hex of the raw little-endian bytes
//   }
//
// The pieces:
//   - Values are `%name`; a name outside [A-Za-z0-9_.]+ is quoted: `%"conv1/7x7_s2_1"`.
//     Strings escape `\"`, `\\`, `\n`, `\t`, `\r` and other control bytes as `\xHH`.
//   - Types are `f32[1,3,224,224]`, a scalar `f32[]`; `?` is a node output whose type is
//     not known yet (the parser runs no shape inference). The signature's output types
//     must agree with the returned values'; an output written without a type takes the
//     signature's.
//   - Constants are `splat<v>` (more than one element, all equal), `dense<[...]>` (at most
//     `max_inline_elements`) or `resource<name>` (the bytes in the `resources` section).
//     Float elements print in the shortest form that reads back exactly, always with a
//     decimal point or exponent; `inf`, `-inf`, `nan`, and `nan(0x7fc00001)` for a NaN
//     with other bits than the type's usual quiet NaN. bool elements are true / false.
//   - A node is `%outputs = Op(inputs) {attributes} : output types @node_name`. `_` is an
//     omitted optional input. The attributes (sorted by name) and `@node_name` (the ONNX
//     node name) appear only when there are any. A node without outputs is `Op(inputs)`.
//   - Attributes: int `k=3`, float `alpha=0.2` (always with `.` or an exponent), string
//     `mode="constant"`, lists `pads=[1,1,1,1]`, `scales=[0.5, 1.0]`, `names=["a", "b"]`,
//     empty lists with their kind `ints[]`, `floats[]`, `strings[]`, tensors
//     `value=tensor<f32[1] dense<[0.0]>>` (any constant form), and graphs (the bodies of
//     If, Loop, Scan), written like the top-level graph without `opset`, their
//     statements indented two steps past the node's line:
//
//       %y = If(%c, %x) {captures=1, else_branch=graph e(%x: ?) -> (%o: ?) {
//           %o = Neg(%x) : ?
//           return %o
//         }, then_branch=graph t(%x: ?) -> (%x: ?) {
//           return %x
//         }} : f32[3]
//
//     A graph attribute is a scope of its own that sees only its own values, and its
//     inputs may be untyped (`?`).
//   - A fused node (Node::body, one fusion group) is `fused(...)` with its body after it,
//     in braces and indented:
//
//       %y = fused(%x, %w, %b) : f32[1,64,56,56] @conv_add_relu {
//         %0 = Conv(%x, %w, %b) {kernel_shape=[3,3], pads=[1,1,1,1]} : f32[1,64,56,56]
//         %1 = Add(%0, %x) : f32[1,64,56,56]
//         %y = Relu(%1) : f32[1,64,56,56]
//       }
//
//     The body is a scope of its own. Its inputs are named like the node's inputs (inside,
//     `%x` is the body input standing for the outer `%x`; the inputs are distinct values,
//     never `_`); its outputs are the body values named like the node's outputs (inner `%y`
//     defines the body output standing for outer `%y`), so a body has no `return`. Other
//     body names are local: `%0` inside may also name an outer value. The body follows the
//     graph's opset; it may hold constants and fused nodes of its own, written as in a
//     graph (fuse-ops passes constants in as inputs instead). `@name` names the group.
//   - An op, attribute, graph or resource name outside [A-Za-z_][A-Za-z0-9_.]* is quoted, as
//     is an op named like a keyword that starts a statement (`const`, `return`, `fused`).
//   - `//` starts a comment that runs to the end of the line.
//
// print_graph(parse_graph(text)) == text for every text print_graph produces from a graph
// that verifies (verify_graph checks the naming rule of fused bodies), and parse_graph
// reproduces every constant bit for bit.
//
// Chapter: docs/module2-graph-ir.md#the-text-form
#pragma once

#include "minic/ir/graph/graph.h"

#include <string>

namespace minic {

struct GraphPrintOptions {
  // Constants (and tensor attributes) with more elements than `max_inline_elements` that
  // are not splats print as a summary, `dense<...elided, 4096 elements>`, instead of
  // going to the `resources` section. Such text is for people; it does not parse.
  bool elide_large_constants = false;
  int64_t max_inline_elements = 16;
};

std::string print_graph(const Graph& graph, const GraphPrintOptions& options = {});

// Parses the text form into a graph with the types as written. Throws Error with
// "<source>:<line>:<column>: ..." on bad input: a syntax error ("expected ..., found
// ..."), an unknown or redefined value, a bad type or dtype name, a constant whose element
// count does not match its type, a missing resource.
Graph parse_graph(const std::string& text, const std::string& source = "<input>");

}  // namespace minic
