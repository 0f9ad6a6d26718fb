// The pieces of C the equivalent-C printer writes: identifiers, types, operators,
// literals, flat buffer indices and the prelude. Course module 3.
//
// Literals keep their exact value: floats print their shortest round-trip digits (as the
// loop IR text does) with C's `f` suffix for f32; integers beyond 32 bits use INT64_C, so
// no literal depends on the width of C's int.
//
// Chapter: docs/module3-loop-ir.md#3-the-text-form-and-the-equivalent-c
#include "minic/ir/loop/c_syntax.h"

#include "text_syntax.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <set>

namespace minic::loop::c_syntax {

namespace {

constexpr std::string_view kPreludeHead = R"(#include <math.h>
#include <stdbool.h>
#include <stdint.h>

// The loop IR's min, max, floordiv, floormod and sigmoid in C. C's / and % truncate
// toward zero; floordiv and floormod round toward negative infinity.
#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))
)";

// {Q}: the functions' qualifier, "static inline" in C.
constexpr std::string_view kHelpers = R"({Q} int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}
{Q} int64_t floormod(int64_t a, int64_t b) {
  int64_t r = a % b;
  return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;
}
{Q} float sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }
{Q} double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
// The IR's shifts of unsigned integers give 0 for a shift by the bit width or more.
#define shift_left(a, b) ((b) >= 8 * sizeof(a) ? 0 : (a) << (b))
#define shift_right(a, b) ((b) >= 8 * sizeof(a) ? 0 : (a) >> (b))
// The bytes of a read unsigned times those of b read signed, summed (one lane of vpdpbusd).
{Q} int32_t dot4_u8i8(int32_t a, int32_t b) {
  int32_t sum = 0;
  for (int t = 0; t < 4; ++t) {
    int32_t a_byte = (uint8_t)((uint32_t)a >> (8 * t));
    int32_t b_byte = (int8_t)(uint8_t)((uint32_t)b >> (8 * t));
    sum += a_byte * b_byte;
  }
  return sum;
}
)";

// C keywords, and the names the prelude, <math.h>, <stdint.h> and the printed code use.
const std::set<std::string_view> kReservedInC = {
    // C99 keywords, and bool, true and false from <stdbool.h>
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "bool", "true", "false",
    // the prelude, and the CUDA words GPU code uses
    "min", "max", "floordiv", "floormod", "sigmoid", "sigmoidf", "shift_left", "shift_right",
    "dot4_u8i8",
    "__shared__", "__syncthreads",
    // <stdint.h> and <math.h>
    "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
    "INT64_C", "INT64_MIN", "NAN", "INFINITY", "exp", "expf", "log", "logf", "sqrt", "sqrtf",
    "tanh", "tanhf", "erf", "erff", "fabs", "fabsf", "floor", "floorf", "ceil", "ceilf", "rint",
    "rintf", "pow", "powf", "fmod", "fmodf", "sin", "sinf", "cos", "cosf", "tan", "tanf", "asin",
    "asinf", "acos", "acosf", "atan", "atanf", "sinh", "sinhf", "cosh", "coshf", "asinh",
    "asinhf", "acosh", "acoshf", "atanh", "atanhf",
};

}  // namespace

std::string helper_functions(std::string_view qualifier) {
  std::string text(kHelpers);
  for (size_t at = text.find("{Q}"); at != std::string::npos; at = text.find("{Q}", at)) {
    text.replace(at, 3, qualifier);
  }
  return text;
}

std::string_view prelude() {
  static const std::string text = std::string(kPreludeHead) + helper_functions("static inline");
  return text;
}

std::string c_identifier(std::string_view name) {
  std::string id;
  for (char c : name) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_';
    id += keep ? c : '_';
  }
  if (id.empty() || (id[0] >= '0' && id[0] <= '9')) id = "v" + id;
  if (kReservedInC.count(id)) id += "_";
  return id;
}

const char* c_type(DType dtype) {
  switch (dtype) {
    case DType::f32: return "float";
    case DType::f64: return "double";
    case DType::f16: return "_Float16";
    case DType::bf16: return "__bf16";
    case DType::i8: return "int8_t";
    case DType::i16: return "int16_t";
    case DType::i32: return "int32_t";
    case DType::i64: return "int64_t";
    case DType::u16: return "uint16_t";
    case DType::u32: return "uint32_t";
    case DType::u64: return "uint64_t";
    case DType::boolean: return "bool";
    default: return "uint8_t";  // u8 and the storage-only types: one byte an element
  }
}

