// The shared preconditions of the block primitives, each a named check with its refusal.
// Course module 4. What each check asks is in preconditions.h.
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#include "preconditions.h"

#include "block_edit.h"

#include "minic/ir/loop/printer.h"
#include "minic/support/error.h"

#include <fmt/format.h>

namespace minic::schedule {
namespace {

using loop::Block;

// The positions of the iteration variables `indices` are (each once, every one) when
// their extents are `buffer`'s shape; otherwise the refusal, worded with `verb` ("stores
// to", "reads") and `part` ("writes", "reads").
Refusal whole_buffer_indices(const Block& block, const std::vector<loop::Expr>& indices,
                             const BufferNode& buffer, const char* verb, const char* part) {
  std::optional<std::vector<size_t>> positions = iter_var_positions(block, indices);
  if (!positions || positions->size() != block.iter_vars.size()) {
    return fmt::format("block {} {} {} at indices that are not its iteration variables, each "
                       "once", block.name, verb, buffer.name);
  }
  for (size_t d = 0; d < positions->size(); ++d) {
    if (block.iter_vars[(*positions)[d]].extent != buffer.shape[d]) {
      return fmt::format("block {} {} only part of {} (dimension {})", block.name, part,
                         buffer.name, d);
    }
  }
  return std::nullopt;
}

}  // namespace

void require(const char* primitive, const Refusal& refusal) {
  if (refusal) fail("{}: {}", primitive, *refusal);
}

Refusal is_one_store(const Block& block) {
  if (block.body.as<loop::Store>()) return std::nullopt;
  return fmt::format("block {} is not one store of an expression (buffer[...] = expr)",
                     block.name);
}

Refusal is_not_reduction(const Block& block) {
  for (const loop::IterVar& iter : block.iter_vars) {
    if (iter.kind == loop::IterKind::reduce) {
      return fmt::format("block {} is a reduction (variable {})", block.name,
                         iter.var.as<loop::Var>()->name);
    }
  }
  if (block.init) return fmt::format("block {} is a reduction (it has an init)", block.name);
  return std::nullopt;
}

Refusal guards_only_its_domain(const Block& block) {
  for (const loop::Expr& condition : conjuncts(block.predicate)) {
    if (!is_domain_guard(block, condition)) {
      return fmt::format("block {} has the predicate {}, which is more than a guard of its "
                         "domain", block.name, loop::print_expr(condition));
    }
  }
  return std::nullopt;
}

Refusal reads_no_output(const Block& block) {
  BufferUse own = block_buffer_use(block);
  for (const BufferNode* written : own.writes) {
    if (own.reads_buffer(written)) {
      return fmt::format("block {} reads {}, the buffer it writes", block.name, written->name);
    }
  }
  return std::nullopt;
}

Refusal writes_one_buffer(const Block& block) {
  if (block_buffer_use(block).writes.size() == 1) return std::nullopt;
  return fmt::format("block {} writes more than one buffer", block.name);
}

Refusal allocates_nothing(const Block& block) {
  if (block.alloc_buffers.empty()) return std::nullopt;
  return fmt::format("block {} allocates buffers of its own", block.name);
}

Refusal stores_whole_buffer(const Block& block) {
  const loop::Store& store = *block.body.as<loop::Store>();
  return whole_buffer_indices(block, store.indices, *store.buffer, "stores to", "writes");
}

Refusal loads_whole_buffer(const Block& block, const BufferNode* buffer) {
  std::vector<loop::Access> loads =
      loop::accesses_of(loop::collect_accesses(block), buffer, loop::AccessKind::load);
  if (loads.empty()) return fmt::format("block {} does not read {}", block.name, buffer->name);
  for (const loop::Access& load : loads) {
    for (size_t d = 0; d < load.indices.size(); ++d) {
      if (!same_expr(load.indices[d], loads[0].indices[d])) {
        return fmt::format("block {} reads {} at different indices", block.name, buffer->name);
      }
    }
  }
  std::vector<bool> used(block.iter_vars.size(), false);
  for (size_t d = 0; d < loads[0].indices.size(); ++d) {
    std::optional<std::vector<IndexDigit>> digits = row_major_digits(block, loads[0].indices[d]);
    int64_t extent = 1;
    bool repeated = false;
    for (const IndexDigit& digit : digits.value_or(std::vector<IndexDigit>{})) {
      repeated = repeated || used[digit.position];
      used[digit.position] = true;
      extent *= block.iter_vars[digit.position].extent;
    }
    if (!digits || repeated) {
      return fmt::format("block {} reads {} at indices that are not its iteration variables "
                         "(or row-major combinations of them), each once", block.name,
                         buffer->name);
    }
    if (extent != buffer->shape[d]) {
      return fmt::format("block {} reads only part of {} (dimension {})", block.name,
                         buffer->name, d);
    }
  }
  if (std::find(used.begin(), used.end(), false) != used.end()) {
    return fmt::format("block {} reads {} at indices that leave out one of its iteration "
                       "variables", block.name, buffer->name);
  }
  return std::nullopt;
}

Refusal is_not_parameter(const loop::PrimFunc& func, const Block& block,
                         const BufferNode* buffer) {
  if (!is_param(func, buffer)) return std::nullopt;
  return fmt::format("block {} writes {}, a parameter of @{}; the function's outputs stay",
                     block.name, buffer->name, func.name);
}

Refusal is_only_writer(const loop::PrimFunc& func, const Block& block,
                       const BufferNode* buffer) {
  for (const std::vector<Stmt>& path : all_block_paths(func.body)) {
    const Block& other = *path.back().as<Block>();
    if (&other != &block && block_buffer_use(other).writes_buffer(buffer)) {
      return fmt::format("block {} is not the only writer of {}: block {} writes it too",
                         block.name, buffer->name, other.name);
    }
  }
  return std::nullopt;
}

Refusal no_writer_of_inputs(const Block& block, const std::vector<std::vector<Stmt>>& others,
                            const BufferNode* except, const std::string& consequence) {
  BufferUse own = block_buffer_use(block);
  for (const std::vector<Stmt>& path : others) {
    const Block& other = *path.back().as<Block>();
    if (&other == &block) continue;
    BufferUse use = block_buffer_use(other);
    for (const BufferNode* input : own.reads) {
      if (input != except && use.writes_buffer(input)) {
        return fmt::format("block {} writes {}, which block {} reads; {}", other.name,
                           input->name, block.name, consequence);
      }
    }
  }
  return std::nullopt;
}

Refusal is_gone(const Stmt& body, const BufferNode* buffer, const std::string& after) {
  if (!buffer_use(body).touches(buffer)) return std::nullopt;
  return fmt::format("{} is still used outside blocks after {}", buffer->name, after);
}

Refusal nest_is_in_sequence(const std::vector<Stmt>& path) {
  size_t root = nest_root_index(path);
  if (root > 0 && path[root - 1].as<loop::Seq>()) return std::nullopt;
  return fmt::format("the loops of block {} are not in a sequence with other statements",
                     path.back().as<loop::Block>()->name);
}

}  // namespace minic::schedule
