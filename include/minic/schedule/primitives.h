// Schedule primitives: the transformations a schedule applies to a kernel's loop nest.
//
// Course module 4. Each primitive is one function in one file of src/schedule/ (the file
// is named after it), whose comment shows the loop nest before and after. A primitive
// takes the function by reference and rewrites its body in place; it first checks its
// preconditions and, where one fails, throws an Error naming the primitive and the reason
// ("split: loop j has extent 100, which is not a multiple of 32; use a guard") and leaves
// the function as it was. A primitive never produces code that computes something else:
// every one is tested against the loop interpreter on random inputs.
//
// How primitives name things. A block is named by its name (unique in a function). A loop
// is named by its loop variable (the Var node of its For): `get_loops` returns them, and
// primitives that make new loops (split, fuse) return the new loop variables. Loop
// variables that a primitive removes are invalid afterwards.
//
// The Schedule class (schedule.h) wraps these functions, gives their results names and
// records every application in a trace that can be printed and replayed.
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#pragma once

#include "minic/ir/loop/stmt.h"

#include <optional>
#include <string>
#include <vector>

namespace minic::schedule {

using loop::Expr;
using loop::MemoryScope;
using loop::PrimFunc;

// --- queries --------------------------------------------------------------------------------

// The block named `name` (get_block.cpp); fails if there is none.
const loop::Block& get_block(const PrimFunc& func, const std::string& name);
// The names of every block, in program order.
std::vector<std::string> get_block_names(const PrimFunc& func);
// The loops around the block, outermost first: their loop variables (get_loops.cpp).
std::vector<Expr> get_loops(const PrimFunc& func, const std::string& block);

// --- loop transformations -------------------------------------------------------------------

// Splits `loop` into as many nested loops as `factors` has entries, outermost first. One
// factor may be -1: it is inferred as the ceiling of extent / product(others). If the
// product of the factors is not the extent, the blocks below get a predicate (a guard)
// `outer * inner + ... < extent`. Returns the new loop variables, outermost first.
std::vector<Expr> split(PrimFunc& func, const Expr& loop, const std::vector<int64_t>& factors);

// Puts the given loops (all in one nest, one above another, with nothing but single
// loops between the outermost and innermost of them) in the order given, keeping the
// loops not named where they are.
void reorder(PrimFunc& func, const std::vector<Expr>& loops);

// Fuses consecutive nested loops (each the only statement in the one above) into one loop
// over the product of their extents. Returns the fused loop's variable.
Expr fuse(PrimFunc& func, const std::vector<Expr>& loops);

// Sets a loop's kind. vectorize needs a constant extent; parallel and vectorize need a
// loop with no reduction block variable bound to it (a data race otherwise); bind needs
// a GPU axis name "blockIdx.x" .. "threadIdx.z".
void vectorize(PrimFunc& func, const Expr& loop);
void unroll(PrimFunc& func, const Expr& loop);
void parallel(PrimFunc& func, const Expr& loop);
void bind(PrimFunc& func, const Expr& loop, const std::string& thread_axis);

// Adds an annotation (a hint for later passes and code generation) to a loop or a block.
void annotate_loop(PrimFunc& func, const Expr& loop, const std::string& key, int64_t value);
void annotate_block(PrimFunc& func, const std::string& block, const std::string& key,
                    int64_t value);

// --- blocks and memory ----------------------------------------------------------------------

// A new block that copies the region of the `read_index`-th buffer the block reads into a
// new buffer of `scope`, placed just before the block's outermost loop; the block reads
// the copy. Returns the new block's name.
std::string cache_read(PrimFunc& func, const std::string& block, int read_index,
                       MemoryScope scope);
// The block writes into a new buffer of `scope`; a new block after it copies that buffer
// to the original. Returns the new block's name.
std::string cache_write(PrimFunc& func, const std::string& block, int write_index,
                        MemoryScope scope);

// Moves a producer block under `loop` of its consumer, computing only the region the
// consumer needs in one iteration of `loop`.
void compute_at(PrimFunc& func, const std::string& block, const Expr& loop);
// Moves a consumer block under `loop` of its producer.
void reverse_compute_at(PrimFunc& func, const std::string& block, const Expr& loop);
// Removes a producer block whose body is one store of an expression of its inputs,
// substituting that expression into its consumers.
void compute_inline(PrimFunc& func, const std::string& block);
// Removes a consumer block that reads one element of its producer's output per element
// it writes, folding its expression into the producer.
void reverse_compute_inline(PrimFunc& func, const std::string& block);

// Splits a reduction into partial results over `loop` (one of its reduction loops), in
// a new buffer of `scope` that a new block fills, and the block's reduction of those
// partials after it. The partials' buffer has B's axes with `loop`'s inserted at
// `factor_axis` (by default the last). Returns the new block's name.
std::string rfactor(PrimFunc& func, const std::string& block, const Expr& loop,
                    MemoryScope scope, std::optional<int> factor_axis = std::nullopt);

// Splits a reduction block's init out into a block of its own, placed just before
// `loop` (a loop above the block's first reduction loop). Returns the init block's name.
std::string decompose_reduction(PrimFunc& func, const std::string& block, const Expr& loop);

// Pads the stride of `axis` of the block's `write_index`-th written buffer (an
// allocated buffer) so that stride % factor == offset: avoids shared-memory bank
// conflicts and cache-set conflicts.
void storage_align(PrimFunc& func, const std::string& block, int write_index, int axis,
                   int64_t factor, int64_t offset);

}  // namespace minic::schedule
