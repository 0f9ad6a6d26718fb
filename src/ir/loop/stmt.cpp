// Loop IR statement nodes and buffers: construction and the invariants each `make`
// checks. Course module 3.
//
// Chapter: docs/module3-loop-ir.md#1-expressions-and-statements
#include "minic/ir/loop/stmt.h"

#include "minic/tensor/tensor.h"
#include "minic/support/error.h"

namespace minic::loop {

namespace {

template <typename... Args>
void require(bool condition, fmt::format_string<Args...> format, Args&&... args) {
  if (!condition) {
    internal_fail("invalid loop IR: {}",
                  fmt::format(format, std::forward<Args>(args)...));
  }
}

bool is_index(const Expr& expr) { return expr && expr.type() == DataType::int64(); }

}  // namespace

const char* memory_scope_name(MemoryScope scope) {
  switch (scope) {
    case MemoryScope::global: return "global";
    case MemoryScope::shared: return "shared";
    case MemoryScope::local: return "local";
  }
  return "global";
}

const char* stmt_kind_name(StmtKind kind) {
  static constexpr const char* kNames[] = {
#define MINIC_NAME_ENTRY(Node) #Node,
      MINIC_STMT_NODES(MINIC_NAME_ENTRY)
#undef MINIC_NAME_ENTRY
  };
  return kNames[static_cast<size_t>(kind)];
}

const char* for_kind_name(ForKind kind) {
  switch (kind) {
    case ForKind::serial: return "serial";
    case ForKind::parallel: return "parallel";
    case ForKind::vectorized: return "vectorized";
    case ForKind::unrolled: return "unrolled";
    case ForKind::thread_binding: return "thread_binding";
  }
  return "serial";
}

const char* iter_kind_name(IterKind kind) {
  return kind == IterKind::spatial ? "spatial" : "reduce";
}

Buffer BufferNode::make(std::string name, DType dtype, std::vector<int64_t> shape,
                        MemoryScope scope) {
  std::vector<int64_t> strides = row_major_strides(shape);
  return make_strided(std::move(name), dtype, std::move(shape), std::move(strides), scope);
}

Buffer BufferNode::make_strided(std::string name, DType dtype, std::vector<int64_t> shape,
                                std::vector<int64_t> strides, MemoryScope scope) {
  require(!name.empty(), "a buffer needs a name");
  require(strides.size() == shape.size(), "buffer {} has {} dimensions and {} strides", name,
          shape.size(), strides.size());
  for (int64_t dim : shape) require(dim >= 0, "buffer {} has a negative dimension", name);
  auto buffer = std::make_shared<BufferNode>();
  buffer->name = std::move(name);
  buffer->dtype = dtype;
  buffer->shape = std::move(shape);
  buffer->strides = std::move(strides);
  buffer->scope = scope;
  return buffer;
}

Stmt For::make(Expr var, Expr min, Expr extent, ForKind kind, Stmt body,
               std::string thread_axis, std::map<std::string, int64_t> annotations) {
  require(var.as<Var>() && var.type() == DataType::int64(), "a loop variable must be an i64 Var");
  require(is_index(min) && is_index(extent), "loop bounds must be i64 scalars");
  require(static_cast<bool>(body), "a loop needs a body");
  require((kind == ForKind::thread_binding) == !thread_axis.empty(),
          "a thread_binding loop, and only it, names a thread axis");
  return Stmt(std::make_shared<For>(std::move(var), std::move(min), std::move(extent), kind,
                                    std::move(thread_axis), std::move(body),
                                    std::move(annotations)));
}

Stmt Block::make(Parts parts) {
  require(!parts.name.empty(), "a block needs a name");
  require(static_cast<bool>(parts.body), "block {} needs a body", parts.name);
  for (const IterVar& iter : parts.iter_vars) {
    require(iter.var.as<Var>() && iter.var.type() == DataType::int64(),
            "block {}: an iteration variable must be an i64 Var", parts.name);
    require(is_index(iter.binding), "block {}: iteration variable {} needs an i64 binding",
            parts.name, iter.var.as<Var>()->name);
    require(iter.extent >= 0, "block {}: negative extent", parts.name);
  }
  for (const auto* regions : {&parts.reads, &parts.writes}) {
    for (const BufferRegion& region : *regions) {
      require(region.buffer && static_cast<int64_t>(region.region.size()) == region.buffer->rank(),
              "block {}: a buffer region needs one range per dimension", parts.name);
    }
  }
  if (parts.predicate) {
    require(parts.predicate.type() == DataType::boolean(), "block {}: predicate must be bool",
            parts.name);
  }
  return Stmt(std::make_shared<Block>(std::move(parts)));
}

Stmt Store::make(Buffer buffer, std::vector<Expr> indices, Expr value) {
  require(buffer != nullptr, "Store to no buffer");
  require(static_cast<int64_t>(indices.size()) == buffer->rank(),
          "Store to {} (rank {}) with {} indices", buffer->name, buffer->rank(), indices.size());
  require(static_cast<bool>(value), "Store of no value");
  int lanes = 1;
  for (const Expr& index : indices) {
    require(index && index.type().dtype == DType::i64, "Store index must be i64");
    if (index.type().lanes > 1) lanes = index.type().lanes;
  }
  require(value.type() == DataType{buffer->dtype, lanes}, "Store of {} into {} of {} ({} lanes)",
          type_name(value.type()), buffer->name, dtype_name(buffer->dtype), lanes);
  return Stmt(std::make_shared<Store>(std::move(buffer), std::move(indices), std::move(value)));
}

Stmt Allocate::make(Buffer buffer, Stmt body) {
  require(buffer != nullptr && static_cast<bool>(body), "Allocate needs a buffer and a body");
  return Stmt(std::make_shared<Allocate>(std::move(buffer), std::move(body)));
}

Stmt Seq::make(std::vector<Stmt> stmts) {
  for (const Stmt& stmt : stmts) require(static_cast<bool>(stmt), "a Seq holds a null statement");
  require(!stmts.empty(), "an empty Seq");
  if (stmts.size() == 1) return stmts[0];
  return Stmt(std::make_shared<Seq>(std::move(stmts)));
}

Stmt IfThenElse::make(Expr condition, Stmt then_case, Stmt else_case) {
  require(condition && condition.type() == DataType::boolean(), "if needs a bool condition");
  require(static_cast<bool>(then_case), "if needs a then-branch");
  return Stmt(std::make_shared<IfThenElse>(std::move(condition), std::move(then_case),
                                           std::move(else_case)));
}

Stmt Evaluate::make(Expr value) {
  require(static_cast<bool>(value), "Evaluate of no expression");
  return Stmt(std::make_shared<Evaluate>(std::move(value)));
}

}  // namespace minic::loop
