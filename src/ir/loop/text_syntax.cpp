// Spelling rules the loop IR printer and parser share. Course module 3.
//
// Float immediates print at the precision of their type: an f32 immediate shows the
// shortest digits that read back to the same f32 (fmt's shortest round-trip form), an f64
// immediate those of the double. Reading rounds the digits to the type the same way
// (std::from_chars rounds correctly), so print(parse(text)) == text for every literal the
// printer writes.
//
// Chapter: docs/module3-loop-ir.md#3-the-text-form-and-the-equivalent-c
#include "text_syntax.h"

#include "minic/support/error.h"

#include <array>
#include <charconv>
#include <cmath>
#include <limits>

namespace minic::loop::text {

namespace {

constexpr std::array<std::string_view, 33> kKeywords = {
    "func",         "for",     "in",     "bind",     "parallel", "vectorized", "unrolled",
    "block",        "spatial", "reduce", "where",    "reads",    "writes",     "alloc",
    "alloc_buffer", "init",    "if",     "else",     "evaluate", "strides",    "global",
    "shared",       "local",   "true",   "false",    "cast",     "select",     "ramp",
    "broadcast",    "min",     "max",    "floordiv", "floormod",
};

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

}  // namespace

bool is_keyword(std::string_view word) {
  for (std::string_view keyword : kKeywords) {
    if (keyword == word) return true;
  }
  return false;
}

bool is_bare_name(std::string_view name) {
  if (name.empty() || !is_name_start(name[0])) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (is_name_char(name[i])) continue;
    // A dot joins two parts: never first, last or doubled.
    bool joins = name[i] == '.' && i + 1 < name.size() && is_name_char(name[i + 1]);
    if (!joins) return false;
  }
  return !is_keyword(name) && !special_float_type(name);
}

std::string name_text(std::string_view name) {
  return is_bare_name(name) ? std::string(name) : quote(name);
}

std::string type_text(DataType type) { return type_name(type); }

std::optional<DataType> type_from_text(std::string_view text) {
  if (std::optional<DType> dtype = dtype_from_name(text)) return DataType{*dtype, 1};
  size_t x = text.rfind('x');
  if (x == std::string_view::npos || x + 1 == text.size()) return std::nullopt;
  std::optional<DType> dtype = dtype_from_name(text.substr(0, x));
  int lanes = 0;
  const char* begin = text.data() + x + 1;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, lanes);
  if (!dtype || ptr != end || ec != std::errc() || lanes < 2) return std::nullopt;
  return DataType{*dtype, lanes};
}

std::string int_literal_text(int64_t value, DType dtype) {
  if (dtype == DType::boolean) return value != 0 ? "true" : "false";
  std::string digits = fmt::format("{}", value);
  if (dtype != kDefaultIntType) digits += dtype_name(dtype);
  return digits;
}

double round_to(double value, DType dtype) {
  switch (dtype) {
    case DType::f32: return static_cast<float>(value);
    case DType::f16: return static_cast<float>(Half(static_cast<float>(value)));
    case DType::bf16: return static_cast<float>(BFloat16(static_cast<float>(value)));
    default: return value;
  }
}

std::string float_literal_text(double value, DType dtype) {
  double rounded = round_to(value, dtype);
  std::string suffix = dtype == kDefaultFloatType ? "" : std::string(dtype_name(dtype));
  if (std::isnan(rounded)) return "nan" + suffix;
  if (std::isinf(rounded)) return (rounded < 0 ? "-inf" : "inf") + suffix;
  // f32, f16 and bf16 values are all floats: their shortest float digits read back exactly.
  std::string digits = dtype == DType::f64 ? fmt::format("{}", rounded)
                                           : fmt::format("{}", static_cast<float>(rounded));
  if (digits.find_first_of(".e") == std::string::npos) digits += ".0";
  return digits + suffix;
}

std::optional<DType> special_float_type(std::string_view word) {
  if (!word.starts_with("inf") && !word.starts_with("nan")) return std::nullopt;
  std::string_view suffix = word.substr(3);
  if (suffix.empty()) return kDefaultFloatType;
  std::optional<DType> dtype = dtype_from_name(suffix);
  if (!dtype || !is_float(*dtype)) return std::nullopt;
  return dtype;
}

std::optional<double> read_float(std::string_view digits, bool negative, DType dtype) {
  std::string text = negative ? "-" + std::string(digits) : std::string(digits);
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  if (dtype == DType::f64) {
    double value = 0;
    auto [ptr, ec] = std::from_chars(begin, end, value);
    if (ptr != end || ec != std::errc()) return std::nullopt;
    return value;
  }
  float value = 0;
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ptr != end || ec != std::errc()) return std::nullopt;
  double rounded = round_to(value, dtype);
  if (std::isinf(rounded)) return std::nullopt;  // finite in f32, too large for f16 / bf16
  return rounded;
}

}  // namespace minic::loop::text
