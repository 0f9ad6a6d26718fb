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
// Preconditions (each a named check of preconditions.h, or of this file, whose refusal
// names the block and the reason):
//   - the consumer's body is one store D[...] = g(...), with no init and no reduction
//     variable, its predicate (if any) only guards its domain, and it does not read D;
//   - of what it reads, exactly one buffer B is written by another block, the producer;
//   - the producer is not a reduction, writes only B, and its body is one store
//     B[v...] = e at its iteration variables, every one once, over the whole of B;
//   - B is not a parameter; the consumer reads B only as B[w...] with the same indices
//     everywhere, each one of its iteration variables or a row-major combination of some
//     (w2 * 56 + w3 with w3 of extent 56: a convolution's sums over flattened positions
//     read by an epilogue over rows and columns), every variable once, over the whole of B
//     (a bijection), and writes one buffer;
//   - nothing runs between the producer and the consumer that reads B, writes what the
//     consumer reads or touches D: every other block that does comes before the producer,
//     or after the consumer, and shares no loop with either;
//   - the consumer's loops hold it alone and sit in a sequence with other statements.
//
// Algorithm:
//   1. check the consumer;
//   2. find the producer and check it, B and the consumer's reads of B;
//   3. check what runs between the two blocks;
//   4. fold: map the consumer's iteration variables to the producer's (the index of B in
//      dimension d is w_d in the consumer and v_d in the producer; where it is w2 * 56 +
//      w3, w2 is floordiv(v_d, 56) and w3 floormod(v_d, 56)); the producer's store
//      becomes D[mapped indices] = g with B[...] replaced by e; its regions: its reads,
//      the consumer's other reads and the consumer's writes, mapped;
//   5. remove the consumer's loop nest and B's allocation; refuse if anything still uses B.
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

const Block& block_of(const std::vector<Stmt>& path) { return *path.back().as<Block>(); }

// The one other block that writes what the consumer reads (its path in `paths`).
Refusal has_one_producer(const std::vector<std::vector<Stmt>>& paths, const Block& consumer,
                         const std::vector<Stmt>*& producer) {
  BufferUse reads = block_buffer_use(consumer);
  producer = nullptr;
  for (const std::vector<Stmt>& path : paths) {
    const Block& other = block_of(path);
    if (&other == &consumer) continue;
    for (const BufferNode* input : reads.reads) {
      if (!block_buffer_use(other).writes_buffer(input)) continue;
      if (producer && &block_of(*producer) != &other) {
        return fmt::format("block {} reads what two blocks write: {} and {}", consumer.name,
                           block_of(*producer).name, other.name);
      }
      producer = &path;
    }
  }
  if (!producer) return fmt::format("no block writes what block {} reads", consumer.name);
  return std::nullopt;
}

// The producer's output is final after each of its iterations: it is not a reduction.
Refusal producer_is_final(const Block& producer, const Block& consumer) {
  if (!is_not_reduction(producer)) return std::nullopt;
  return fmt::format("the producer {} of block {} is a reduction; its output is final only "
                     "after its last step", producer.name, consumer.name);
}

// No block but the two reads B, and none that writes what the consumer reads or touches
// its output runs between them or shares a loop with either.
Refusal nothing_between(const std::vector<std::vector<Stmt>>& paths,
                        const std::vector<Stmt>& producer_path,
                        const std::vector<Stmt>& consumer_path, const BufferNode* buffer) {
  const Block& producer = block_of(producer_path);
  const Block& consumer = block_of(consumer_path);
  BufferUse consumer_use = block_buffer_use(consumer);
  const BufferNode* output = consumer.body.as<loop::Store>()->buffer.get();
  bool after_producer = false;
  bool after_consumer = false;
  for (const std::vector<Stmt>& path : paths) {
    const Block& other = block_of(path);
    if (&other == &producer) after_producer = true;
    if (&other == &consumer && !after_producer) {
      return fmt::format("block {} comes before its producer {}", consumer.name, producer.name);
    }
    if (&other == &consumer) after_consumer = true;
    if (&other == &producer || &other == &consumer) continue;
    BufferUse use = block_buffer_use(other);
    if (use.reads_buffer(buffer)) {
      return fmt::format("block {} also reads {}", other.name, buffer->name);
    }
    bool conflict = use.touches(output);
    for (const BufferNode* input : consumer_use.reads) {
      conflict = conflict || use.writes_buffer(input);
    }
    bool apart = !share_loop(path, producer_path) && !share_loop(path, consumer_path) &&
                 (!after_producer || after_consumer);
    if (conflict && !apart) {
      return fmt::format("block {} uses {} or what block {} reads between the blocks {} and {}",
                         other.name, output->name, consumer.name, producer.name,
                         consumer.name);
    }
  }
  return std::nullopt;
}

