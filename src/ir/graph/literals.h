// Reading the literal pieces of the graph text form: types, tensor elements, constant
// data and attribute values. Course module 2.
//
// Chapter: docs/module2-graph-ir.md#the-text-form
#pragma once

#include "lexer.h"

#include "minic/ir/graph/attribute.h"

#include <optional>
#include <string>

namespace minic::graph_text {

// `f32[1,3,224,224]`, `i64[]`. Throws at the dtype name or dimension that is wrong.
TensorType read_type(TokenCursor& in);

// The data that follows a constant's type: `splat<v>`, `dense<[...]>` or `resource<name>`.
// A resource's bytes come later in the file, so `data` is left empty and `resource`
// names it; `where` is the token to point at if the resource is missing or wrong.
struct TensorLiteral {
  TensorType type;
  Tensor data;
  std::optional<std::string> resource;
  Token where;
};
TensorLiteral read_tensor_data(TokenCursor& in, const TensorType& type);

// The value after `name=` in an attribute dictionary. A tensor attribute whose data is a
// resource comes back as an empty Tensor with `resource` set to its literal.
AttributeValue read_attribute_value(TokenCursor& in, std::optional<TensorLiteral>& resource);

// The tensor `literal` describes, its bytes decoded from the hex string token `hex`.
// Throws at `literal.where` if the byte count does not match the type, at `hex` if it
// holds a character that is not a hex digit.
Tensor tensor_from_hex(const TokenCursor& in, const TensorLiteral& literal, const Token& hex);

}  // namespace minic::graph_text
