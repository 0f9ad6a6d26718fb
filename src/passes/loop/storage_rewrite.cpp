// storage-rewrite: allocations of disjoint lifetimes share memory. Course module 4 (the pass
// and its rule are documented in include/minic/passes/loop/storage_rewrite.h).
//
// Invariant: every read finds the value the original program wrote; the function verifies.
//
// Algorithm, one IRMutator walk, bottom-up, at every sequence (a Seq, possibly directly
// inside a chain of Allocates):
//   1. Peel the Allocates at the top of each statement of the sequence; their buffers live
//      during that statement only. A buffer of the chain around the sequence lives from the
//      first statement that uses it to the last.
//   2. Sort the shareable buffers by their first statement and assign each, greedily, to
//      the first shared slot of its element type and scope whose last user has ended before
//      it begins; else to a new slot.
//   3. A slot of two or more buffers becomes one Allocate around the sequence (the first
//      buffer's name, the largest size); its members' own Allocates go, and their loads and
//      stores go to the slot's buffer. Slots of one buffer change nothing.
//
//   alloc T: f32[4] local { ...T... }  alloc U: f32[8] local { ...U... }
//   →  alloc T: f32[8] local { ...T...  ...T... }
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#include "minic/passes/loop/storage_rewrite.h"
#include "minic/passes/pass_registry.h"

#include "pass_util.h"

#include "minic/ir/loop/gpu_axis.h"
#include "minic/ir/loop/visitor.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace minic::loop {
namespace {

using BufferMap = std::unordered_map<const BufferNode*, Buffer>;

// The Allocates at the top of a statement, outermost first, and the statement inside them.
struct Peeled {
  std::vector<Buffer> buffers;
  Stmt inner;
};

Peeled peel(Stmt stmt) {
  Peeled peeled;
  while (const Allocate* allocate = stmt.as<Allocate>()) {
    peeled.buffers.push_back(allocate->buffer);
    stmt = allocate->body;
  }
  peeled.inner = stmt;
  return peeled;
}

// `inner` inside Allocates of those of `buffers` not in `merged`, the first outermost.
Stmt wrap(const std::vector<Buffer>& buffers, Stmt inner,
          const std::unordered_set<const BufferNode*>& merged) {
  for (auto buffer = buffers.rbegin(); buffer != buffers.rend(); ++buffer) {
    if (!merged.count(buffer->get())) inner = Allocate::make(*buffer, inner);
  }
  return inner;
}

// Sends loads, stores and block regions of some buffers to others.
class BufferRenamer : public IRMutator {
 public:
  explicit BufferRenamer(const BufferMap& map) : map_(map) {}

  Expr mutate_Load(const Load* node, const Expr& self) override {
    bool changed = false;
    std::vector<Expr> indices = mutate_all(node->indices, changed);
    return Load::make(renamed(node->buffer), std::move(indices));
  }

  Stmt mutate_Store(const Store* node, const Stmt& self) override {
    bool changed = false;
    std::vector<Expr> indices = mutate_all(node->indices, changed);
    return Store::make(renamed(node->buffer), std::move(indices), mutate(node->value));
  }

  Stmt mutate_Block(const Block* node, const Stmt& self) override {
    Stmt result = IRMutator::mutate_Block(node, self);
    Block::Parts parts = result.as<Block>()->parts();
    for (auto* regions : {&parts.reads, &parts.writes}) {
      for (BufferRegion& region : *regions) region.buffer = renamed(region.buffer);
    }
    return Block::make(std::move(parts));
  }

 private:
  Buffer renamed(const Buffer& buffer) const {
    auto it = map_.find(buffer.get());
    return it == map_.end() ? buffer : it->second;
  }

  const BufferMap& map_;
};

// A buffer that may share memory, and the statements of its sequence it lives in.
struct Candidate {
  Buffer buffer;
  int first = 0;
  int last = 0;
};

// Buffers of one element type and scope, one after another in time.
struct Slot {
  std::vector<Buffer> members;
  int last = 0;
};

class StorageRewriter : public IRMutator {
 public:
  Stmt mutate_For(const For* node, const Stmt& self) override {
    bool thread_loop = node->for_kind == ForKind::thread_binding &&
                       is_thread_axis(node->thread_axis);
    thread_loops_ += thread_loop ? 1 : 0;
    Stmt result = IRMutator::mutate_For(node, self);
    thread_loops_ -= thread_loop ? 1 : 0;
    return result;
  }

