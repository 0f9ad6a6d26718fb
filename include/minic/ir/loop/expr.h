// Loop IR expressions: the values a kernel computes, element by element.
//
// Course module 3. A kernel in minic's loop IR is a nest of loops over buffers (see
// stmt.h). Its expressions are plain immutable trees: immediates, variables, arithmetic,
// comparisons, selects, casts, buffer loads, calls to math intrinsics, and the vector forms
// Ramp and Broadcast that vectorised code uses. The list of node kinds is one X-macro,
// MINIC_EXPR_NODES, which drives the visitor, the mutator and the printer, so a new node
// kind is added in one place.
//
// Every node is created by its static `make`, which checks the node's invariants (the
// operands of an Add have the same type, a Load has one index per buffer dimension, ...)
// and returns an `Expr`, a shared handle to the immutable node. Handles compare by
// identity (`same_as`); a Var is one variable however many expressions use it.
//
//   Expr i = Var::make("i", DataType::int64());
//   Expr x = Load::make(A, {i}) * FloatImm::make(2.0, DataType::f32());
//
// Chapter: docs/module3-loop-ir.md#1-expressions-and-statements
#pragma once

#include "minic/tensor/dtype.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace minic::loop {

// The type of an expression: an element type and a vector width (lanes; 1 for scalars).
// Index arithmetic is i64; conditions are bool.
struct DataType {
  DType dtype = DType::i64;
  int lanes = 1;

  static DataType int64(int lanes = 1) { return {DType::i64, lanes}; }
  static DataType f32(int lanes = 1) { return {DType::f32, lanes}; }
  static DataType boolean(int lanes = 1) { return {DType::boolean, lanes}; }

  bool is_vector() const { return lanes > 1; }
  DataType element() const { return {dtype, 1}; }
  DataType with_lanes(int n) const { return {dtype, n}; }
  bool operator==(const DataType&) const = default;
};

// "i64", "f32", "f32x16", "boolx8".
std::string type_name(DataType type);

// Every expression node kind, in one list.
#define MINIC_EXPR_NODES(X) \
  X(IntImm)                 \
  X(FloatImm)               \
  X(Var)                    \
  X(Add)                    \
  X(Sub)                    \
  X(Mul)                    \
  X(Div)                    \
  X(Mod)                    \
  X(FloorDiv)               \
  X(FloorMod)               \
  X(Min)                    \
  X(Max)                    \
  X(EQ)                     \
  X(NE)                     \
  X(LT)                     \
  X(LE)                     \
  X(GT)                     \
  X(GE)                     \
  X(And)                    \
  X(Or)                     \
  X(Not)                    \
  X(Select)                 \
  X(Cast)                   \
  X(Load)                   \
  X(Call)                   \
  X(Ramp)                   \
  X(Broadcast)

enum class ExprKind : uint8_t {
#define MINIC_ENUM_ENTRY(Node) Node,
  MINIC_EXPR_NODES(MINIC_ENUM_ENTRY)
#undef MINIC_ENUM_ENTRY
};

// "Add", "Load", ...
const char* expr_kind_name(ExprKind kind);

struct ExprNode {
  const ExprKind kind;
  const DataType type;

  virtual ~ExprNode() = default;

 protected:
  ExprNode(ExprKind kind, DataType type) : kind(kind), type(type) {}
};

// A shared handle to an immutable expression node (null for "no expression").
class Expr {
 public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}

  const ExprNode* get() const { return node_.get(); }
  explicit operator bool() const { return node_ != nullptr; }
  ExprKind kind() const { return node_->kind; }
  DataType type() const { return node_->type; }
  // The node as `T` if it is one (T::kKind matches), else null.
  template <typename T>
  const T* as() const {
    return node_ && node_->kind == T::kKind ? static_cast<const T*>(node_.get()) : nullptr;
  }
  // True if both handles hold the very same node.
  bool same_as(const Expr& other) const { return node_ == other.node_; }

 private:
  std::shared_ptr<const ExprNode> node_;
};

struct BufferNode;
using Buffer = std::shared_ptr<const BufferNode>;

// --- leaves -------------------------------------------------------------------------------

struct IntImm : ExprNode {
  static constexpr ExprKind kKind = ExprKind::IntImm;
  int64_t value;
  // An integer or boolean constant (type: i64 by default).
  static Expr make(int64_t value, DataType type = DataType::int64());
  IntImm(int64_t value, DataType type) : ExprNode(kKind, type), value(value) {}
};

struct FloatImm : ExprNode {
  static constexpr ExprKind kKind = ExprKind::FloatImm;
  double value;
  static Expr make(double value, DataType type = DataType::f32());
  FloatImm(double value, DataType type) : ExprNode(kKind, type), value(value) {}
};

// A variable: a loop counter, a block's iteration variable. Identity is the node; the name
// is for printing (the printer makes clashing names unique).
struct Var : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Var;
  std::string name;
  static Expr make(std::string name, DataType type = DataType::int64());
  Var(std::string name, DataType type) : ExprNode(kKind, type), name(std::move(name)) {}
};

// --- binary operators -----------------------------------------------------------------------

