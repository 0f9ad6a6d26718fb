// flatten-buffers: n-dimensional accesses → one index through the strides. Course module 4
// (the pass is documented in include/minic/passes/loop/flatten_buffers.h).
//
// Invariant: the same elements are read and written in the same order; the function
// verifies.
//
// Algorithm:
//   1. Make the flat twin of every parameter: same name, dtype and scope, shape [size],
//      stride 1. Buffers already flat keep their node.
//   2. Walk the body (an IRMutator): an Allocate gets the flat twin of its buffer; a Load
//      or Store gets its buffer's twin and the index sum(index[d] * stride[d]); a Block is
//      an Error.
//   3. Simplify each flat index under no bounds (only to fold the strides in: `i * 8 + j`,
//      not `i * 8 + j * 1 + 0`).
//
//   A[i, j] of A: f32[4,8]   →   A[i * 8 + j] of A: f32[32]
//   A[i, ramp(j, 1, 4)]      →   A[ramp(i * 8 + j, 1, 4)]
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#include "minic/passes/loop/flatten_buffers.h"
#include "minic/passes/pass_registry.h"

#include "minic/ir/loop/visitor.h"
#include "minic/passes/loop/simplify.h"
#include "minic/support/error.h"

#include <unordered_map>

namespace minic::loop {
namespace {

// One past the furthest element the strides reach (0 for an empty buffer).
int64_t flat_size(const BufferNode& buffer) {
  int64_t last = 0;
  for (size_t d = 0; d < buffer.shape.size(); ++d) {
    if (buffer.shape[d] == 0) return 0;
    last += (buffer.shape[d] - 1) * buffer.strides[d];
  }
  return last + 1;
}

bool is_flat(const BufferNode& buffer) {
  return buffer.rank() == 1 && buffer.strides[0] == 1;
}

// The scalar part of an index (a Ramp's base, a Broadcast's value) and its step per lane
// (the Ramp's stride, 0 for a scalar or a Broadcast). Other vector indices have no such
// form (nullopt).
struct LinearIndex {
  Expr base;
  Expr step;
  int lanes = 1;
};

std::optional<LinearIndex> linear_index(const Expr& index) {
  if (!index.type().is_vector()) return LinearIndex{index, IntImm::make(0), 1};
  if (const Ramp* ramp = index.as<Ramp>()) {
    return LinearIndex{ramp->base, ramp->stride, ramp->lanes};
  }
  if (const Broadcast* broadcast = index.as<Broadcast>()) {
    return LinearIndex{broadcast->value, IntImm::make(0), broadcast->lanes};
  }
  return std::nullopt;
}

class Flattener : public IRMutator {
 public:
  Flattener(const std::string& func_name, const std::vector<Buffer>& params)
      : func_name_(func_name) {
    for (const Buffer& param : params) flat_params.push_back(twin(param));
  }

  std::vector<Buffer> flat_params;

  Expr mutate_Load(const Load* node, const Expr& self) override {
    bool changed = false;
    std::vector<Expr> indices = mutate_all(node->indices, changed);
    return Load::make(twin(node->buffer), {flat_index(*node->buffer, indices)});
  }

  Stmt mutate_Store(const Store* node, const Stmt& self) override {
    bool changed = false;
    std::vector<Expr> indices = mutate_all(node->indices, changed);
    Expr value = mutate(node->value);
    return Store::make(twin(node->buffer), {flat_index(*node->buffer, indices)}, value);
  }

  Stmt mutate_Allocate(const Allocate* node, const Stmt& self) override {
    return Allocate::make(twin(node->buffer), mutate(node->body));
  }

  Stmt mutate_Block(const Block* node, const Stmt& self) override {
    fail("flatten-buffers: function @{} still has block {}; run lower-blocks first", func_name_,
         node->name);
  }

 private:
  Buffer twin(const Buffer& buffer) {
    if (is_flat(*buffer)) return buffer;
    auto [it, inserted] = twins_.try_emplace(buffer.get());
    if (inserted) {
      it->second = BufferNode::make(buffer->name, buffer->dtype, {flat_size(*buffer)},
                                    buffer->scope);
    }
    return it->second;
  }

  // sum(index[d] * stride[d]): a scalar, or a Ramp when one index is a vector.
  Expr flat_index(const BufferNode& buffer, const std::vector<Expr>& indices) {
    if (is_flat(buffer)) return indices[0];
    Expr base = IntImm::make(0);
    Expr step = IntImm::make(0);
    int lanes = 1;
    std::vector<Expr> vector_terms;
    for (size_t d = 0; d < indices.size(); ++d) {
      Expr stride = IntImm::make(buffer.strides[d]);
      std::optional<LinearIndex> part = linear_index(indices[d]);
      if (!part) {
        // A vector index of another form: add it lane by lane.
        vector_terms.push_back(indices[d] * Broadcast::make(stride, indices[d].type().lanes));
        continue;
      }
      base = base + part->base * stride;
      step = step + part->step * stride;
      lanes = std::max(lanes, part->lanes);
    }
    base = simplify_expr(base, {});
    step = simplify_expr(step, {});
    int vector_lanes = vector_terms.empty() ? lanes : vector_terms[0].type().lanes;
    if (vector_lanes == 1) return base;
    Expr flat = Ramp::make(base, step, vector_lanes);
    for (const Expr& term : vector_terms) flat = flat + term;
    return flat;
  }

  std::string func_name_;
  std::unordered_map<const BufferNode*, Buffer> twins_;
};

}  // namespace

PrimFunc flatten_buffers(PrimFunc func) {
  Flattener flattener(func.name, func.params);
  func.body = flattener.mutate(func.body);
  func.params = flattener.flat_params;
  return func;
}

MINIC_REGISTER_LOOP_PASS("flatten-buffers", flatten_buffers,
                         "make every buffer one-dimensional, indexed through its strides");

}  // namespace minic::loop
