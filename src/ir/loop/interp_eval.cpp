// Expression evaluation for the loop IR interpreter. Course module 3.
//
// Every expression is evaluated lane by lane into a Value. Arithmetic is done in the
// type's own compute type (compute_t, dtype.h) and rounded to the type after every
// operation, as compiled code does:
//   - f32 in float, never in double (so a + b * c rounds twice, as it does in compiled
//     code that does not contract it into an fma); f64 in double; f16 and bf16 in float,
//     rounded to the 16-bit type after each operation; float division by zero gives
//     infinity or NaN (IEEE), and Mod of floats is fmod;
//   - integers wrap around at their width; Div and Mod truncate toward zero (C), FloorDiv
//     and FloorMod round toward negative infinity; a division by zero is an Error, and
//     the most negative value divided by -1 wraps (no undefined behaviour);
//   - Min and Max of floats propagate NaN (as ONNX's Min, Max and Relu do); comparisons
//     are C's (false for NaN, but NE);
//   - math intrinsics are computed in double and rounded to the type (f16 and bf16 through
//     float); round() goes half to even. Compiled code calling a float libm may differ
//     from these by an ulp. The shifts of unsigned integers give 0 for a shift by the
//     bit width or more;
//   - Cast converts as Tensor::cast does (the same rules: floats to integers truncate
//     and saturate, NaN gives 0; anything to bool is value != 0);
//   - Select with a scalar condition evaluates only the operand it picks (as C's ?:
//     does), so it may guard a load that would be out of bounds; with a vector condition
//     it evaluates both operands in full, as a vector blend does, so both must be in
//     bounds in every lane.
//
// Chapter: docs/module3-loop-ir.md#4-the-verifier-and-the-interpreter-the-oracle
#include "interp_thread.h"

#include "minic/tensor/element_cast.h"

#include <cmath>
#include <limits>

