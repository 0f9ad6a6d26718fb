// Spelling rules the graph printer and parser share. Course module 2.
//
// Both sides of the text form include this so that what one writes the other reads:
// which names may stay bare, how strings escape, and which bit pattern of each float
// type is the NaN spelled plain `nan`.
//
// Chapter: docs/module2-graph-ir.md#the-text-form
#pragma once

#include "minic/support/token_cursor.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace minic::graph_text {

// [A-Za-z0-9_.]: the characters of a bare name after `%` or `@`.
inline bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '.';
}

// A value or node name that prints without quotes after `%` or `@`.
inline bool is_bare_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!is_name_char(c)) return false;
  }
  return true;
}

// [A-Za-z_][A-Za-z0-9_.]*: an op, attribute, graph or resource name that prints bare.
inline bool is_identifier(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9') || name[0] == '.') return false;
  return is_bare_name(name);
}

// Names and strings that need it are quoted by minic::quote (token_cursor.h).
using minic::quote;

// `%name`, `%"odd/name"`.
inline std::string value_ref(std::string_view name) {
  std::string text = "%";
  text += is_bare_name(name) ? std::string(name) : quote(name);
  return text;
}

// The keyword that starts a fused node: `%y = fused(%x, %w) : f32[8] @name { body }`.
inline constexpr std::string_view kFusedKeyword = "fused";

// An op name as a node spells it: bare when it is an identifier and no keyword that starts
// a statement (`const`, `return`, `fused`), quoted otherwise.
inline std::string op_text(std::string_view op) {
  bool keyword = op == "const" || op == "return" || op == kFusedKeyword;
  return is_identifier(op) && !keyword ? std::string(op) : quote(op);
}

// A name in an identifier position: bare when it is an identifier, quoted otherwise.
inline std::string identifier_or_quoted(std::string_view name) {
  return is_identifier(name) ? std::string(name) : quote(name);
}

// The quiet NaN each float type prints as plain `nan`; any other NaN prints its bits.
inline constexpr uint32_t kCanonicalNanF32 = 0x7fc00000u;
inline constexpr uint64_t kCanonicalNanF64 = 0x7ff8000000000000u;
inline constexpr uint16_t kCanonicalNanF16 = 0x7e00u;
inline constexpr uint16_t kCanonicalNanBF16 = 0x7fc0u;

}  // namespace minic::graph_text
