// The preconditions the block primitives share (compute_inline, reverse_compute_inline,
// compute_at, reverse_compute_at, decompose_reduction, cache_read, cache_write): each a
// named check that returns the refusal a primitive gives when it fails. Private to
// src/schedule.
//
// Course module 4 (docs/module4-schedules.md#2-the-primitives). A primitive that moves or
// folds a block must prove first that the result computes the same; each step of that
// proof is one check here, and a primitive's first step reads as the list of them:
//
//   require(kPrimitive, is_one_store(block));
//   require(kPrimitive, is_not_reduction(block));
//   require(kPrimitive, is_only_writer(func, block, buffer));
//
// A failed check says why in a sentence that names the blocks and buffers ("block C is not
// the only writer of B: block D writes it too"); require() puts the primitive's name
// before it and throws. The checks read the loads and stores a block really makes (its
// init and body, through the access analysis of include/minic/ir/loop/access.h) as well
// as its declared regions, so a stale region never makes a primitive produce wrong code.
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#pragma once

#include "minic/ir/loop/stmt.h"

#include <optional>
#include <string>
#include <vector>

namespace minic::schedule {

// Why a precondition fails, as the sentence after "<primitive>: "; nullopt where it holds.
using Refusal = std::optional<std::string>;

// Fails with "<primitive>: <refusal>" where there is a refusal.
void require(const char* primitive, const Refusal& refusal);

// --- the shape of one block --------------------------------------------------------------------

// Its body is one store, B[...] = expr.
// "block B is not one store of an expression (buffer[...] = expr)"
Refusal is_one_store(const loop::Block& block);

// It has no reduction variable and no init.
// "block T is a reduction (variable r)", "block T is a reduction (it has an init)"
Refusal is_not_reduction(const loop::Block& block);

// Its predicate, if any, only guards its domain (is_domain_guard of block_edit.h).
// "block B has the predicate i < 2, which is more than a guard of its domain"
Refusal guards_only_its_domain(const loop::Block& block);

// It reads none of the buffers it writes.
// "block B reads B, the buffer it writes"
Refusal reads_no_output(const loop::Block& block);

// It writes one buffer (its stores and declared write regions together).
// "block B writes more than one buffer"
Refusal writes_one_buffer(const loop::Block& block);

// It allocates no buffer of its own.
// "block B allocates buffers of its own"
Refusal allocates_nothing(const loop::Block& block);

// Its body (one store, is_one_store) writes B at its iteration variables, every one
// once, whose extents are B's shape: one element per iteration, all of B.
// "block B stores to B at indices that are not its iteration variables, each once",
// "block B writes only part of B (dimension 0)"
Refusal stores_whole_buffer(const loop::Block& block);

// Every load of `buffer` in the block is at the same indices, each an iteration variable
// or a row-major combination of some (w2 * 56 + w3, w3 of extent 56: row_major_digits),
// every variable once, the extents they span the buffer's shape.
// "block C reads B at different indices", "block C reads B at indices that are not its
// iteration variables (or row-major combinations of them), each once", "block C reads
// only part of B (dimension 1)", "block C reads B at indices that leave out one of its
// iteration variables"
Refusal loads_whole_buffer(const loop::Block& block, const loop::BufferNode* buffer);

// --- the buffer in the function ----------------------------------------------------------------

// `buffer`, which `block` writes, is not a parameter of the function.
// "block B writes B, a parameter of @f; the function's outputs stay"
Refusal is_not_parameter(const loop::PrimFunc& func, const loop::Block& block,
                         const loop::BufferNode* buffer);

// No other block of the function writes `buffer`.
// "block B is not the only writer of B: block B2 writes it too"
Refusal is_only_writer(const loop::PrimFunc& func, const loop::Block& block,
                       const loop::BufferNode* buffer);

// Among `others` (paths to blocks), none writes a buffer `block` reads, other than
// `except` (which may be null). The refusal ends with `consequence`.
// "block W writes A, which block B reads; <consequence>"
Refusal no_writer_of_inputs(const loop::Block& block,
                            const std::vector<std::vector<loop::Stmt>>& others,
                            const loop::BufferNode* except, const std::string& consequence);

// Nothing in `body` (the result of a primitive that removed `buffer`) still uses it.
// "B is still used outside blocks after inlining block B"
Refusal is_gone(const loop::Stmt& body, const loop::BufferNode* buffer, const std::string& after);

// --- where the block sits ----------------------------------------------------------------------

// The loops that hold the block alone (path from block_path) sit in a sequence with other
// statements, so that the nest can be removed.
// "the loops of block B are not in a sequence with other statements"
Refusal nest_is_in_sequence(const std::vector<loop::Stmt>& path);

}  // namespace minic::schedule