// a OP b, with a and b of the same type. Arithmetic nodes have that type; comparisons
// (EQ ... GE) have bool of the same lanes; And and Or take and give bool. Div truncates
// toward zero and Mod takes the sign of a for integers (as C does); FloorDiv and FloorMod
// round toward negative infinity (for index arithmetic: FloorMod(-1, 4) = 3).
template <ExprKind K>
struct BinaryNode : ExprNode {
  static constexpr ExprKind kKind = K;
  Expr a;
  Expr b;
  static Expr make(Expr a, Expr b);
  BinaryNode(DataType type, Expr a, Expr b)
      : ExprNode(kKind, type), a(std::move(a)), b(std::move(b)) {}
};

using Add = BinaryNode<ExprKind::Add>;
using Sub = BinaryNode<ExprKind::Sub>;
using Mul = BinaryNode<ExprKind::Mul>;
using Div = BinaryNode<ExprKind::Div>;
using Mod = BinaryNode<ExprKind::Mod>;
using FloorDiv = BinaryNode<ExprKind::FloorDiv>;
using FloorMod = BinaryNode<ExprKind::FloorMod>;
using Min = BinaryNode<ExprKind::Min>;
using Max = BinaryNode<ExprKind::Max>;
using EQ = BinaryNode<ExprKind::EQ>;
using NE = BinaryNode<ExprKind::NE>;
using LT = BinaryNode<ExprKind::LT>;
using LE = BinaryNode<ExprKind::LE>;
using GT = BinaryNode<ExprKind::GT>;
using GE = BinaryNode<ExprKind::GE>;
using And = BinaryNode<ExprKind::And>;
using Or = BinaryNode<ExprKind::Or>;

// True for the kinds made by BinaryNode.
bool is_binary(ExprKind kind);

// --- the rest -------------------------------------------------------------------------------

struct Not : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Not;
  Expr a;
  static Expr make(Expr a);
  Not(DataType type, Expr a) : ExprNode(kKind, type), a(std::move(a)) {}
};

// condition ? true_value : false_value, lane by lane.
struct Select : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Select;
  Expr condition;
  Expr true_value;
  Expr false_value;
  static Expr make(Expr condition, Expr true_value, Expr false_value);
  Select(DataType type, Expr condition, Expr true_value, Expr false_value)
      : ExprNode(kKind, type),
        condition(std::move(condition)),
        true_value(std::move(true_value)),
        false_value(std::move(false_value)) {}
};

// `value` converted to `type` (same lanes), as Tensor::cast converts elements.
struct Cast : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Cast;
  Expr value;
  static Expr make(DataType type, Expr value);
  Cast(DataType type, Expr value) : ExprNode(kKind, type), value(std::move(value)) {}
};

// buffer[indices...]: one i64 index per buffer dimension (after buffer flattening, one
// index into the flat buffer). Vector indices (a Ramp for the innermost dimension) load
// that many lanes; every vector index has the same lanes.
struct Load : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Load;
  Buffer buffer;
  std::vector<Expr> indices;
  static Expr make(Buffer buffer, std::vector<Expr> indices);
  Load(DataType type, Buffer buffer, std::vector<Expr> indices)
      : ExprNode(kKind, type), buffer(std::move(buffer)), indices(std::move(indices)) {}
};

// A call to an intrinsic, lane by lane. Math on floats: exp, log, sqrt, tanh, erf, sigmoid,
// fabs, floor, ceil, round, pow (two arguments), sin, cos, tan, asin, acos, atan, sinh, cosh,
// asinh, acosh, atanh. Shifts of unsigned integers (two arguments): shift_left, shift_right,
// giving 0 for a shift by the bit width or more. The byte dot product of int8 GEMMs:
// dot4_u8i8(a, b) on int32 words holding four bytes each (the first in the lowest bits) is
// sum over t < 4 of a's byte t read unsigned times b's byte t read signed -- one lane of
// AVX-512 VNNI's vpdpbusd, and of PTX's dp4a.u32.s32. The list is kIntrinsics in expr.cpp.
struct Call : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Call;
  std::string name;
  std::vector<Expr> args;
  static Expr make(DataType type, std::string name, std::vector<Expr> args);
  Call(DataType type, std::string name, std::vector<Expr> args)
      : ExprNode(kKind, type), name(std::move(name)), args(std::move(args)) {}
};

// The vector [base, base + stride, ..., base + (lanes-1) * stride] of i64: the indices a
// vectorised loop touches.
struct Ramp : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Ramp;
  Expr base;
  Expr stride;
  int lanes;
  static Expr make(Expr base, Expr stride, int lanes);
  Ramp(DataType type, Expr base, Expr stride, int lanes)
      : ExprNode(kKind, type), base(std::move(base)), stride(std::move(stride)), lanes(lanes) {}
};

// The scalar `value` repeated in `lanes` lanes.
struct Broadcast : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Broadcast;
  Expr value;
  int lanes;
  static Expr make(Expr value, int lanes);
  Broadcast(DataType type, Expr value, int lanes)
      : ExprNode(kKind, type), value(std::move(value)), lanes(lanes) {}
};

// --- building expressions -------------------------------------------------------------------

// Operators for readable construction in compute rules and tests: an int64_t or double
// operand becomes an immediate of the other operand's type.
Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator+(Expr a, int64_t b);
Expr operator*(Expr a, int64_t b);
Expr operator-(Expr a, int64_t b);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
// An immediate of `type` holding `value` (IntImm for integers and bool, FloatImm else).
Expr make_const(DataType type, double value);

}  // namespace minic::loop
