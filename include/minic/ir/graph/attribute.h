// Node attributes: the compile-time parameters of an op (Conv's strides, Softmax's axis).
//
// Course module 2. An attribute holds one of the ONNX attribute kinds that minic
// supports: an integer, a float, a string, a list of each, a tensor, or a graph (the body
// of a control-flow op: If's branches, Loop's and Scan's body). Attributes of a node are
// kept sorted by name so that printing is deterministic.
//
// Chapter: docs/module2-graph-ir.md#3-the-graph-ir-includeminicirgraphgraphh
#pragma once

#include "minic/tensor/tensor.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace minic {

class Graph;

// A graph attribute is shared, never changed once built: copying a node's attributes
// (as rewrites do) shares its bodies. Its values are untyped: a body's types follow from
// the values it runs on, so shape inference types a copy of it (see src/ops/subgraph.h).
using GraphAttribute = std::shared_ptr<const Graph>;

using AttributeValue = std::variant<int64_t, float, std::string, std::vector<int64_t>,
                                    std::vector<float>, std::vector<std::string>, Tensor,
                                    GraphAttribute>;

// "int", "float", "string", "ints", "floats", "strings", "tensor", "graph": for messages.
std::string_view attribute_kind_name(const AttributeValue& value);

using Attributes = std::map<std::string, AttributeValue, std::less<>>;

}  // namespace minic