std::optional<COp> c_operator(const Expr& e) {
  switch (e.kind()) {
    case ExprKind::Add: return COp{"+", kAdditive};
    case ExprKind::Sub: return COp{"-", kAdditive};
    case ExprKind::Mul: return COp{"*", kMultiplicative};
    case ExprKind::Div: return COp{"/", kMultiplicative};
    case ExprKind::Mod:
      if (is_float(e.type().dtype)) return std::nullopt;  // fmodf
      return COp{"%", kMultiplicative};
    case ExprKind::EQ: return COp{"==", kEquality};
    case ExprKind::NE: return COp{"!=", kEquality};
    case ExprKind::LT: return COp{"<", kRelational};
    case ExprKind::LE: return COp{"<=", kRelational};
    case ExprKind::GT: return COp{">", kRelational};
    case ExprKind::GE: return COp{">=", kRelational};
    case ExprKind::And: return COp{"&&", kAnd};
    case ExprKind::Or: return COp{"||", kOr};
    default: return std::nullopt;
  }
}

// f16 and bf16 compute through the float functions, as minic's kernels do. IR `round`
// rounds half to even, as rint does in the default rounding mode. The shifts are the
// prelude's macros, one name for every type.
std::string c_function(const std::string& name, DType dtype) {
  if (name == "shift_left" || name == "shift_right" || name == "dot4_u8i8") return name;
  std::string base = name == "round" ? "rint" : name;
  return dtype == DType::f64 ? base : base + "f";
}

std::string prelude_function(ExprKind kind) {
  switch (kind) {
    case ExprKind::Min: return "min";
    case ExprKind::Max: return "max";
    case ExprKind::FloorDiv: return "floordiv";
    default: return "floormod";
  }
}

std::pair<std::string, int> int_literal(int64_t value, DType dtype) {
  if (dtype == DType::boolean) return {value != 0 ? "true" : "false", kAtom};
  std::string digits;
  if (value == std::numeric_limits<int64_t>::min()) {
    digits = "INT64_MIN";
  } else if (value > std::numeric_limits<int32_t>::max() ||
             value < std::numeric_limits<int32_t>::min()) {
    digits = fmt::format("INT64_C({})", value);
  } else {
    digits = fmt::format("{}", value);
  }
  int precedence = value < 0 && digits[0] == '-' ? kUnary : kAtom;
  if (dtype == DType::i64) return {digits, precedence};
  return {fmt::format("({}){}", c_type(dtype), digits), kUnary};
}

std::pair<std::string, int> float_literal(double value, DType dtype) {
  double rounded = text::round_to(value, dtype);
  std::string digits;
  if (std::isnan(rounded)) {
    digits = "NAN";
  } else if (std::isinf(rounded)) {
    digits = rounded < 0 ? "-INFINITY" : "INFINITY";
  } else {
    digits = dtype == DType::f64 ? fmt::format("{}", rounded)
                                 : fmt::format("{}", static_cast<float>(rounded));
    if (digits.find_first_of(".e") == std::string::npos) digits += ".0";
    if (dtype != DType::f64) digits += "f";
  }
  int precedence = digits[0] == '-' ? kUnary : kAtom;
  if (dtype == DType::f32 || dtype == DType::f64) return {digits, precedence};
  return {fmt::format("({}){}", c_type(dtype), digits), kUnary};
}

Expr flat_index(const BufferNode& buffer, const std::vector<Expr>& indices) {
  Expr flat;
  for (size_t d = 0; d < indices.size() && d < buffer.strides.size(); ++d) {
    int64_t stride = buffer.strides[d];
    Expr term = indices[d];
    if (stride == 0) continue;
    const IntImm* constant = term.as<IntImm>();
    int64_t product = 0;
    bool fold = constant && term.type() == DataType::int64() &&
                !__builtin_mul_overflow(constant->value, stride, &product);
    if (fold && product == 0) continue;
    if (fold) {
      term = IntImm::make(product);
    } else if (stride != 1) {
      term = term * stride;
    }
    flat = flat ? flat + term : term;
  }
  return flat ? flat : IntImm::make(0);
}

std::optional<int64_t> span(const BufferNode& buffer) {
  int64_t last = 0;
  for (size_t d = 0; d < buffer.shape.size(); ++d) {
    if (buffer.shape[d] == 0) return 1;
    int64_t stride = buffer.strides[d];
    int64_t reach = 0;
    if (stride == std::numeric_limits<int64_t>::min() ||
        __builtin_mul_overflow(buffer.shape[d] - 1, stride < 0 ? -stride : stride, &reach) ||
        __builtin_add_overflow(last, reach, &last)) {
      return std::nullopt;
    }
  }
  if (last == std::numeric_limits<int64_t>::max()) return std::nullopt;
  return last + 1;
}

}  // namespace minic::loop::c_syntax