// Step 4: the producer writing D[mapped indices] = g with its loads of B replaced by e.
Stmt fold(const Block& producer, const Block& consumer, const BufferNode* buffer) {
  const auto& producer_store = *producer.body.as<loop::Store>();
  const auto& consumer_store = *consumer.body.as<loop::Store>();
  std::vector<size_t> producer_positions = *iter_var_positions(producer, producer_store.indices);
  std::vector<Expr> loaded = loop::accesses_of(loop::collect_accesses(consumer), buffer,
                                               loop::AccessKind::load)[0].indices;
  loop::VarMap map;
  for (size_t d = 0; d < loaded.size(); ++d) {
    // The consumer's index in dimension d is w or a row-major combination of several
    // (w2 * 56 + w3); each is a digit of the producer's v: floordiv(v, 56), floormod(v, 56).
    const Expr& v = producer.iter_vars[producer_positions[d]].var;
    std::vector<IndexDigit> digits = *row_major_digits(consumer, loaded[d]);
    for (size_t k = 0; k < digits.size(); ++k) {
      const loop::IterVar& w = consumer.iter_vars[digits[k].position];
      const int64_t stride = digits[k].stride;
      Expr digit = stride == 1 ? v : loop::FloorDiv::make(v, loop::IntImm::make(stride));
      if (k > 0) digit = loop::FloorMod::make(digit, loop::IntImm::make(w.extent));
      map[w.var.as<loop::Var>()] = digit;
    }
  }
  LoadReplacer replacer(buffer, producer_store.value);
  Expr value = loop::substitute(replacer.mutate(consumer_store.value), map);
  std::vector<Expr> indices;
  for (const Expr& index : consumer_store.indices) indices.push_back(loop::substitute(index, map));
  Block::Parts parts = producer.parts();
  parts.body = loop::Store::make(consumer_store.buffer, indices, value);
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
  return Block::make(std::move(parts));
}

}  // namespace

void reverse_compute_inline(PrimFunc& func, const std::string& block_name) {
  std::vector<Stmt> path = block_path(func, block_name, kPrimitive);
  const Block& consumer = *path.back().as<Block>();

  // 1. The consumer: one store of an expression that reads nothing it writes.
  require(kPrimitive, is_one_store(consumer));
  require(kPrimitive, is_not_reduction(consumer));
  require(kPrimitive, guards_only_its_domain(consumer));
  require(kPrimitive, reads_no_output(consumer));

  // 2. The producer writes one element of B per iteration; the consumer reads it back.
  std::vector<std::vector<Stmt>> paths = all_block_paths(func.body);
  const std::vector<Stmt>* producer_path = nullptr;
  require(kPrimitive, has_one_producer(paths, consumer, producer_path));
  const Block& producer = block_of(*producer_path);
  require(kPrimitive, producer_is_final(producer, consumer));
  require(kPrimitive, is_one_store(producer));
  require(kPrimitive, stores_whole_buffer(producer));
  const BufferNode* buffer = producer.body.as<loop::Store>()->buffer.get();
  require(kPrimitive, writes_one_buffer(producer));
  require(kPrimitive, is_not_parameter(func, producer, buffer));
  require(kPrimitive, loads_whole_buffer(consumer, buffer));
  require(kPrimitive, writes_one_buffer(consumer));

  // 3. Nothing runs between the two blocks that the fold would reorder.
  require(kPrimitive, nothing_between(paths, *producer_path, path, buffer));
  require(kPrimitive, nest_is_in_sequence(path));

  // 4. The producer computes the consumer's expression.
  Stmt new_producer = fold(producer, consumer, buffer);

  // 5. The consumer and B are gone.
  Stmt body = replace_stmt(func.body, path[nest_root_index(path)], Stmt());
  body = replace_stmt(body, producer_path->back(), new_producer);
  body = remove_allocation(body, buffer);
  require(kPrimitive, is_gone(body, buffer, "folding block " + block_name));
  commit_body(func, body, kPrimitive);
}

}  // namespace minic::schedule
