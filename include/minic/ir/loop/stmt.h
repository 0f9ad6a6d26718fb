// Loop IR statements, buffers and functions: the loop nests of a kernel.
//
// Course module 3. A PrimFunc is one kernel: its parameters are Buffers (the tensors it
// reads and writes), its body a tree of statements. The statement kinds are one X-macro,
// MINIC_STMT_NODES, like the expressions (expr.h):
//
//   For          a loop with a kind: serial, parallel, vectorized, unrolled, or bound to a
//                GPU thread axis ("blockIdx.x", "threadIdx.x", ...)
//   Block        a named computation, the unit schedules work on: its iteration
//                variables (spatial or reduction, each bound to an expression of the
//                surrounding loops), the buffer regions it reads and writes, an optional
//                init statement for reductions, and its body
//   Store        buffer[indices] = value
//   Allocate     a buffer of a memory scope (global, shared, local) live in its body
//   Seq          statements one after another
//   IfThenElse   a condition and one or two branches
//   Evaluate     an expression for its effect (a GPU barrier: Call "barrier")
//
// The matmul of the course, before any schedule:
//
//   func @matmul(A: f32[128,64], B: f32[64,256], C: f32[128,256]) {
//     for i in 0..128 {
//       for j in 0..256 {
//         for k in 0..64 {
//           block C(vi = spatial(128) i, vj = spatial(256) j, vk = reduce(64) k) {
//             init { C[vi, vj] = 0.0 }
//             C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
//           }
//         }
//       }
//     }
//   }
//
// Chapter: docs/module3-loop-ir.md#1-expressions-and-statements
#pragma once

#include "minic/ir/loop/expr.h"

#include <map>
#include <optional>

namespace minic::loop {

enum class MemoryScope : uint8_t { global, shared, local };
const char* memory_scope_name(MemoryScope scope);

// A tensor in memory: element type, static shape, strides in elements (row-major unless
// a schedule pads them), and where it lives. Identity is the node.
struct BufferNode {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  MemoryScope scope = MemoryScope::global;

  // A buffer with row-major strides.
  static Buffer make(std::string name, DType dtype, std::vector<int64_t> shape,
                     MemoryScope scope = MemoryScope::global);
  // With explicit strides (one per dimension).
  static Buffer make_strided(std::string name, DType dtype, std::vector<int64_t> shape,
                             std::vector<int64_t> strides,
                             MemoryScope scope = MemoryScope::global);
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
};

// Every statement node kind, in one list.
#define MINIC_STMT_NODES(X) \
  X(For)                    \
  X(Block)                  \
  X(Store)                  \
  X(Allocate)               \
  X(Seq)                    \
  X(IfThenElse)             \
  X(Evaluate)

enum class StmtKind : uint8_t {
#define MINIC_ENUM_ENTRY(Node) Node,
  MINIC_STMT_NODES(MINIC_ENUM_ENTRY)
#undef MINIC_ENUM_ENTRY
};

const char* stmt_kind_name(StmtKind kind);

struct StmtNode {
  const StmtKind kind;
  virtual ~StmtNode() = default;

 protected:
  explicit StmtNode(StmtKind kind) : kind(kind) {}
};

// A shared handle to an immutable statement node (null for "no statement").
class Stmt {
 public:
  Stmt() = default;
  explicit Stmt(std::shared_ptr<const StmtNode> node) : node_(std::move(node)) {}

  const StmtNode* get() const { return node_.get(); }
  explicit operator bool() const { return node_ != nullptr; }
  StmtKind kind() const { return node_->kind; }
  template <typename T>
  const T* as() const {
    return node_ && node_->kind == T::kKind ? static_cast<const T*>(node_.get()) : nullptr;
  }
  bool same_as(const Stmt& other) const { return node_ == other.node_; }

 private:
  std::shared_ptr<const StmtNode> node_;
};

enum class ForKind : uint8_t { serial, parallel, vectorized, unrolled, thread_binding };
const char* for_kind_name(ForKind kind);

// for var in min..min+extent { body }. A thread_binding loop names its GPU axis in
// `thread_axis` ("blockIdx.x", "threadIdx.y", ...). Annotations carry schedule hints by
// name (e.g. "pragma_unroll_max_step").
struct For : StmtNode {
  static constexpr StmtKind kKind = StmtKind::For;
  Expr var;
  Expr min;
  Expr extent;
  ForKind for_kind;
  std::string thread_axis;
  Stmt body;
  std::map<std::string, int64_t> annotations;

