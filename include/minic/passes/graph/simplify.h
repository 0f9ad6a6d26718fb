// The `simplify` pass: algebraic simplification by a table of rewrite rules.
//
// Course module 2. Removes nodes that compute nothing and shortens chains that compute
// little, each by one rule of a table that reads like the algebra it applies:
//   Identity(x) → x                 Dropout(x) → x  (inference; a read mask keeps the node)
//   x * 1 → x,  1 * x → x,  x + 0 → x,  0 + x → x,  x - 0 → x,  x / 1 → x
//   Cast / CastLike / Expand / Reshape / Flatten / Squeeze / Unsqueeze / Slice / Pad that
//   leave x as it is → x;  Concat(x) → x
//   Squeeze(Unsqueeze(x, a), a) → x,  Unsqueeze(Squeeze(x, a), a) → x
//   Reshape(Reshape(x, s1), s2) → Reshape(x, s2)
//   Transpose(x, identity) → x,  Transpose(Transpose(x, p), q) → Transpose(x, p∘q) (→ x when
//   p∘q is the identity)
// A rule fires only when the result is exactly x: x * 1 where the 1 broadcasts x to a
// larger shape stays. Rules apply to a fixed point; a graph output keeps its name.
//
// Chapter: docs/module2-graph-passes.md#2-cleaning-up-simplify-fold-constants-dce-cse
#pragma once

#include "minic/ir/graph/graph.h"

namespace minic {

void simplify(Graph& graph);

}  // namespace minic
