// reverse_compute_inline: remove a consumer block by folding its expression into its
// producer, which then writes the consumer's output directly.
//
// Course module 4. The epilogue of a kernel (a bias, a ReLU after a matmul or a
// convolution) reads each element of the producer's output once; folding it into the
// producer saves the round trip through memory.
//
//   Before                                    After reverse_compute_inline(f, "D")
//   alloc B: f32[64] {                        for i in 0..64 {
//     for i in 0..64 {                          block B(v = spatial(64) i) {
//       block B(v = spatial(64) i) {              reads(A[v]) writes(D[v])
//         reads(A[v]) writes(B[v])                D[v] = max(A[v] * 2.0, 0.0)
//         B[v] = A[v] * 2.0                     }
//       }                                     }
//     }
//     for i in 0..64 {
//       block D(w = spatial(64) i) {
//         reads(B[w]) writes(D[w])
//         D[w] = max(B[w], 0.0)
//
// Preconditions (each failure names the block and the reason):
//   - the consumer's body is one store D[...] = g(...), with no init and no reduction
//     variable, and its predicate (if any) only guards its domain;
//   - of what it reads, exactly one buffer B is written by another block, the producer;
//     it reads B only as B[w...] with the same indices everywhere, each one of its
//     iteration variables, every one once, over the whole of B (a bijection);
//   - the producer is B's only writer and is not a reduction: its body is one store
//     B[v...] = e at its iteration variables, every one once, over the whole of B;
//   - B is not a parameter, and no block but the consumer reads it; the consumer does not
//     read D;
//   - nothing runs between the producer and the consumer that writes what the consumer
//     reads or touches D: every other block that does comes before the producer, or after
//     the consumer, and shares no loop with either.
//
// Algorithm:
//   1. check the preconditions;
//   2. map the consumer's iteration variables to the producer's: the index of B in
//      dimension d is w_d in the consumer and v_d in the producer;
//   3. the producer's store becomes D[mapped indices] = g with B[...] replaced by e; its
//      regions: its reads, the consumer's other reads and the consumer's writes, mapped;
//   4. remove the consumer's loop nest and B's allocation; fail if anything still uses B.
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

constexpr const char* kPrimitive = "reverse_compute_inline";

// Replaces every load of one buffer by an expression.
class LoadReplacer : public loop::IRMutator {
 public:
  LoadReplacer(const BufferNode* buffer, Expr value) : buffer_(buffer), value_(std::move(value)) {}

  Expr mutate_Load(const loop::Load* node, const Expr& self) override {
    if (node->buffer.get() == buffer_) return value_;
    return IRMutator::mutate_Load(node, self);
  }

 private:
  const BufferNode* buffer_;
  Expr value_;
};

// The store of a block that is one store at its iteration variables, each once, over the
// whole buffer; with the positions of those variables.
const loop::Store* whole_store(const Block& block, std::vector<size_t>& positions) {
  const auto* store = block.body.as<loop::Store>();
  if (!store || block.init) return nullptr;
  std::optional<std::vector<size_t>> found = iter_var_positions(block, store->indices);
  if (!found || found->size() != block.iter_vars.size()) return nullptr;
  for (size_t d = 0; d < found->size(); ++d) {
    if (block.iter_vars[(*found)[d]].extent != store->buffer->shape[d]) return nullptr;
  }
  positions = *found;
  return store;
}

}  // namespace