  static Stmt make(Expr var, Expr min, Expr extent, ForKind kind, Stmt body,
                   std::string thread_axis = "", std::map<std::string, int64_t> annotations = {});
  For(Expr var, Expr min, Expr extent, ForKind kind, std::string thread_axis, Stmt body,
      std::map<std::string, int64_t> annotations)
      : StmtNode(kKind), var(std::move(var)), min(std::move(min)), extent(std::move(extent)),
        for_kind(kind), thread_axis(std::move(thread_axis)), body(std::move(body)),
        annotations(std::move(annotations)) {}
};

enum class IterKind : uint8_t { spatial, reduce };
const char* iter_kind_name(IterKind kind);

// One iteration variable of a block: it ranges over [0, extent), is spatial (each value
// writes different outputs) or a reduction, and is bound to an expression of the loop
// variables around the block.
struct IterVar {
  Expr var;
  int64_t extent = 0;
  IterKind kind = IterKind::spatial;
  Expr binding;
};

// A half-open range [min, min + extent) of one buffer dimension.
struct Range {
  Expr min;
  Expr extent;
};

// The part of a buffer a block touches, one Range per dimension.
struct BufferRegion {
  Buffer buffer;
  std::vector<Range> region;
};

// A named computation: what schedule primitives find by name and move around. Its body
// refers to its iteration variables only (never to the loops outside), so the block
// stays the same wherever a schedule moves its loops. `init` (for reductions) runs when
// every reduction variable is 0; `predicate` (if set) guards the block after a split with
// a guard.
struct Block : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Block;
  std::string name;
  std::vector<IterVar> iter_vars;
  std::vector<BufferRegion> reads;
  std::vector<BufferRegion> writes;
  std::vector<Buffer> alloc_buffers;
  Expr predicate;
  Stmt init;
  Stmt body;
  std::map<std::string, int64_t> annotations;

  // The fields, for construction with designated initializers; all but name and body
  // may be left out.
  struct Parts {
    std::string name = {};
    std::vector<IterVar> iter_vars = {};
    std::vector<BufferRegion> reads = {};
    std::vector<BufferRegion> writes = {};
    std::vector<Buffer> alloc_buffers = {};
    Expr predicate = {};
    Stmt init = {};
    Stmt body = {};
    std::map<std::string, int64_t> annotations = {};
  };
  static Stmt make(Parts parts);
  explicit Block(Parts parts)
      : StmtNode(kKind), name(std::move(parts.name)), iter_vars(std::move(parts.iter_vars)),
        reads(std::move(parts.reads)), writes(std::move(parts.writes)),
        alloc_buffers(std::move(parts.alloc_buffers)), predicate(std::move(parts.predicate)),
        init(std::move(parts.init)), body(std::move(parts.body)),
        annotations(std::move(parts.annotations)) {}
  // The parts, for building a changed copy.
  Parts parts() const {
    return {name, iter_vars, reads, writes, alloc_buffers, predicate, init, body, annotations};
  }
};

struct Store : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Store;
  Buffer buffer;
  std::vector<Expr> indices;
  Expr value;
  static Stmt make(Buffer buffer, std::vector<Expr> indices, Expr value);
  Store(Buffer buffer, std::vector<Expr> indices, Expr value)
      : StmtNode(kKind), buffer(std::move(buffer)), indices(std::move(indices)),
        value(std::move(value)) {}
};

struct Allocate : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Allocate;
  Buffer buffer;
  Stmt body;
  static Stmt make(Buffer buffer, Stmt body);
  Allocate(Buffer buffer, Stmt body)
      : StmtNode(kKind), buffer(std::move(buffer)), body(std::move(body)) {}
};

struct Seq : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Seq;
  std::vector<Stmt> stmts;
  // A Seq of two or more statements; one statement is returned as it is.
  static Stmt make(std::vector<Stmt> stmts);
  explicit Seq(std::vector<Stmt> stmts) : StmtNode(kKind), stmts(std::move(stmts)) {}
};

struct IfThenElse : StmtNode {
  static constexpr StmtKind kKind = StmtKind::IfThenElse;
  Expr condition;
  Stmt then_case;
  Stmt else_case;  // may be null
  static Stmt make(Expr condition, Stmt then_case, Stmt else_case = Stmt());
  IfThenElse(Expr condition, Stmt then_case, Stmt else_case)
      : StmtNode(kKind), condition(std::move(condition)), then_case(std::move(then_case)),
        else_case(std::move(else_case)) {}
};

struct Evaluate : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Evaluate;
  Expr value;
  static Stmt make(Expr value);
  explicit Evaluate(Expr value) : StmtNode(kKind), value(std::move(value)) {}
};

// One kernel: buffer parameters and a body.
struct PrimFunc {
  std::string name;
  std::vector<Buffer> params;
  Stmt body;
};

// Several kernels: what lowering a model gives, and what `.mloop` files hold.
struct LoopModule {
  std::vector<PrimFunc> functions;
};

}  // namespace minic::loop
