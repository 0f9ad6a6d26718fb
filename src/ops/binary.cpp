// Binary elementwise ops with numpy broadcasting: arithmetic (Add, Sub, Mul, Div, Mod, Pow),
// comparisons (Equal, Less, LessOrEqual, Greater, GreaterOrEqual), logic (And, Or, Xor) and
// BitShift. Course module 2.
//
// Every kernel here is out[i] = f(a[ia], b[ib]) over the broadcast shape of a and b (see
// broadcast.h), with fusion kind `broadcast`. Integer arithmetic behaves as on the machine:
// +, - and * wrap around modulo 2^bits; Div truncates toward zero like C. Where the hardware
// would trap -- an integer divided by zero -- the result is 0, so a bad input cannot crash.
// Opsets before 7 broadcast only when a `broadcast` attribute asks; minic starts at 7.
//
// Compute rules (course module 3): the same formulas on loop IR expressions of the element
// type (f16 and bf16 rounded after each operation, as the kernels do), with the integer
// division by zero guarded by a select; BitShift is the IR's shift_left or shift_right, which
// give 0 for a shift by the width or more, as the kernel does.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "broadcast.h"
#include "elementwise.h"

#include "minic/ops/compute.h"

#include <cmath>
#include <map>

namespace minic {

namespace {

// Which element types an op takes, and what it gives.
enum class Operands {
  numbers,          // any numeric type, both inputs the same; the output has that type
  compare_numbers,  // any numeric type, both the same; the output is bool
  compare_any,      // any type, bool included, both the same; the output is bool (Equal)
  bools,            // bool in, bool out (And, Or, Xor)
  unsigned_ints,    // unsigned integers (BitShift)
  pow,              // numeric base and exponent of any two types; the output has the base's
};

TensorType binary_type(const ShapeContext& ctx, Operands operands) {
  const TensorType& a = ctx.input_type(0);
  const TensorType& b = ctx.input_type(1);
  Shape shape = broadcast_shapes(ctx, {a.shape, b.shape});
  if (operands != Operands::pow) require_same_dtype(ctx, 0, 1);
  switch (operands) {
    case Operands::numbers:
      require_numeric_input(ctx, 0);
      return {a.dtype, shape};
    case Operands::compare_numbers:
      require_numeric_input(ctx, 0);
      return {DType::boolean, shape};
    case Operands::compare_any:
      return {DType::boolean, shape};
    case Operands::bools:
      if (a.dtype != DType::boolean) ctx.fail("takes bool tensors, not {}", dtype_name(a.dtype));
      return {DType::boolean, shape};
    case Operands::unsigned_ints:
      if (!is_unsigned_int(a.dtype)) {
        ctx.fail("takes unsigned integer tensors, not {}", dtype_name(a.dtype));
      }
      return {a.dtype, shape};
    case Operands::pow:
      require_numeric_input(ctx, 0);
      require_numeric_input(ctx, 1);
      return {a.dtype, shape};
  }
  return {a.dtype, shape};  // unreachable: every enumerator is handled
}

ShapeRule binary_shape(Operands operands) {
  return [operands](const ShapeContext& ctx) {
    return std::vector<TensorType>{binary_type(ctx, operands)};
  };
}

// How integers are computed: as themselves (Div, Mod), or in uint64_t so that +, - and *
// wrap around (see elementwise.h).
enum class Integers { exact, wrapping };

// out = formula(a, b) elementwise, for numeric a and b of one type; the formula sees values of
// compute_t<T>, or uint64_t for wrapping integer arithmetic.
template <typename Formula>
Tensor arithmetic(const KernelContext& ctx, Integers integers, Formula formula) {
  Tensor out = ctx.make_output(0);
  visit_numeric(out.dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    broadcast_binary<T, T, T>(ctx.input(0), ctx.input(1), out, [&](T x, T y) {
      if constexpr (std::is_integral_v<C>) {
        if (integers == Integers::wrapping) {
          return static_cast<T>(formula(static_cast<uint64_t>(x), static_cast<uint64_t>(y)));
        }
      }
      return T(formula(C(x), C(y)));
    });
  });
  return out;
}

template <typename Formula>
Kernel arithmetic_kernel(Integers integers, Formula formula) {
  return [integers, formula](const KernelContext& ctx) {
    return std::vector<Tensor>{arithmetic(ctx, integers, formula)};
  };
}

// Div: x / y. Integers truncate toward zero; x / 0 gives 0, and MIN / -1 wraps to MIN.
auto divide = [](auto x, auto y) {
  using C = decltype(x);
  if constexpr (std::is_integral_v<C>) {
    if (y == 0) return C(0);
    if constexpr (std::is_signed_v<C>) {
      if (y == -1) return negate(x);
    }
  }
  return C(x / y);
};

// Mod with fmod=1: the remainder takes the dividend's sign, like C's % and fmod.
auto truncated_mod = [](auto x, auto y) {
  using C = decltype(x);
  if constexpr (std::is_floating_point_v<C>) {
    return std::fmod(x, y);
  } else {
    if (y == 0) return C(0);
    if constexpr (std::is_signed_v<C>) {
      if (y == -1) return C(0);
    }
    return C(x % y);
  }
};

// Mod with fmod=0 (the default): the remainder takes the divisor's sign, like Python's %.
auto floored_mod = [](auto x, auto y) {
  using C = decltype(x);
  C remainder = truncated_mod(x, y);
  if (remainder != 0 && is_negative(remainder) != is_negative(y)) remainder = C(remainder + y);
  return remainder;
};

std::vector<Tensor> mod_kernel(const KernelContext& ctx) {
  if (ctx.get_int("fmod", 0) != 0) return {arithmetic(ctx, Integers::exact, truncated_mod)};
  return {arithmetic(ctx, Integers::exact, floored_mod)};
}

// --- Pow: base ^ exponent, the two of any numeric types; the result has the base's type ------

// base^n for integers by repeated squaring, wrapping like the other integer arithmetic. A
// negative n gives 1 / base^|n| truncated toward zero (and 0 for a base of 0).
template <typename B, typename E>
B integer_power(B base, E exponent) {
  if (is_negative(exponent)) {
    if (base == 1) return 1;
    if constexpr (std::is_signed_v<B>) {
      if (base == -1) return exponent % 2 == 0 ? 1 : -1;
    }
    return 0;
  }
  uint64_t result = 1;
  uint64_t factor = static_cast<uint64_t>(base);
  for (uint64_t n = static_cast<uint64_t>(exponent); n != 0; n >>= 1) {
    if (n & 1) result *= factor;
    factor *= factor;
  }
  return static_cast<B>(result);
}

std::vector<Tensor> pow_kernel(const KernelContext& ctx) {
  const Tensor& base = ctx.input(0);
  const Tensor& exponent = ctx.input(1);
  Tensor out = ctx.make_output(0);
  visit_numeric(base.dtype(), [&]<typename B>() {
    visit_numeric(exponent.dtype(), [&]<typename E>() {
      broadcast_binary<B, B, E>(base, exponent, out, [](B x, E n) {
        if constexpr (std::is_integral_v<B> && std::is_integral_v<E>) {
          return integer_power(x, n);
        } else {
          return saturate_cast<B>(std::pow(to_double(x), to_double(n)));
        }
      });
    });
  });
  return single_output(std::move(out));
}

// --- comparisons, logic, bit shifts ---------------------------------------------------------

template <typename Test>
Kernel comparison_kernel(Test test) {
  return [test](const KernelContext& ctx) {
    Tensor out = ctx.make_output(0);
    visit_dtype(ctx.input(0).dtype(), [&]<typename T>() {
      using C = compute_t<T>;
      broadcast_binary<bool, T, T>(ctx.input(0), ctx.input(1), out,
                                   [&](T x, T y) { return test(C(x), C(y)); });
    });
    return std::vector<Tensor>{std::move(out)};
  };
}

struct LogicOp {
  const char* name;
  bool (*formula)(bool, bool);
};

const LogicOp kLogicOps[] = {
    {"And", [](bool x, bool y) { return x && y; }},
    {"Or", [](bool x, bool y) { return x || y; }},
    {"Xor", [](bool x, bool y) { return x != y; }},
};

// BitShift: x << y or x >> y for unsigned integers; shifting by the width or more gives 0.
std::vector<Tensor> bitshift_kernel(const KernelContext& ctx) {
  std::string direction = ctx.get_string("direction", "");
  if (direction != "LEFT" && direction != "RIGHT") {
    ctx.fail("direction is '{}'; BitShift takes 'LEFT' or 'RIGHT'", direction);
  }
  bool left = direction == "LEFT";
  Tensor out = ctx.make_output(0);
  visit_numeric(out.dtype(), [&]<typename T>() {
    if constexpr (std::is_unsigned_v<T>) {
      broadcast_binary<T, T, T>(ctx.input(0), ctx.input(1), out, [&](T x, T y) {
        if (y >= sizeof(T) * 8) return T(0);
        return left ? T(x << y) : T(x >> y);
      });
    }
  });
  return single_output(std::move(out));
}

// --- compute rules ----------------------------------------------------------------------------

using loop::Expr;
using BinaryFormula = std::function<Expr(Expr, Expr)>;

// out = formula(a, b), both read in input 0's element type.
ComputeRule binary_compute(BinaryFormula formula) {
  return [formula](const ComputeContext& ctx) {
    DType dtype = ctx.input(0).dtype();
    return std::vector<ComputeTensor>{elementwise(
        ctx, dtype, [&](const std::vector<Expr>& x) { return formula(x[0], x[1]); })};
  };
}

Expr is_zero(const Expr& x) { return loop::EQ::make(x, constant(x.type().dtype, 0)); }

// Div: an integer divided by zero gives 0 (the select evaluates only the side it picks).
Expr divide_expr(Expr x, Expr y) {
  if (is_float(x.type().dtype)) return loop::Div::make(x, y);
  return select(is_zero(y), constant(x.type().dtype, 0), loop::Div::make(x, y));
}

// Mod with fmod=1: C's % and fmod (the IR's Mod), 0 for an integer divisor of 0.
Expr truncated_mod_expr(Expr x, Expr y) {
  if (is_float(x.type().dtype)) return loop::Mod::make(x, y);
  return select(is_zero(y), constant(x.type().dtype, 0), loop::Mod::make(x, y));
}

// Mod with fmod=0: the remainder moved to the divisor's sign.
Expr floored_mod_expr(Expr x, Expr y) {
  Expr remainder = truncated_mod_expr(x, y);
  Expr zero = constant(x.type().dtype, 0);
  Expr signs_differ = loop::NE::make(loop::LT::make(remainder, zero), loop::LT::make(y, zero));
  Expr moved = loop::And::make(loop::NE::make(remainder, zero), signs_differ);
  return select(moved, remainder + y, remainder);
}

std::vector<ComputeTensor> mod_compute(const ComputeContext& ctx) {
  bool fmod = ctx.get_int("fmod", 0) != 0;
  return {elementwise(ctx, ctx.input(0).dtype(), [&](const std::vector<Expr>& x) {
    return fmod ? truncated_mod_expr(x[0], x[1]) : floored_mod_expr(x[0], x[1]);
  })};
}

// Pow through the pow intrinsic: in the base's float type (f32 for f16 and bf16), or in
// f64 for integer bases, converted back as the kernel's saturate_cast does. Integer powers
// are exact this way while they fit a double's 53 bits.
std::vector<ComputeTensor> pow_compute(const ComputeContext& ctx) {
  DType base = ctx.input(0).dtype();
  DType through = is_float(base) ? accumulation_dtype(base) : DType::f64;
  const TensorType& type = ctx.output_type(0);
  const ComputeTensor& x = ctx.input(0);
  const ComputeTensor& n = ctx.input(1);
  return {ctx.compute("pow", type, [&](const Indices& i) {
    Expr value = call("pow", {cast(through, x(broadcast_indices(i, x.shape(), type.shape))),
                              cast(through, n(broadcast_indices(i, n.shape(), type.shape)))});
    return cast(type.dtype, value);
  })};
}

// BitShift: shift_left(x, y) or shift_right(x, y) in the unsigned element type.
std::vector<ComputeTensor> bitshift_compute(const ComputeContext& ctx) {
  std::string direction = ctx.get_string("direction", "");
  if (direction != "LEFT" && direction != "RIGHT") {
    ctx.fail("direction is '{}'; BitShift takes 'LEFT' or 'RIGHT'", direction);
  }
  std::string intrinsic = direction == "LEFT" ? "shift_left" : "shift_right";
  return {elementwise(ctx, ctx.input(0).dtype(), [&](const std::vector<Expr>& x) {
    return call(intrinsic, {x[0], x[1]});
  })};
}

void add_binary(OpRegistry& registry, const char* name, int since, Operands operands,
                Kernel kernel, ComputeRule compute = {}) {
  registry.add({.name = name,
                .min_opset = since,
                .min_inputs = 2,
                .max_inputs = 2,
                .fusion = FusionKind::broadcast,
                .shape_rule = binary_shape(operands),
                .kernel = std::move(kernel),
                .compute = std::move(compute)});
}

}  // namespace

