// Loop nests of one block, moving a nest, statement insertion, allocations, names.
// Course module 4.
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#include "block_edit.h"

#include "loop_tree.h"

#include "minic/ir/loop/visitor.h"
#include "minic/support/error.h"

#include <algorithm>
#include <fmt/format.h>

namespace minic::schedule {
namespace {

using loop::Block;
using loop::Expr;
using loop::For;

class AllocationRemover : public loop::IRMutator {
 public:
  explicit AllocationRemover(const BufferNode* buffer) : buffer_(buffer) {}

  Stmt mutate_Allocate(const loop::Allocate* node, const Stmt& self) override {
    if (node->buffer.get() == buffer_) return mutate(node->body);
    return IRMutator::mutate_Allocate(node, self);
  }
  Stmt mutate_Block(const Block* node, const Stmt& self) override {
    Stmt result = IRMutator::mutate_Block(node, self);
    Block::Parts parts = result.as<Block>()->parts();
    auto allocated = [this](const Buffer& buffer) { return buffer.get() == buffer_; };
    auto end = std::remove_if(parts.alloc_buffers.begin(), parts.alloc_buffers.end(), allocated);
    if (end == parts.alloc_buffers.end()) return result;
    parts.alloc_buffers.erase(end, parts.alloc_buffers.end());
    return Block::make(std::move(parts));
  }

 private:
  const BufferNode* buffer_;
};

class NameCollector : public loop::IRVisitor {
 public:
  std::set<std::string> buffers;
  std::set<std::string> blocks;

  void visit_Allocate(const loop::Allocate* node) override {
    buffers.insert(node->buffer->name);
    IRVisitor::visit_Allocate(node);
  }
  void visit_Block(const Block* node) override {
    blocks.insert(node->name);
    for (const Buffer& buffer : node->alloc_buffers) buffers.insert(buffer->name);
    IRVisitor::visit_Block(node);
  }
};

class StoreFinder : public loop::IRVisitor {
 public:
  StoreList list;
  int depth = 0;

