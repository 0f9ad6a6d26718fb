// Exercise m4-tile, solved: the schedule primitive `tile`. Course module 4.
//
//   i0, j0, i1, j1 = tile(i, j, [8, 16])
//
// is split(i, [-1, 8]), split(j, [-1, 16]) and reorder(i0, j0, i1, j1), for a band of
// loops each directly inside the one before. It checks its arguments, then calls the
// primitives it is made of; Schedule::apply records the one trace line.
//
// Chapter: docs/module4-schedules.md#1-schedules-are-traces
#include "minic/ir/loop/visitor.h"
#include "minic/schedule/primitive_registry.h"
#include "minic/schedule/primitives.h"
#include "minic/support/error.h"

namespace minic::schedule {
namespace {

// The loop whose variable is `var`, or null.
class FindLoop : public loop::IRVisitor {
 public:
  explicit FindLoop(const Expr& var) : var_(var) {}
  const loop::For* found = nullptr;

  void visit_For(const loop::For* node) override {
    if (node->var.same_as(var_)) {
      found = node;
      return;
    }
    IRVisitor::visit_For(node);
  }

 private:
  Expr var_;
};

const loop::For* find_loop(const PrimFunc& func, const Expr& var) {
  FindLoop finder(var);
  finder.visit(func.body);
  return finder.found;
}

std::string name_of(const Expr& var) { return var.as<loop::Var>()->name; }

std::vector<PrimitiveResult> tile(PrimFunc& func, const InstructionArgs& args) {
  // Arguments: the loops of the band, outermost first, then one factor for each.
  args.expect_count(2, true);
  const size_t count = args.size() - 1;
  std::vector<Expr> band;
  for (size_t d = 0; d < count; ++d) band.push_back(args.loop(d));
  const std::vector<int64_t> factors = args.integers(count);
  if (factors.size() != count) {
    fail("tile: {} loop{} need{} {} factor{}, given {}", count, count == 1 ? "" : "s",
         count == 1 ? "s" : "", count, count == 1 ? "" : "s", factors.size());
  }
  for (int64_t factor : factors) {
    if (factor < 1) fail("tile: a factor must be positive, not {}", factor);
  }
  // Precondition: a band, each loop the whole body of the one before.
  const loop::For* outer = find_loop(func, band[0]);
  if (!outer) fail("tile: loop {} is not in the function", name_of(band[0]));
  for (size_t d = 1; d < count; ++d) {
    const auto* inner = outer->body.as<loop::For>();
    if (!inner || !inner->var.same_as(band[d])) {
      fail("tile: loop {} is not directly inside loop {}: tile takes a band of loops, "
           "each the whole body of the one before", name_of(band[d]), name_of(band[d - 1]));
    }
    outer = inner;
  }
  // The band's outer parts, then its inner parts.
  std::vector<Expr> outers, inners;
  for (size_t d = 0; d < count; ++d) {
    std::vector<Expr> parts = split(func, band[d], {-1, factors[d]});
    outers.push_back(parts[0]);
    inners.push_back(parts[1]);
  }
  std::vector<Expr> order = outers;
  order.insert(order.end(), inners.begin(), inners.end());
  if (count > 1) reorder(func, order);
  return {order.begin(), order.end()};
}

}  // namespace

MINIC_REGISTER_PRIMITIVE("tile", "tile(loop, loop, ..., [factors])", tile);

}  // namespace minic::schedule
