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
// Preconditions (each failure names the block and the reason):
//   - the block's body is one store B[v...] = expr, each index exactly one of its
//     iteration variables (every one once: a bijection), all spatial, and no init;
//   - it writes the whole of B (its extents are B's shape) and no other block writes B;
//   - B is not a parameter (the function's outputs stay), and the expression does not
//     read B;
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
//   4. remove B's allocation; fail if anything still uses B.
#include "minic/schedule/primitives.h"

#include "block_edit.h"
#include "loop_tree.h"

#include "minic/ir/loop/access.h"
#include "minic/ir/loop/printer.h"
#include "minic/ir/loop/visitor.h"
#include "minic/support/error.h"

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

}  // namespace

void compute_inline(PrimFunc& func, const std::string& block_name) {
  std::vector<Stmt> path = block_path(func, block_name, kPrimitive);
  const Block& block = *path.back().as<Block>();
  const auto* store = block.body.as<loop::Store>();
  if (!store) {
    fail("{}: block {} is not one store of an expression (B[v...] = expr)", kPrimitive,
         block_name);
  }
  const loop::Buffer& buffer = store->buffer;
  if (block.init) fail("{}: block {} is a reduction (it has an init)", kPrimitive, block_name);
  for (const loop::IterVar& iter : block.iter_vars) {
    if (iter.kind == loop::IterKind::reduce) {
      fail("{}: block {} has the reduction variable {}", kPrimitive, block_name,
           iter.var.as<loop::Var>()->name);
    }
  }
  std::optional<std::vector<size_t>> positions = iter_var_positions(block, store->indices);
  if (!positions || positions->size() != block.iter_vars.size()) {
    fail("{}: block {} stores to {} at indices that are not its iteration variables, each "
         "once", kPrimitive, block_name, buffer->name);
  }
  for (size_t d = 0; d < positions->size(); ++d) {
    if (block.iter_vars[(*positions)[d]].extent != buffer->shape[d]) {
      fail("{}: block {} writes only part of {} (dimension {})", kPrimitive, block_name,
           buffer->name, d);
    }
  }
  if (is_param(func, buffer.get())) {
    fail("{}: block {} writes {}, a parameter of @{}; an output cannot be inlined",
         kPrimitive, block_name, buffer->name, func.name);
  }
  BufferUse own = block_buffer_use(block);
  if (own.reads_buffer(buffer.get())) {
    fail("{}: block {} reads {}, the buffer it writes", kPrimitive, block_name, buffer->name);
  }
  if (!block.alloc_buffers.empty()) {
    fail("{}: block {} allocates buffers of its own", kPrimitive, block_name);
  }
  for (const Expr& condition : conjuncts(block.predicate)) {
    if (!is_domain_guard(block, condition)) {
      fail("{}: block {} has the predicate {}, which is more than a guard of its domain",
           kPrimitive, block_name, loop::print_expr(condition));
    }
  }
  bool before = true;
  for (const std::vector<Stmt>& other_path : all_block_paths(func.body)) {
    const Block& other = *other_path.back().as<Block>();
    if (&other == &block) {
      before = false;
      continue;
    }
    BufferUse use = block_buffer_use(other);
    if (use.writes_buffer(buffer.get())) {
      fail("{}: block {} is not the only writer of {}: block {} writes it too", kPrimitive,
           block_name, buffer->name, other.name);
    }
    for (const BufferNode* input : own.reads) {
      if (use.writes_buffer(input) && (!before || share_loop(other_path, path))) {
        fail("{}: block {} writes {}, which block {} reads; its value could change before "
             "the uses of {}", kPrimitive, other.name, input->name, block_name, buffer->name);
      }
    }
  }
  size_t root = nest_root_index(path);
  if (root == 0 || !path[root - 1].as<loop::Seq>()) {
    fail("{}: the loops of block {} are not in a sequence with other statements", kPrimitive,
         block_name);
  }

  Stmt body = replace_stmt(func.body, path[root], Stmt());
  Inliner inliner(block, *store, *positions);
  body = inliner.mutate(body);
  body = remove_allocation(body, buffer.get());
  if (buffer_use(body).touches(buffer.get())) {
    fail("{}: {} is still used outside blocks after inlining block {}", kPrimitive,
         buffer->name, block_name);
  }
  func.body = body;
}

}  // namespace minic::schedule