namespace minic::loop::interp {

namespace {

template <typename C>
C divide(ExprKind kind, C a, C b) {
  if (b == 0) fail("integer division by zero in {}", expr_kind_name(kind));
  bool quotient = kind == ExprKind::Div || kind == ExprKind::FloorDiv;
  if constexpr (std::is_signed_v<C>) {
    // a / -1 is -a, which wraps for the most negative a (C++ leaves it undefined).
    if (b == -1) return quotient ? static_cast<C>(uint64_t{0} - static_cast<uint64_t>(a)) : C{0};
    C q = static_cast<C>(a / b);
    C r = static_cast<C>(a % b);
    bool round_down = r != 0 && (r < 0) != (b < 0);
    if (kind == ExprKind::FloorDiv) return round_down ? static_cast<C>(q - 1) : q;
    if (kind == ExprKind::FloorMod) return round_down ? static_cast<C>(r + b) : r;
    return quotient ? q : r;
  } else {
    return quotient ? static_cast<C>(a / b) : static_cast<C>(a % b);
  }
}

template <typename C>
C integer_op(ExprKind kind, C a, C b) {
  // Through uint64_t, whose arithmetic wraps, then back to C (modulo 2^width).
  auto wide = [](C value) { return static_cast<uint64_t>(value); };
  switch (kind) {
    case ExprKind::Add: return static_cast<C>(wide(a) + wide(b));
    case ExprKind::Sub: return static_cast<C>(wide(a) - wide(b));
    case ExprKind::Mul: return static_cast<C>(wide(a) * wide(b));
    case ExprKind::Min: return std::min(a, b);
    case ExprKind::Max: return std::max(a, b);
    default: return divide(kind, a, b);
  }
}

template <typename C>
C float_op(ExprKind kind, C a, C b) {
  switch (kind) {
    case ExprKind::Add: return a + b;
    case ExprKind::Sub: return a - b;
    case ExprKind::Mul: return a * b;
    case ExprKind::Div: return a / b;
    case ExprKind::Mod: return std::fmod(a, b);
    case ExprKind::Min: return std::isnan(a) ? a : std::isnan(b) ? b : (b < a ? b : a);
    case ExprKind::Max: return std::isnan(a) ? a : std::isnan(b) ? b : (a < b ? b : a);
    default: fail("{} of floats", expr_kind_name(kind));
  }
}

// One lane of a binary node whose operands have element type T.
template <typename T>
Scalar binary_lane(ExprKind kind, Scalar x, Scalar y) {
  using C = compute_t<T>;
  C a = get<T>(x);
  C b = get<T>(y);
  switch (kind) {
    case ExprKind::EQ: return make_scalar<bool>(a == b);
    case ExprKind::NE: return make_scalar<bool>(a != b);
    case ExprKind::LT: return make_scalar<bool>(a < b);
    case ExprKind::LE: return make_scalar<bool>(a <= b);
    case ExprKind::GT: return make_scalar<bool>(a > b);
    case ExprKind::GE: return make_scalar<bool>(a >= b);
    default: break;
  }
  if constexpr (std::is_same_v<T, bool>) {
    switch (kind) {
      case ExprKind::And: case ExprKind::Min: return make_scalar<bool>(a && b);
      case ExprKind::Or: case ExprKind::Max: return make_scalar<bool>(a || b);
      default: fail("{} of bools", expr_kind_name(kind));
    }
  } else if constexpr (std::is_floating_point_v<C>) {
    return make_scalar<T>(float_op<C>(kind, a, b));
  } else {
    return make_scalar<T>(integer_op<C>(kind, a, b));
  }
}

// Tensor::cast's element conversion (minic/tensor/element_cast.h), on one lane.
template <typename To, typename From>
Scalar convert_lane(Scalar value) {
  To converted = convert_element<To, From>(From(get<From>(value)));
  return make_scalar<To>(static_cast<compute_t<To>>(converted));
}

double intrinsic(const std::string& name, double x, double y) {
  if (name == "exp") return std::exp(x);
  if (name == "log") return std::log(x);
  if (name == "sqrt") return std::sqrt(x);
  if (name == "tanh") return std::tanh(x);
  if (name == "erf") return std::erf(x);
  if (name == "sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (name == "fabs") return std::fabs(x);
  if (name == "floor") return std::floor(x);
  if (name == "ceil") return std::ceil(x);
  if (name == "round") return std::nearbyint(x);  // half to even in the default mode
  if (name == "pow") return std::pow(x, y);
  if (name == "sin") return std::sin(x);
  if (name == "cos") return std::cos(x);
  if (name == "tan") return std::tan(x);
  if (name == "asin") return std::asin(x);
  if (name == "acos") return std::acos(x);
  if (name == "atan") return std::atan(x);
  if (name == "sinh") return std::sinh(x);
  if (name == "cosh") return std::cosh(x);
  if (name == "asinh") return std::asinh(x);
  if (name == "acosh") return std::acosh(x);
  if (name == "atanh") return std::atanh(x);
  fail("the interpreter has no intrinsic '{}'", name);
}

// shift_left and shift_right of an unsigned integer `bits` wide; a shift by the width or
// more gives 0 (C leaves it undefined). The caller truncates the result to the type.
uint64_t shift(const std::string& name, uint64_t x, uint64_t amount, uint64_t bits) {
  if (amount >= bits) return 0;
  if (name == "shift_left") return x << amount;
  if (name == "shift_right") return x >> amount;
  fail("the interpreter has no integer intrinsic '{}'", name);
}

// dot4_u8i8: the bytes of `a` read unsigned times those of `b` read signed, summed (the
// first byte in the lowest bits).
int32_t dot4_u8i8(int32_t a, int32_t b) {
  int32_t sum = 0;
  for (int t = 0; t < 4; ++t) {
    int32_t a_byte = static_cast<uint8_t>(static_cast<uint32_t>(a) >> (8 * t));
    int32_t b_byte =
        static_cast<int8_t>(static_cast<uint8_t>(static_cast<uint32_t>(b) >> (8 * t)));
    sum += a_byte * b_byte;
  }
  return sum;
}

class Evaluator {
 public:
  explicit Evaluator(Thread& thread) : thread_(thread) {}

  Value eval(const Expr& expr) {
    switch (expr.kind()) {
      case ExprKind::IntImm: return constant<IntImm>(expr);
      case ExprKind::FloatImm: return constant<FloatImm>(expr);
      case ExprKind::Var: {
        Value result(expr.type());
        result[0].i = thread_.var(expr.as<Var>());
        return result;
      }
#define MINIC_BINARY_CASE(Node) \
  case ExprKind::Node:          \
    return binary(expr, expr.as<Node>()->a, expr.as<Node>()->b);
      MINIC_BINARY_CASE(Add) MINIC_BINARY_CASE(Sub) MINIC_BINARY_CASE(Mul)
      MINIC_BINARY_CASE(Div) MINIC_BINARY_CASE(Mod) MINIC_BINARY_CASE(FloorDiv)
      MINIC_BINARY_CASE(FloorMod) MINIC_BINARY_CASE(Min) MINIC_BINARY_CASE(Max)
      MINIC_BINARY_CASE(EQ) MINIC_BINARY_CASE(NE) MINIC_BINARY_CASE(LT) MINIC_BINARY_CASE(LE)
      MINIC_BINARY_CASE(GT) MINIC_BINARY_CASE(GE) MINIC_BINARY_CASE(And) MINIC_BINARY_CASE(Or)
#undef MINIC_BINARY_CASE
      case ExprKind::Not: {
        Value result = eval(expr.as<Not>()->a);
        for (int lane = 0; lane < result.lanes(); ++lane) result[lane].i = !result[lane].i;
        return result;
      }
      case ExprKind::Select: return select(expr.as<Select>());
      case ExprKind::Cast: return cast(expr.as<Cast>());
      case ExprKind::Load: return load(expr.as<Load>());
      case ExprKind::Call: return call(expr.as<Call>());
      case ExprKind::Ramp: {
        const Ramp* ramp = expr.as<Ramp>();
        uint64_t base = static_cast<uint64_t>(eval_scalar(thread_, ramp->base));
        uint64_t stride = static_cast<uint64_t>(eval_scalar(thread_, ramp->stride));
        Value result(expr.type());
        for (int lane = 0; lane < ramp->lanes; ++lane) {
          result[lane].i = static_cast<int64_t>(base + static_cast<uint64_t>(lane) * stride);
        }
        return result;
      }
      case ExprKind::Broadcast: {
        Value scalar = eval(expr.as<Broadcast>()->value);
        Value result(expr.type());
        for (int lane = 0; lane < result.lanes(); ++lane) result[lane] = scalar[0];
        return result;
      }
    }
    internal_fail("unknown expression kind");
  }

 private:
  template <typename Node>
  Value constant(const Expr& expr) {
    Value result(expr.type());
    auto value = expr.as<Node>()->value;
    visit_dtype(expr.type().dtype, [&]<typename T>() {
      result[0] = make_scalar<T>(static_cast<compute_t<T>>(value));
    });
    return result;
  }

  Value binary(const Expr& expr, const Expr& a, const Expr& b) {
    Value x = eval(a);
    Value y = eval(b);
    Value result(expr.type());
    visit_dtype(a.type().dtype, [&]<typename T>() {
      for (int lane = 0; lane < result.lanes(); ++lane) {
        result[lane] = binary_lane<T>(expr.kind(), x[lane], y[lane]);
      }
    });
    return result;
  }

  Value select(const Select* node) {
    Value condition = eval(node->condition);
    if (condition.lanes() == 1) return eval(condition[0].i ? node->true_value : node->false_value);
    Value if_true = eval(node->true_value);
    Value if_false = eval(node->false_value);
    for (int lane = 0; lane < if_true.lanes(); ++lane) {
      if (!condition[lane].i) if_true[lane] = if_false[lane];
    }
    return if_true;
  }

  Value cast(const Cast* node) {
    Value value = eval(node->value);
    Value result(node->type);
    visit_dtype(node->value.type().dtype, [&]<typename From>() {
      visit_dtype(node->type.dtype, [&]<typename To>() {
        for (int lane = 0; lane < result.lanes(); ++lane) {
          result[lane] = convert_lane<To, From>(value[lane]);
        }
      });
    });
    return result;
  }

  Value load(const Load* node) {
    Storage& storage = thread_.storage(node->buffer);
    Value offsets =
        element_offsets(thread_, storage, node->indices, node->type.lanes, "load from");
    Value result(node->type);
    for (int lane = 0; lane < result.lanes(); ++lane) {
      result[lane] = thread_.read(storage, offsets[lane].i);
    }
    return result;
  }

  Value call(const Call* node) {
    if (node->name == "barrier") fail("a barrier is a statement, not a value");
    std::vector<Value> args;
    for (const Expr& arg : node->args) args.push_back(eval(arg));
    Value result(node->type);
    visit_dtype(node->type.dtype, [&]<typename T>() {
      using C = compute_t<T>;
      if constexpr (std::is_floating_point_v<C>) {
        for (int lane = 0; lane < result.lanes(); ++lane) {
          double x = static_cast<double>(get<T>(args[0][lane]));
          double y = args.size() > 1 ? static_cast<double>(get<T>(args[1][lane])) : 0.0;
          result[lane] = make_scalar<T>(static_cast<C>(intrinsic(node->name, x, y)));
        }
      } else if constexpr (std::is_unsigned_v<C> && !std::is_same_v<T, bool>) {
        for (int lane = 0; lane < result.lanes(); ++lane) {
          uint64_t x = get<T>(args[0][lane]);
          uint64_t amount = get<T>(args[1][lane]);
          uint64_t value = shift(node->name, x, amount, sizeof(T) * 8);
          result[lane] = make_scalar<T>(static_cast<C>(value));
        }
      } else if constexpr (std::is_same_v<T, int32_t>) {
        if (node->name != "dot4_u8i8") fail("the interpreter has no int32 intrinsic '{}'",
                                            node->name);
        for (int lane = 0; lane < result.lanes(); ++lane) {
          result[lane] = make_scalar<T>(dot4_u8i8(get<T>(args[0][lane]), get<T>(args[1][lane])));
        }
      } else {
        fail("intrinsic {} of {}: the interpreter computes math on floats, shifts on "
             "unsigned integers and dot4_u8i8 on int32 only", node->name, type_name(node->type));
      }
    });
    return result;
  }

  Thread& thread_;
};

// "[3, 9]": the indices of `lane`, for an error message.
std::string index_string(Thread& thread, const std::vector<Expr>& indices, int lane) {
  std::string text;
  for (const Expr& index : indices) {
    text += (text.empty() ? "" : ", ") + std::to_string(eval(thread, index).lane_or_scalar(lane).i);
  }
  return "[" + text + "]";
}

}  // namespace

Value eval(Thread& thread, const Expr& expr) { return Evaluator(thread).eval(expr); }

int64_t eval_scalar(Thread& thread, const Expr& expr) {
  Value value = eval(thread, expr);
  MINIC_CHECK(value.lanes() == 1 && !is_float(value.type().dtype));
  return value[0].i;
}

Value element_offsets(Thread& thread, const Storage& storage, const std::vector<Expr>& indices,
                      int lanes, const char* access) {
  const BufferNode& buffer = *storage.buffer;
  Value offsets(DataType::int64(lanes));
  for (int lane = 0; lane < lanes; ++lane) offsets[lane].i = 0;
  for (size_t d = 0; d < indices.size(); ++d) {
    Value index = eval(thread, indices[d]);
    for (int lane = 0; lane < lanes; ++lane) {
      int64_t i = index.lane_or_scalar(lane).i;
      if (i < 0 || i >= buffer.shape[d]) {
        std::string which = lanes > 1 ? fmt::format(" (lane {})", lane) : "";
        fail("out-of-bounds {} buffer {}: index {}{} is outside its shape {}", access,
             buffer.name, index_string(thread, indices, lane), which,
             shape_string(buffer.shape));
      }
      offsets[lane].i += i * buffer.strides[d];
    }
  }
  for (int lane = 0; lane < lanes; ++lane) {
    // Within the shape, but not within the storage: strides that do not fit the shape.
    if (offsets[lane].i < 0 || offsets[lane].i >= storage.size) {
      fail("{} buffer {}: element {} is outside its storage", access, buffer.name,
           offsets[lane].i);
    }
  }
  return offsets;
}

}  // namespace minic::loop::interp