void register_binary_ops(OpRegistry& registry) {
  auto plus = [](auto x, auto y) { return x + y; };
  auto minus = [](auto x, auto y) { return x - y; };
  auto times = [](auto x, auto y) { return x * y; };
  add_binary(registry, "Add", 7, Operands::numbers, arithmetic_kernel(Integers::wrapping, plus),
             binary_compute([](Expr x, Expr y) { return x + y; }));
  add_binary(registry, "Sub", 7, Operands::numbers, arithmetic_kernel(Integers::wrapping, minus),
             binary_compute([](Expr x, Expr y) { return x - y; }));
  add_binary(registry, "Mul", 7, Operands::numbers, arithmetic_kernel(Integers::wrapping, times),
             binary_compute([](Expr x, Expr y) { return x * y; }));
  add_binary(registry, "Div", 7, Operands::numbers, arithmetic_kernel(Integers::exact, divide),
             binary_compute(divide_expr));
  add_binary(registry, "Mod", 10, Operands::numbers, mod_kernel, mod_compute);
  add_binary(registry, "Pow", 7, Operands::pow, pow_kernel, pow_compute);

  add_binary(registry, "Equal", 7, Operands::compare_any,
             comparison_kernel([](auto x, auto y) { return x == y; }),
             binary_compute([](Expr x, Expr y) { return loop::EQ::make(x, y); }));
  add_binary(registry, "Less", 7, Operands::compare_numbers,
             comparison_kernel([](auto x, auto y) { return x < y; }),
             binary_compute([](Expr x, Expr y) { return loop::LT::make(x, y); }));
  add_binary(registry, "LessOrEqual", 12, Operands::compare_numbers,
             comparison_kernel([](auto x, auto y) { return x <= y; }),
             binary_compute([](Expr x, Expr y) { return loop::LE::make(x, y); }));
  add_binary(registry, "Greater", 7, Operands::compare_numbers,
             comparison_kernel([](auto x, auto y) { return x > y; }),
             binary_compute([](Expr x, Expr y) { return loop::GT::make(x, y); }));
  add_binary(registry, "GreaterOrEqual", 12, Operands::compare_numbers,
             comparison_kernel([](auto x, auto y) { return x >= y; }),
             binary_compute([](Expr x, Expr y) { return loop::GE::make(x, y); }));

  const std::map<std::string, BinaryFormula> logic_exprs = {
      {"And", [](Expr x, Expr y) { return loop::And::make(x, y); }},
      {"Or", [](Expr x, Expr y) { return loop::Or::make(x, y); }},
      {"Xor", [](Expr x, Expr y) { return loop::NE::make(x, y); }},
  };
  for (const LogicOp& op : kLogicOps) {
    auto formula = op.formula;
    add_binary(registry, op.name, 7, Operands::bools, [formula](const KernelContext& ctx) {
      Tensor out = ctx.make_output(0);
      broadcast_binary<bool, bool, bool>(ctx.input(0), ctx.input(1), out, formula);
      return std::vector<Tensor>{std::move(out)};
    }, binary_compute(logic_exprs.at(op.name)));
  }
  add_binary(registry, "BitShift", 11, Operands::unsigned_ints, bitshift_kernel,
             bitshift_compute);
}

}  // namespace minic