void reverse_compute_inline(PrimFunc& func, const std::string& block_name) {
  std::vector<Stmt> path = block_path(func, block_name, kPrimitive);
  const Block& consumer = *path.back().as<Block>();
  const auto* consumer_store = consumer.body.as<loop::Store>();
  if (!consumer_store || consumer.init) {
    fail("{}: block {} is not one store of an expression (D[...] = expr)", kPrimitive,
         block_name);
  }
  for (const loop::IterVar& iter : consumer.iter_vars) {
    if (iter.kind == loop::IterKind::reduce) {
      fail("{}: block {} is a reduction (variable {})", kPrimitive, block_name,
           iter.var.as<loop::Var>()->name);
    }
  }
  for (const Expr& condition : conjuncts(consumer.predicate)) {
    if (!is_domain_guard(consumer, condition)) {
      fail("{}: block {} has the predicate {}, which is more than a guard of its domain",
           kPrimitive, block_name, loop::print_expr(condition));
    }
  }
  BufferUse consumer_use = block_buffer_use(consumer);
  const BufferNode* output = consumer_store->buffer.get();
  if (consumer_use.reads_buffer(output)) {
    fail("{}: block {} reads {}, the buffer it writes", kPrimitive, block_name, output->name);
  }

  // The producer: the one block writing what the consumer reads.
  std::vector<std::vector<Stmt>> paths = all_block_paths(func.body);
  const std::vector<Stmt>* producer_path = nullptr;
  for (const std::vector<Stmt>& other_path : paths) {
    const Block& other = *other_path.back().as<Block>();
    if (&other == &consumer) continue;
    for (const BufferNode* input : consumer_use.reads) {
      if (!block_buffer_use(other).writes_buffer(input)) continue;
      if (producer_path && producer_path->back().as<Block>() != &other) {
        fail("{}: block {} reads what two blocks write: {} and {}", kPrimitive, block_name,
             producer_path->back().as<Block>()->name, other.name);
      }
      producer_path = &other_path;
    }
  }
  if (!producer_path) fail("{}: no block writes what block {} reads", kPrimitive, block_name);
  const Block& producer = *producer_path->back().as<Block>();
  bool reduction = static_cast<bool>(producer.init);
  for (const loop::IterVar& iter : producer.iter_vars) {
    reduction = reduction || iter.kind == loop::IterKind::reduce;
  }
  if (reduction) {
    fail("{}: the producer {} of block {} is a reduction; its output is final only after "
         "its last step", kPrimitive, producer.name, block_name);
  }
  std::vector<size_t> producer_positions;
  const loop::Store* producer_store = whole_store(producer, producer_positions);
  if (!producer_store) {
    fail("{}: the producer {} of block {} is not one store of one element per iteration over "
         "its whole buffer", kPrimitive, producer.name, block_name);
  }
  const BufferNode* buffer = producer_store->buffer.get();
  if (block_buffer_use(producer).writes.size() != 1) {
    fail("{}: block {} writes more than one buffer", kPrimitive, producer.name);
  }
  if (is_param(func, buffer)) {
    fail("{}: {} is a parameter of @{}; the function's outputs stay", kPrimitive, buffer->name,
         func.name);
  }
  std::vector<loop::Access> loads = loop::accesses_of(
      loop::collect_accesses(consumer_store->value), buffer, loop::AccessKind::load);
  std::optional<std::vector<size_t>> positions =
      loads.empty() ? std::nullopt : iter_var_positions(consumer, loads[0].indices);
  bool bijection = positions && positions->size() == consumer.iter_vars.size();
  for (size_t d = 0; bijection && d < positions->size(); ++d) {
    bijection = consumer.iter_vars[(*positions)[d]].extent == buffer->shape[d];
  }
  for (const loop::Access& load : loads) {
    for (size_t d = 0; bijection && d < load.indices.size(); ++d) {
      bijection = same_expr(load.indices[d], loads[0].indices[d]);
    }
  }
  if (!bijection || consumer_use.writes.size() != 1) {
    fail("{}: block {} does not read {} exactly at its own iteration variables, one element "
         "per iteration over the whole buffer", kPrimitive, block_name, buffer->name);
  }

  // Nothing else may run between the two blocks that the move would reorder.
  bool after_consumer = false;
  bool after_producer = false;
  for (const std::vector<Stmt>& other_path : paths) {
    const Block& other = *other_path.back().as<Block>();
    if (&other == &producer) after_producer = true;
    if (&other == &consumer && !after_producer) {
      fail("{}: block {} comes before its producer {}", kPrimitive, block_name, producer.name);
    }
    if (&other == &consumer) after_consumer = true;
    if (&other == &producer || &other == &consumer) continue;
    BufferUse use = block_buffer_use(other);
    if (use.reads_buffer(buffer)) {
      fail("{}: block {} also reads {}", kPrimitive, other.name, buffer->name);
    }
    bool conflict = use.touches(output);
    for (const BufferNode* input : consumer_use.reads) {
      conflict = conflict || use.writes_buffer(input);
    }
    bool apart = !share_loop(other_path, *producer_path) && !share_loop(other_path, path) &&
                 (!after_producer || after_consumer);
    if (conflict && !apart) {
      fail("{}: block {} uses {} or what block {} reads between the blocks {} and {}",
           kPrimitive, other.name, output->name, block_name, producer.name, block_name);
    }
  }
  size_t root = nest_root_index(path);
  if (root == 0 || !path[root - 1].as<loop::Seq>()) {
    fail("{}: the loops of block {} are not in a sequence with other statements", kPrimitive,
         block_name);
  }

  // The consumer's variables in terms of the producer's, then the folded store.
  loop::VarMap map;
  for (size_t d = 0; d < positions->size(); ++d) {
    map[consumer.iter_vars[(*positions)[d]].var.as<loop::Var>()] =
        producer.iter_vars[producer_positions[d]].var;
  }
  LoadReplacer replacer(buffer, producer_store->value);
  Expr value = loop::substitute(replacer.mutate(consumer_store->value), map);
  std::vector<Expr> indices;
  for (const Expr& index : consumer_store->indices) indices.push_back(loop::substitute(index, map));
  Block::Parts parts = producer.parts();
  parts.body = loop::Store::make(consumer_store->buffer, indices, value);
  auto mapped = [&map](loop::BufferRegion region) {
    for (loop::Range& range : region.region) {
      range.min = loop::substitute(range.min, map);
      range.extent = loop::substitute(range.extent, map);
    }
    return region;
  };
  for (const loop::BufferRegion& read : consumer.reads) {
    if (read.buffer.get() != buffer) parts.reads.push_back(mapped(read));
  }
  parts.writes.clear();
  for (const loop::BufferRegion& write : consumer.writes) parts.writes.push_back(mapped(write));

  Stmt new_producer = Block::make(std::move(parts));
  Stmt body = replace_stmt(func.body, path[root], Stmt());
  body = replace_stmt(body, producer_path->back(), new_producer);
  body = remove_allocation(body, buffer);
  if (buffer_use(body).touches(buffer)) {
    fail("{}: {} is still used outside blocks after folding block {}", kPrimitive,
         buffer->name, block_name);
  }
  commit_body(func, body, kPrimitive);
}

}  // namespace minic::schedule
