// compute_inline: remove a producer block by computing its value where it is used.
//
// Course module 4. An elementwise producer writes an intermediate buffer that its
// consumers read back; inlining substitutes the producer's expression into each load, so
// the intermediate never touches memory.
//
//   Before                                        After compute_inline(f, "B")
//   alloc B: f32[64] {                            for i in 0..64 {
//     for i in 0..64 {                              block C(v = spatial(64) i) {
//       block B(v = spatial(64) i) {                  reads(A[v]) writes(C[v])
//         reads(A[v]) writes(B[v])                    C[v] = A[v] * 2.0 + 1.0
//         B[v] = A[v] * 2.0                         }
//       }                                         }
//     }
//     for i in 0..64 {
//       block C(v = spatial(64) i) {
//         reads(B[v]) writes(C[v])
//         C[v] = B[v] + 1.0
//       }
//     }
//   }
//
// Preconditions (each a named check of preconditions.h, or of this file, whose refusal
// names the block and the reason):
//   - the block's body is one store B[v...] = expr, each index exactly one of its
//     iteration variables (every one once: a bijection), all spatial, and no init;
//   - it writes the whole of B (its extents are B's shape) and no other block writes B;
//   - B is not a parameter (the function's outputs stay), and the expression does not
//     read B; the block allocates nothing;
//   - its predicate (if any) only guards its domain (as a split leaves it);
//   - the buffers the expression reads do not change between the block and its uses: any
//     other block writing them comes earlier in the program and shares no loop with it;
//   - its loops hold it alone and sit in a sequence with other statements.
//
// Algorithm:
//   1. check the preconditions;
//   2. remove the block's loop nest from its sequence;
//   3. replace every load B[e...] in the function by expr with each iteration variable v
//      replaced by the matching index e; a consumer's read region of B becomes the
//      regions of what expr reads (the whole buffer where a range is wider than a point);
//   4. remove B's allocation; refuse if anything still uses B.
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#include "minic/schedule/primitives.h"

#include "block_edit.h"
#include "loop_tree.h"
#include "preconditions.h"

#include "minic/ir/loop/access.h"
#include "minic/ir/loop/visitor.h"

#include <fmt/format.h>

namespace minic::schedule {
namespace {

using loop::Block;
using loop::BufferRegion;

constexpr const char* kPrimitive = "compute_inline";

bool same_region(const BufferRegion& a, const BufferRegion& b) {
  if (a.buffer != b.buffer) return false;
  for (size_t d = 0; d < a.region.size(); ++d) {
    if (!same_expr(a.region[d].min, b.region[d].min) ||
        !same_expr(a.region[d].extent, b.region[d].extent)) {
      return false;
    }
  }
  return true;
}

// Replaces loads of the producer's buffer by its expression, and consumer regions of it by
// the regions of what the expression reads.
class Inliner : public loop::IRMutator {
 public:
  Inliner(const Block& producer, const loop::Store& store, const std::vector<size_t>& positions)
      : producer_(producer), store_(store), positions_(positions) {}

  Expr mutate_Load(const loop::Load* node, const Expr& self) override {
    Expr result = IRMutator::mutate_Load(node, self);
    if (node->buffer != store_.buffer) return result;
    return loop::substitute(store_.value, index_map(result.as<loop::Load>()->indices));
  }

  Stmt mutate_Block(const Block* node, const Stmt& self) override {
    Stmt result = IRMutator::mutate_Block(node, self);
    Block::Parts parts = result.as<Block>()->parts();
    bool changed = false;
    std::vector<BufferRegion> reads;
    auto add = [&reads](const BufferRegion& region) {
      for (const BufferRegion& existing : reads) {
        if (same_region(existing, region)) return;
      }
      reads.push_back(region);
    };
    for (const BufferRegion& region : parts.reads) {
      if (region.buffer != store_.buffer) {
        add(region);
        continue;
      }
      changed = true;
      for (const BufferRegion& inlined : inlined_reads(region)) add(inlined);
    }
    if (!changed) return result;
    parts.reads = std::move(reads);
    return Block::make(std::move(parts));
  }

 private:
  loop::VarMap index_map(const std::vector<Expr>& indices) const {
    loop::VarMap map;
    for (size_t d = 0; d < indices.size(); ++d) {
      map[producer_.iter_vars[positions_[d]].var.as<loop::Var>()] = indices[d];
    }
    return map;
  }

  // What the consumer reads instead of `region` of the producer's buffer.
  std::vector<BufferRegion> inlined_reads(const BufferRegion& region) const {
    std::vector<BufferRegion> loads;
    for (const loop::Access& load : loop::collect_accesses(store_.value)) {
      loads.push_back(loop::point_region(load.buffer, load.indices));
    }
    std::vector<Expr> points;
    for (const loop::Range& range : region.region) {
      std::optional<int64_t> extent = loop::as_const_int(range.extent);
      points.push_back(extent && *extent == 1 ? range.min : Expr());
    }
    bool exact = std::all_of(points.begin(), points.end(), [](const Expr& e) { return bool(e); });
    std::vector<BufferRegion> result;
    for (BufferRegion& load : loads) {
      if (!exact) {
        result.push_back(loop::whole_region(load.buffer));
        continue;
      }
      for (loop::Range& range : load.region) {
        range.min = loop::substitute(range.min, index_map(points));
      }
      result.push_back(std::move(load));
    }
    return result;
  }

  const Block& producer_;
  const loop::Store& store_;
  const std::vector<size_t>& positions_;
};

// The buffers the block reads are final where B is read: every other block that writes
// one comes before the block and shares no loop with it.
Refusal inputs_are_final(const PrimFunc& func, const std::vector<Stmt>& path) {
  const Block& block = *path.back().as<Block>();
  std::vector<std::vector<Stmt>> later;
  bool before = true;
  for (const std::vector<Stmt>& other : all_block_paths(func.body)) {
    if (other.back().same_as(path.back())) before = false;
    if (!before || share_loop(other, path)) later.push_back(other);
  }
  std::string consequence = fmt::format("its value could change before the uses of {}",
                                        block.body.as<loop::Store>()->buffer->name);
  return no_writer_of_inputs(block, later, nullptr, consequence);
}

}  // namespace

void compute_inline(PrimFunc& func, const std::string& block_name) {
  std::vector<Stmt> path = block_path(func, block_name, kPrimitive);
  const Block& block = *path.back().as<Block>();

  // 1. The preconditions.
  require(kPrimitive, is_one_store(block));
  require(kPrimitive, is_not_reduction(block));
  require(kPrimitive, stores_whole_buffer(block));
  const loop::Store& store = *block.body.as<loop::Store>();
  const BufferNode* buffer = store.buffer.get();
  require(kPrimitive, is_not_parameter(func, block, buffer));
  require(kPrimitive, reads_no_output(block));
  require(kPrimitive, allocates_nothing(block));
  require(kPrimitive, guards_only_its_domain(block));
  require(kPrimitive, is_only_writer(func, block, buffer));
  require(kPrimitive, inputs_are_final(func, path));
  require(kPrimitive, nest_is_in_sequence(path));

  // 2. Remove the block's loop nest.
  Stmt body = replace_stmt(func.body, path[nest_root_index(path)], Stmt());

  // 3. Every load of B becomes the expression.
  std::vector<size_t> positions = *iter_var_positions(block, store.indices);
  body = Inliner(block, store, positions).mutate(body);

  // 4. B is gone.
  body = remove_allocation(body, buffer);
  require(kPrimitive, is_gone(body, buffer, "inlining block " + block_name));
  func.body = body;
}

}  // namespace minic::schedule