  void visit_Store(const loop::Store* node) override {
    list.stores.push_back(node);
    if (depth > 0) list.nested = true;
  }
  void visit_For(const For* node) override {
    ++depth;
    IRVisitor::visit_For(node);
    --depth;
  }
  void visit_IfThenElse(const loop::IfThenElse* node) override {
    ++depth;
    IRVisitor::visit_IfThenElse(node);
    --depth;
  }
};

std::string unique_name(const std::set<std::string>& taken, const std::string& base) {
  if (!taken.count(base)) return base;
  for (int suffix = 1;; ++suffix) {
    std::string name = fmt::format("{}_{}", base, suffix);
    if (!taken.count(name)) return name;
  }
}

std::vector<Stmt> seq_items(const Stmt& stmt) {
  if (const auto* seq = stmt.as<loop::Seq>()) return seq->stmts;
  return {stmt};
}

}  // namespace

std::vector<std::vector<Stmt>> all_block_paths(const Stmt& root) {
  std::vector<std::vector<Stmt>> paths;
  for (const Block* block : collect_blocks(root)) paths.push_back(path_to_block(root, block->name));
  return paths;
}

bool passes_through(const std::vector<Stmt>& path, const Stmt& stmt) {
  return std::any_of(path.begin(), path.end(),
                     [&stmt](const Stmt& item) { return item.same_as(stmt); });
}

std::optional<SeqSiblings> seq_siblings(const std::vector<Stmt>& a, const std::vector<Stmt>& b) {
  size_t common = 0;
  while (common < a.size() && common < b.size() && a[common].same_as(b[common])) ++common;
  if (common == 0 || common == a.size() || common == b.size()) return std::nullopt;
  const auto* seq = a[common - 1].as<loop::Seq>();
  if (!seq) return std::nullopt;
  SeqSiblings result;
  result.index = common - 1;
  for (size_t i = 0; i < seq->stmts.size(); ++i) {
    if (seq->stmts[i].same_as(a[common])) result.a_position = i;
    if (seq->stmts[i].same_as(b[common])) result.b_position = i;
  }
  return result;
}

bool is_param(const loop::PrimFunc& func, const BufferNode* buffer) {
  return std::any_of(func.params.begin(), func.params.end(),
                     [buffer](const Buffer& param) { return param.get() == buffer; });
}

NestMove locate_nest_move(const loop::PrimFunc& func, const std::string& block,
                          const loop::Expr& loop, const char* primitive) {
  NestMove move;
  move.path = block_path(func, block, primitive);
  move.loop_path = schedule::loop_path(func, loop, primitive);
  std::string loop_text = loop_name(loop);
  if (passes_through(move.path, move.loop_path.back())) {
    fail("{}: block {} is already under loop {}", primitive, block, loop_text);
  }
  move.root = nest_root_index(move.path);
  move.nest_path.assign(move.path.begin(), move.path.begin() + static_cast<long>(move.root) + 1);
  std::optional<SeqSiblings> siblings = seq_siblings(move.nest_path, move.loop_path);
  if (!siblings || siblings->index + 1 != move.root) {
    fail("{}: the loops of block {} and loop {} are not siblings in one sequence", primitive,
         block, loop_text);
  }
  move.siblings = *siblings;
  return move;
}

Stmt move_nest_into_loop(const loop::PrimFunc& func, const NestMove& move, const Stmt& nest,
                         bool at_start) {
  const For& loop = *move.loop_path.back().as<For>();
  Stmt loop_body = at_start ? prepend_stmt(loop.body, nest) : append_stmt(loop.body, nest);
  Stmt new_loop = For::make(loop.var, loop.min, loop.extent, loop.for_kind, loop_body,
                            loop.thread_axis, loop.annotations);
  Stmt body = replace_stmt(func.body, move.path[move.root], Stmt());
  return replace_stmt(body, move.loop_path.back(), new_loop);
}

size_t nest_root_index(const std::vector<Stmt>& path) {
  size_t index = path.size() - 1;
  while (index > 0) {
    const For* loop = path[index - 1].as<For>();
    if (!loop || !loop->body.same_as(path[index])) break;
    --index;
  }
  return index;
}

Stmt insert_beside(const Stmt& root, const std::vector<Stmt>& path, const Stmt& stmt,
                   bool after) {
  const Stmt& anchor = path.back();
  const loop::Seq* seq = path.size() >= 2 ? path[path.size() - 2].as<loop::Seq>() : nullptr;
  if (!seq) {
    Stmt pair = after ? loop::Seq::make({anchor, stmt}) : loop::Seq::make({stmt, anchor});
    return anchor.same_as(root) ? pair : replace_stmt(root, anchor, pair);
  }
  std::vector<Stmt> items;
  for (const Stmt& item : seq->stmts) {
    if (item.same_as(anchor) && !after) items.push_back(stmt);
    items.push_back(item);
    if (item.same_as(anchor) && after) items.push_back(stmt);
  }
  const Stmt& seq_stmt = path[path.size() - 2];
  Stmt new_seq = loop::Seq::make(std::move(items));
  return seq_stmt.same_as(root) ? new_seq : replace_stmt(root, seq_stmt, new_seq);
}

Stmt prepend_stmt(const Stmt& body, const Stmt& first) {
  std::vector<Stmt> items = {first};
  for (const Stmt& item : seq_items(body)) items.push_back(item);
  return loop::Seq::make(std::move(items));
}

Stmt append_stmt(const Stmt& body, const Stmt& last) {
  std::vector<Stmt> items = seq_items(body);
  items.push_back(last);
  return loop::Seq::make(std::move(items));
}

Stmt remove_allocation(const Stmt& root, const BufferNode* buffer) {
  AllocationRemover remover(buffer);
  return remover.mutate(root);
}

std::string unique_buffer_name(const loop::PrimFunc& func, const std::string& base) {
  NameCollector names;
  names.visit(func.body);
  for (const Buffer& param : func.params) names.buffers.insert(param->name);
  return unique_name(names.buffers, base);
}

std::string unique_block_name(const loop::PrimFunc& func, const std::string& base) {
  NameCollector names;
  names.visit(func.body);
  return unique_name(names.blocks, base);
}

bool share_loop(const std::vector<Stmt>& a, const std::vector<Stmt>& b) {
  for (size_t i = 0; i < a.size() && i < b.size() && a[i].same_as(b[i]); ++i) {
    if (a[i].as<For>()) return true;
  }
  return false;
}

std::vector<Expr> conjuncts(const Expr& predicate) {
  if (!predicate) return {};
  if (const auto* both = predicate.as<loop::And>()) {
    std::vector<Expr> result = conjuncts(both->a);
    for (const Expr& part : conjuncts(both->b)) result.push_back(part);
    return result;
  }
  return {predicate};
}

bool is_domain_guard(const Block& block, const Expr& condition) {
  const auto* less = condition.as<loop::LT>();
  if (!less) return false;
  std::optional<int64_t> bound = loop::as_const_int(less->b);
  if (!bound) return false;
  for (const loop::IterVar& iter : block.iter_vars) {
    if (iter.extent == *bound && same_expr(iter.binding, less->a)) return true;
  }
  return false;
}

std::optional<std::vector<size_t>> iter_var_positions(const Block& block,
                                                      const std::vector<Expr>& indices) {
  std::vector<size_t> positions;
  for (const Expr& index : indices) {
    auto same = [&](const loop::IterVar& iter) { return iter.var.same_as(index); };
    auto it = std::find_if(block.iter_vars.begin(), block.iter_vars.end(), same);
    if (it == block.iter_vars.end()) return std::nullopt;
    size_t position = static_cast<size_t>(it - block.iter_vars.begin());
    if (std::count(positions.begin(), positions.end(), position)) return std::nullopt;
    positions.push_back(position);
  }
  return positions;
}

std::optional<std::vector<IndexDigit>> row_major_digits(const Block& block, const Expr& index) {
  std::optional<loop::Linear> linear = loop::linearize(index);
  if (!linear || linear->constant != 0) return std::nullopt;
  std::vector<IndexDigit> digits;
  for (const auto& [var, stride] : linear->terms) {
    auto same = [&var = var](const loop::IterVar& iter) { return iter.var.same_as(var); };
    auto it = std::find_if(block.iter_vars.begin(), block.iter_vars.end(), same);
    if (it == block.iter_vars.end()) return std::nullopt;
    digits.push_back({static_cast<size_t>(it - block.iter_vars.begin()), stride});
  }
  std::sort(digits.begin(), digits.end(),
            [](const IndexDigit& a, const IndexDigit& b) { return a.stride > b.stride; });
  // Row-major: the last stride is 1 and each is the next one's times its extent.
  int64_t expected = 1;
  for (size_t k = digits.size(); k-- > 0;) {
    if (digits[k].stride != expected) return std::nullopt;
    expected *= block.iter_vars[digits[k].position].extent;
  }
  return digits;
}

StoreList stores_of(const Stmt& stmt) {
  StoreFinder finder;
  finder.visit(stmt);
  return finder.list;
}

bool feeds(const Block& block, const loop::Var* var, loop::IterKind kind) {
  for (const loop::IterVar& iter : block.iter_vars) {
    if (iter.kind == kind && loop::uses_var(iter.binding, var)) return true;
  }
  return false;
}

bool at_spatial_vars(const Block& block, const std::vector<Expr>& indices) {
  std::optional<std::vector<size_t>> positions = iter_var_positions(block, indices);
  size_t spatial = 0;
  for (const loop::IterVar& iter : block.iter_vars) {
    spatial += iter.kind == loop::IterKind::spatial ? 1 : 0;
  }
  bool one_element = positions && positions->size() == spatial;
  for (size_t position : positions.value_or(std::vector<size_t>{})) {
    one_element = one_element && block.iter_vars[position].kind == loop::IterKind::spatial;
  }
  return one_element;
}

Stmt copy_nest(const std::string& name, const Buffer& from, const Buffer& to,
               const std::vector<int64_t>& extents) {
  Block::Parts copy;
  copy.name = name;
  std::vector<Expr> loop_vars;
  std::vector<Expr> indices;
  for (size_t d = 0; d < extents.size(); ++d) {
    Expr loop_var = loop::Var::make(fmt::format("ax{}", d));
    Expr iter_var = loop::Var::make(fmt::format("v{}", d));
    loop_vars.push_back(loop_var);
    indices.push_back(iter_var);
    copy.iter_vars.push_back({iter_var, extents[d], loop::IterKind::spatial, loop_var});
  }
  loop::BufferRegion point{from, {}};
  for (const Expr& index : indices) point.region.push_back({index, loop::IntImm::make(1)});
  copy.reads = {point};
  point.buffer = to;
  copy.writes = {point};
  copy.body = loop::Store::make(to, indices, loop::Load::make(from, indices));
  Stmt nest = Block::make(std::move(copy));
  for (size_t d = extents.size(); d-- > 0;) {
    nest = For::make(loop_vars[d], loop::IntImm::make(0), loop::IntImm::make(extents[d]),
                     loop::ForKind::serial, nest);
  }
  return nest;
}

Expr plus(const Expr& base, const Expr& offset) {
  if (!base) return offset;
  std::optional<int64_t> constant = loop::as_const_int(base);
  if (constant && *constant == 0) return offset;
  return base + offset;
}

}  // namespace minic::schedule
