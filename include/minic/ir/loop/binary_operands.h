// The operands of a binary expression node, whatever its kind. Course module 3.
//
// Shared by the printers, which spell every binary node the same way up to its symbol.
//
// Chapter: docs/module3-loop-ir.md#3-the-text-form-and-the-equivalent-c
#pragma once

#include "minic/ir/loop/expr.h"

#include <utility>

namespace minic::loop {

// {&a, &b} of a node made by BinaryNode (is_binary(e.kind())), else {null, null}.
inline std::pair<const Expr*, const Expr*> binary_operands(const Expr& e) {
  switch (e.kind()) {
#define MINIC_BINARY_CASE(Node) \
  case ExprKind::Node: return {&e.as<Node>()->a, &e.as<Node>()->b};
    MINIC_BINARY_CASE(Add)
    MINIC_BINARY_CASE(Sub)
    MINIC_BINARY_CASE(Mul)
    MINIC_BINARY_CASE(Div)
    MINIC_BINARY_CASE(Mod)
    MINIC_BINARY_CASE(FloorDiv)
    MINIC_BINARY_CASE(FloorMod)
    MINIC_BINARY_CASE(Min)
    MINIC_BINARY_CASE(Max)
    MINIC_BINARY_CASE(EQ)
    MINIC_BINARY_CASE(NE)
    MINIC_BINARY_CASE(LT)
    MINIC_BINARY_CASE(LE)
    MINIC_BINARY_CASE(GT)
    MINIC_BINARY_CASE(GE)
    MINIC_BINARY_CASE(And)
    MINIC_BINARY_CASE(Or)
#undef MINIC_BINARY_CASE
    default: return {nullptr, nullptr};
  }
}

}  // namespace minic::loop
