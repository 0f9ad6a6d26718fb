// The accesses of a statement, the buffers it reads and writes, and the regions a block
// declares. Course module 3. The regions under loop bounds are in access_region.cpp.
//
// Chapter: docs/module3-loop-ir.md#2-walking-and-rewriting
#include "minic/ir/loop/access.h"

#include "minic/ir/loop/printer.h"
#include "minic/ir/loop/visitor.h"

#include <map>

namespace minic::loop {
namespace {

// Walks a statement once, recording every load and store with the block and loops around
// it. With bindings asked for, each block's iteration variables map to their bindings
// (themselves written in loop variables) while its init and body are walked. Given a
// BufferUse, it only names the buffers there (with the blocks' declared regions), which is
// all buffer_use needs; given a block too, only that block's own.
class AccessCollector : public IRVisitor {
 public:
  explicit AccessCollector(const AccessOptions& options, BufferUse* use = nullptr,
                           const Block* only = nullptr)
      : options_(options), use_(use), only_(only) {}

  std::vector<Access> accesses;

  void visit_For(const For* node) override {
    visit(node->min);
    visit(node->extent);
    loops_.push_back({node, written(node->min), written(node->extent)});
    visit(node->body);
    loops_.pop_back();
  }

  void visit_Block(const Block* node) override {
    VarMap outer = bindings_;
    for (const IterVar& iter : node->iter_vars) {
      visit(iter.binding);
      if (options_.bindings) bindings_[iter.var.as<Var>()] = written(iter.binding);
    }
    const Block* outer_block = block_;
    block_ = node;
    if (use_ && (!only_ || node == only_)) add_declared(*node);
    for (const auto* regions : {&node->reads, &node->writes}) {
      for (const BufferRegion& region : *regions) {
        for (const Range& range : region.region) {
          visit(range.min);
          visit(range.extent);
        }
      }
    }
    visit(node->predicate);
    visit(node->init);
    visit(node->body);
    block_ = outer_block;
    bindings_ = std::move(outer);
  }

  void visit_Load(const Load* node) override {
    record(node->buffer, AccessKind::load, node->indices);
    IRVisitor::visit_Load(node);
  }

  void visit_Store(const Store* node) override {
    record(node->buffer, AccessKind::store, node->indices);
    IRVisitor::visit_Store(node);
  }

 private:
  Expr written(const Expr& expr) const { return substitute(expr, bindings_); }

  // The declared regions of a block go into its use: a stale region never hides an
  // access, and a region whose accesses were removed still counts.
  void add_declared(const Block& block) {
    for (const BufferRegion& region : block.reads) use_->reads.insert(region.buffer.get());
    for (const BufferRegion& region : block.writes) use_->writes.insert(region.buffer.get());
  }

  void record(const Buffer& buffer, AccessKind kind, const std::vector<Expr>& indices) {
    if (use_) {
      if (!only_ || block_ == only_) {
        (kind == AccessKind::load ? use_->reads : use_->writes).insert(buffer.get());
      }
      return;
    }
    Access access{buffer, kind, {}, block_, loops_};
    for (const Expr& index : indices) access.indices.push_back(written(index));
    accesses.push_back(std::move(access));
  }

  const AccessOptions& options_;
  BufferUse* use_;
  const Block* only_;
  VarMap bindings_;  // iteration variable -> its binding in loop variables
  const Block* block_ = nullptr;
  std::vector<LoopAround> loops_;
};

class AllocationCollector : public IRVisitor {
 public:
  std::set<const BufferNode*> buffers;

  void visit_Allocate(const Allocate* node) override {
    buffers.insert(node->buffer.get());
    IRVisitor::visit_Allocate(node);
  }
  void visit_Block(const Block* node) override {
    for (const Buffer& buffer : node->alloc_buffers) buffers.insert(buffer.get());
    IRVisitor::visit_Block(node);
  }
};

// The declared region of one buffer's accesses (see declared_regions).
BufferRegion declared_region(const Buffer& buffer, const std::vector<const Access*>& accesses,
                             const VarBounds& bounds) {
  BufferRegion region{buffer, {}};
  for (size_t d = 0; d < buffer->shape.size(); ++d) {
    // Indices compare by their text, which names each variable: a Select or a Cast
    // built twice the same way is still one index.
    const Expr& first = accesses.front()->indices[d];
    std::string text = print_expr(first);
    bool same = true;
    for (const Access* access : accesses) same = same && print_expr(access->indices[d]) == text;
    IntBound bound = bound_of(first, bounds);
    bool inside = bound.min >= 0 && bound.max < buffer->shape[d];
    if (same && inside) {
      region.region.push_back({first, IntImm::make(1)});
    } else {
      region.region.push_back({IntImm::make(0), IntImm::make(buffer->shape[d])});
    }
  }
  return region;
}

}  // namespace

std::vector<Access> collect_accesses(const Stmt& stmt, const AccessOptions& options) {
  AccessCollector collector(options);
  collector.visit(stmt);
  return std::move(collector.accesses);
}

std::vector<Access> collect_accesses(const Block& block, const AccessOptions& options) {
  AccessCollector collector(options);
  collector.visit_Block(&block);
  return std::move(collector.accesses);
}

std::vector<Access> collect_accesses(const Expr& expr) {
  AccessOptions options;
  AccessCollector collector(options);
  collector.visit(expr);
  return std::move(collector.accesses);
}

std::vector<Access> accesses_of(const std::vector<Access>& accesses, const BufferNode* buffer,
                                std::optional<AccessKind> kind) {
  std::vector<Access> result;
  for (const Access& access : accesses) {
    if (access.buffer.get() == buffer && (!kind || access.kind == *kind)) {
      result.push_back(access);
    }
  }
  return result;
}

BufferUse buffer_use(const Stmt& stmt) {
  BufferUse use;
  AccessOptions options;
  AccessCollector collector(options, &use);
  collector.visit(stmt);
  return use;
}

BufferUse block_buffer_use(const Block& block) {
  BufferUse use;
  AccessOptions options;
  AccessCollector collector(options, &use, &block);
  collector.visit_Block(&block);
  return use;
}

std::set<const BufferNode*> allocated_buffers(const Stmt& stmt) {
  AllocationCollector collector;
  collector.visit(stmt);
  return collector.buffers;
}

BufferRegion point_region(const Buffer& buffer, const std::vector<Expr>& indices) {
  BufferRegion region{buffer, {}};
  for (const Expr& index : indices) region.region.push_back({index, IntImm::make(1)});
  return region;
}

BufferRegion whole_region(const Buffer& buffer) {
  BufferRegion region{buffer, {}};
  for (int64_t dim : buffer->shape) region.region.push_back({IntImm::make(0), IntImm::make(dim)});
  return region;
}

DeclaredRegions declared_regions(const Stmt& body, const VarBounds& bounds) {
  std::vector<Access> accesses = collect_accesses(body);
  DeclaredRegions result;
  for (AccessKind kind : {AccessKind::load, AccessKind::store}) {
    std::vector<Buffer> order;
    std::map<const BufferNode*, std::vector<const Access*>> grouped;
    for (const Access& access : accesses) {
      if (access.kind != kind) continue;
      auto [it, inserted] = grouped.try_emplace(access.buffer.get());
      if (inserted) order.push_back(access.buffer);
      it->second.push_back(&access);
    }
    auto& regions = kind == AccessKind::load ? result.reads : result.writes;
    for (const Buffer& buffer : order) {
      regions.push_back(declared_region(buffer, grouped[buffer.get()], bounds));
    }
  }
  return result;
}

}  // namespace minic::loop