  Stmt mutate_Allocate(const Allocate* node, const Stmt& self) override {
    Peeled peeled = peel(self);
    if (const Seq* seq = peeled.inner.as<Seq>()) return share(peeled.buffers, seq->stmts);
    return wrap(peeled.buffers, mutate(peeled.inner), {});
  }

  Stmt mutate_Seq(const Seq* node, const Stmt& self) override { return share({}, node->stmts); }

 private:
  bool shareable(const Buffer& buffer) const {
    bool flat = buffer->rank() == 1 && buffer->strides[0] == 1;
    bool private_memory = buffer->scope == MemoryScope::local ||
                          (buffer->scope == MemoryScope::global && thread_loops_ == 0);
    return flat && private_memory;
  }

  // The sequence `stmts` inside the Allocates of `chain`, with shareable buffers merged.
  Stmt share(const std::vector<Buffer>& chain, const std::vector<Stmt>& original) {
    std::vector<Stmt> stmts;
    for (const Stmt& stmt : original) stmts.push_back(mutate(stmt));
    int count = static_cast<int>(stmts.size());
    // Step 1: lifetimes.
    std::vector<Peeled> parts;
    std::vector<Candidate> candidates;
    for (const Buffer& buffer : chain) {
      if (!shareable(buffer)) continue;
      int first = count;
      int last = -1;
      for (int k = 0; k < count; ++k) {
        if (!pass_util::uses_buffer(stmts[k], buffer.get())) continue;
        first = std::min(first, k);
        last = k;
      }
      if (last >= 0) candidates.push_back({buffer, first, last});
    }
    for (int k = 0; k < count; ++k) {
      parts.push_back(peel(stmts[k]));
      for (const Buffer& buffer : parts.back().buffers) {
        if (shareable(buffer)) candidates.push_back({buffer, k, k});
      }
    }
    // Step 2: greedy assignment to slots.
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.first < b.first; });
    std::vector<Slot> slots;
    for (const Candidate& candidate : candidates) {
      auto fits = [&](const Slot& slot) {
        const BufferNode& member = *slot.members[0];
        return member.dtype == candidate.buffer->dtype &&
               member.scope == candidate.buffer->scope && slot.last < candidate.first;
      };
      auto slot = std::find_if(slots.begin(), slots.end(), fits);
      if (slot == slots.end()) slot = slots.insert(slots.end(), Slot{});
      slot->members.push_back(candidate.buffer);
      slot->last = candidate.last;
    }
    // Step 3: one buffer per slot of two or more.
    BufferMap renames;
    std::unordered_set<const BufferNode*> merged;
    std::vector<Buffer> shared;
    for (const Slot& slot : slots) {
      if (slot.members.size() < 2) continue;
      int64_t size = 0;
      for (const Buffer& member : slot.members) size = std::max(size, member->shape[0]);
      const BufferNode& first = *slot.members[0];
      shared.push_back(BufferNode::make(first.name, first.dtype, {size}, first.scope));
      for (const Buffer& member : slot.members) {
        renames[member.get()] = shared.back();
        merged.insert(member.get());
      }
    }
    BufferRenamer renamer(renames);
    std::vector<Stmt> rebuilt;
    for (const Peeled& part : parts) {
      Stmt stmt = wrap(part.buffers, part.inner, merged);
      rebuilt.push_back(renames.empty() ? stmt : renamer.mutate(stmt));
    }
    Stmt sequence = Seq::make(std::move(rebuilt));
    return wrap(chain, wrap(shared, sequence, {}), merged);
  }

  int thread_loops_ = 0;
};

}  // namespace

PrimFunc storage_rewrite(PrimFunc func) {
  func.body = StorageRewriter().mutate(func.body);
  return func;
}

MINIC_REGISTER_LOOP_PASS("storage-rewrite", storage_rewrite,
                         "let allocations of disjoint lifetimes share memory");

}  // namespace minic::loop
