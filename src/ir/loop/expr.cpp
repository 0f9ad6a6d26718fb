// Loop IR expression nodes: construction and the invariants each `make` checks.
// Course module 3.
//
// Chapter: docs/module3-loop-ir.md#1-expressions-and-statements
#include "minic/ir/loop/expr.h"

#include "minic/ir/loop/stmt.h"
#include "minic/support/error.h"

#include <algorithm>
#include <array>

namespace minic::loop {

std::string type_name(DataType type) {
  std::string name(dtype_name(type.dtype));
  if (type.lanes > 1) name += fmt::format("x{}", type.lanes);
  return name;
}

const char* expr_kind_name(ExprKind kind) {
  static constexpr const char* kNames[] = {
#define MINIC_NAME_ENTRY(Node) #Node,
      MINIC_EXPR_NODES(MINIC_NAME_ENTRY)
#undef MINIC_NAME_ENTRY
  };
  return kNames[static_cast<size_t>(kind)];
}

namespace {

// Node invariants are minic's own: a violation is a bug in the code building the IR (a
// lowering rule, a schedule primitive), reported as an internal error with the reason.
template <typename... Args>
void require(bool condition, fmt::format_string<Args...> format, Args&&... args) {
  if (!condition) {
    internal_fail("invalid loop IR: {}",
                  fmt::format(format, std::forward<Args>(args)...));
  }
}

void require_defined(const Expr& expr, const char* what) {
  require(static_cast<bool>(expr), "{} is missing", what);
}

bool is_comparison(ExprKind kind) {
  return kind == ExprKind::EQ || kind == ExprKind::NE || kind == ExprKind::LT ||
         kind == ExprKind::LE || kind == ExprKind::GT || kind == ExprKind::GE;
}

}  // namespace

Expr IntImm::make(int64_t value, DataType type) {
  require(is_int(type.dtype) || type.dtype == DType::boolean, "IntImm of type {}",
          type_name(type));
  require(type.lanes == 1, "IntImm must be scalar (use Broadcast)");
  return Expr(std::make_shared<IntImm>(value, type));
}

Expr FloatImm::make(double value, DataType type) {
  require(is_float(type.dtype) && type.lanes == 1, "FloatImm of type {}", type_name(type));
  return Expr(std::make_shared<FloatImm>(value, type));
}

Expr Var::make(std::string name, DataType type) {
  require(!name.empty(), "a Var needs a name");
  return Expr(std::make_shared<Var>(std::move(name), type));
}

bool is_binary(ExprKind kind) {
  switch (kind) {
    case ExprKind::Add: case ExprKind::Sub: case ExprKind::Mul: case ExprKind::Div:
    case ExprKind::Mod: case ExprKind::FloorDiv: case ExprKind::FloorMod: case ExprKind::Min:
    case ExprKind::Max: case ExprKind::EQ: case ExprKind::NE: case ExprKind::LT:
    case ExprKind::LE: case ExprKind::GT: case ExprKind::GE: case ExprKind::And:
    case ExprKind::Or:
      return true;
    default:
      return false;
  }
}

template <ExprKind K>
Expr BinaryNode<K>::make(Expr a, Expr b) {
  require_defined(a, "the left operand");
  require_defined(b, "the right operand");
  require(a.type() == b.type(), "{} of {} and {}", expr_kind_name(K), type_name(a.type()),
          type_name(b.type()));
  DataType type = a.type();
  if constexpr (K == ExprKind::And || K == ExprKind::Or) {
    require(type.dtype == DType::boolean, "{} of {}", expr_kind_name(K), type_name(type));
  } else if constexpr (K == ExprKind::FloorDiv || K == ExprKind::FloorMod) {
    require(is_int(type.dtype), "{} of {}", expr_kind_name(K), type_name(type));
  }
  if (is_comparison(K)) type = DataType::boolean(type.lanes);
  return Expr(std::make_shared<BinaryNode<K>>(type, std::move(a), std::move(b)));
}

template struct BinaryNode<ExprKind::Add>;
template struct BinaryNode<ExprKind::Sub>;
template struct BinaryNode<ExprKind::Mul>;
template struct BinaryNode<ExprKind::Div>;
template struct BinaryNode<ExprKind::Mod>;
template struct BinaryNode<ExprKind::FloorDiv>;
template struct BinaryNode<ExprKind::FloorMod>;
template struct BinaryNode<ExprKind::Min>;
template struct BinaryNode<ExprKind::Max>;
template struct BinaryNode<ExprKind::EQ>;
template struct BinaryNode<ExprKind::NE>;
template struct BinaryNode<ExprKind::LT>;
template struct BinaryNode<ExprKind::LE>;
template struct BinaryNode<ExprKind::GT>;
template struct BinaryNode<ExprKind::GE>;
template struct BinaryNode<ExprKind::And>;
template struct BinaryNode<ExprKind::Or>;

Expr Not::make(Expr a) {
  require_defined(a, "the operand of Not");
  require(a.type().dtype == DType::boolean, "Not of {}", type_name(a.type()));
  DataType type = a.type();
  return Expr(std::make_shared<Not>(type, std::move(a)));
}

Expr Select::make(Expr condition, Expr true_value, Expr false_value) {
  require_defined(condition, "the condition of Select");
  require_defined(true_value, "the true value of Select");
  require_defined(false_value, "the false value of Select");
  require(condition.type().dtype == DType::boolean, "Select on {}", type_name(condition.type()));
  require(true_value.type() == false_value.type(), "Select of {} and {}",
          type_name(true_value.type()), type_name(false_value.type()));
  require(condition.type().lanes == 1 || condition.type().lanes == true_value.type().lanes,
          "Select with {} lanes of condition for {}", condition.type().lanes,
          type_name(true_value.type()));
  DataType type = true_value.type();
  return Expr(std::make_shared<Select>(type, std::move(condition), std::move(true_value),
                                       std::move(false_value)));
}

Expr Cast::make(DataType type, Expr value) {
  require_defined(value, "the value of Cast");
  require(type.lanes == value.type().lanes, "Cast from {} to {}", type_name(value.type()),
          type_name(type));
  return Expr(std::make_shared<Cast>(type, std::move(value)));
}

Expr Load::make(Buffer buffer, std::vector<Expr> indices) {
  require(buffer != nullptr, "Load from no buffer");
  require(static_cast<int64_t>(indices.size()) == buffer->rank(),
          "Load from {} (rank {}) with {} indices", buffer->name, buffer->rank(), indices.size());
  int lanes = 1;
  for (const Expr& index : indices) {
    require_defined(index, "a Load index");
    require(index.type().dtype == DType::i64, "Load index of type {}", type_name(index.type()));
    if (index.type().lanes > 1) {
      require(lanes == 1 || lanes == index.type().lanes, "Load indices with {} and {} lanes",
              lanes, index.type().lanes);
      lanes = index.type().lanes;
    }
  }
  DataType type{buffer->dtype, lanes};
  return Expr(std::make_shared<Load>(type, std::move(buffer), std::move(indices)));
}

namespace {

// The intrinsics a Call may name, with their argument counts: math on floats, the two
// shifts on unsigned integers, and the byte dot product on int32.
struct Intrinsic {
  const char* name;
  size_t arity;
};
constexpr std::array<Intrinsic, 25> kIntrinsics = {{
    {"exp", 1},   {"log", 1},   {"sqrt", 1},  {"tanh", 1},  {"erf", 1},   {"sigmoid", 1},
    {"fabs", 1},  {"floor", 1}, {"ceil", 1},  {"round", 1}, {"pow", 2},   {"sin", 1},
    {"cos", 1},   {"tan", 1},   {"asin", 1},  {"acos", 1},  {"atan", 1},  {"sinh", 1},
    {"cosh", 1},  {"asinh", 1}, {"acosh", 1}, {"atanh", 1}, {"shift_left", 2},
    {"shift_right", 2}, {"dot4_u8i8", 2},
}};

bool is_shift(const std::string& name) { return name == "shift_left" || name == "shift_right"; }

}  // namespace

Expr Call::make(DataType type, std::string name, std::vector<Expr> args) {
  if (name == "barrier") {
    require(args.empty(), "barrier takes no arguments");
    return Expr(std::make_shared<Call>(type, std::move(name), std::move(args)));
  }
  auto it = std::find_if(kIntrinsics.begin(), kIntrinsics.end(),
                         [&](const Intrinsic& intrinsic) { return name == intrinsic.name; });
  require(it != kIntrinsics.end(), "unknown intrinsic '{}'", name);
  require(args.size() == it->arity, "{} takes {} arguments, not {}", name, it->arity,
          args.size());
  for (const Expr& arg : args) {
    require_defined(arg, "an intrinsic argument");
    require(arg.type() == type, "{} of {} giving {}", name, type_name(arg.type()),
            type_name(type));
  }
  if (is_shift(name)) {
    require(is_unsigned_int(type.dtype), "{} of {}: shifts take unsigned integers", name,
            type_name(type));
  } else if (name == "dot4_u8i8") {
    require(type.dtype == DType::i32, "{} of {}: it takes int32 words of four bytes", name,
            type_name(type));
  } else {
    require(is_float(type.dtype), "{} of {}: math intrinsics take floats", name, type_name(type));
  }
  return Expr(std::make_shared<Call>(type, std::move(name), std::move(args)));
}

Expr Ramp::make(Expr base, Expr stride, int lanes) {
  require_defined(base, "the base of Ramp");
  require_defined(stride, "the stride of Ramp");
  require(base.type() == DataType::int64() && stride.type() == DataType::int64(),
          "Ramp of {} by {}", type_name(base.type()), type_name(stride.type()));
  require(lanes > 1, "Ramp with {} lanes", lanes);
  return Expr(std::make_shared<Ramp>(DataType::int64(lanes), std::move(base), std::move(stride),
                                     lanes));
}

Expr Broadcast::make(Expr value, int lanes) {
  require_defined(value, "the value of Broadcast");
  require(value.type().lanes == 1 && lanes > 1, "Broadcast of {} to {} lanes",
          type_name(value.type()), lanes);
  DataType type = value.type().with_lanes(lanes);
  return Expr(std::make_shared<Broadcast>(type, std::move(value), lanes));
}

// --- building -------------------------------------------------------------------------------

Expr make_const(DataType type, double value) {
  Expr scalar = is_float(type.dtype) ? FloatImm::make(value, type.element())
                                     : IntImm::make(static_cast<int64_t>(value), type.element());
  return type.lanes > 1 ? Broadcast::make(scalar, type.lanes) : scalar;
}

Expr operator+(Expr a, Expr b) { return Add::make(std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return Sub::make(std::move(a), std::move(b)); }
Expr operator*(Expr a, Expr b) { return Mul::make(std::move(a), std::move(b)); }
namespace {

// `value` as an immediate of `type`: exact for integers (no detour through double).
Expr immediate_like(DataType type, int64_t value) {
  if (is_float(type.dtype)) return make_const(type, static_cast<double>(value));
  Expr scalar = IntImm::make(value, type.element());
  return type.lanes > 1 ? Broadcast::make(scalar, type.lanes) : scalar;
}

}  // namespace

Expr operator+(Expr a, int64_t b) {
  Expr c = immediate_like(a.type(), b);
  return Add::make(std::move(a), std::move(c));
}
Expr operator-(Expr a, int64_t b) {
  Expr c = immediate_like(a.type(), b);
  return Sub::make(std::move(a), std::move(c));
}
Expr operator*(Expr a, int64_t b) {
  Expr c = immediate_like(a.type(), b);
  return Mul::make(std::move(a), std::move(c));
}
Expr min(Expr a, Expr b) { return Min::make(std::move(a), std::move(b)); }
Expr max(Expr a, Expr b) { return Max::make(std::move(a), std::move(b)); }

}  // namespace minic::loop
