// Node attributes: the compile-time parameters of an op (Conv's strides, Softmax's axis).
//
// Course module 2. An attribute holds one of the ONNX attribute kinds that minic
// supports: an integer, a float, a string, a list of each, or a tensor. Attributes of a
// node are kept sorted by name so that printing is deterministic.
//
// Chapter: docs/module2-graph-ir.md#3-the-graph-ir-includeminicirgraphgraphh
#pragma once

#include "minic/tensor/tensor.h"

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace minic {

using AttributeValue = std::variant<int64_t, float, std::string, std::vector<int64_t>,
                                    std::vector<float>, std::vector<std::string>, Tensor>;

// "int", "float", "string", "ints", "floats", "strings", "tensor": for error messages.
std::string_view attribute_kind_name(const AttributeValue& value);

using Attributes = std::map<std::string, AttributeValue, std::less<>>;

}  // namespace minic
