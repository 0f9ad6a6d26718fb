// Unit tests for the loop IR nodes: invariants checked on construction, the visitor and
// the copy-on-change mutator. Course module 3.
#include "minic/ir/loop/visitor.h"

#include <catch2/catch.hpp>

using namespace minic;
using namespace minic::loop;

namespace {

// The matmul of the course as a block inside three loops.
Stmt matmul_nest(const Buffer& A, const Buffer& B, const Buffer& C) {
  Expr i = Var::make("i"), j = Var::make("j"), k = Var::make("k");
  Expr vi = Var::make("vi"), vj = Var::make("vj"), vk = Var::make("vk");
  Expr zero = IntImm::make(0);
  Expr product = Load::make(A, {vi, vk}) * Load::make(B, {vk, vj});
  Stmt update = Store::make(C, {vi, vj}, Load::make(C, {vi, vj}) + product);
  Stmt block = Block::make({.name = "C",
                            .iter_vars = {{vi, 128, IterKind::spatial, i},
                                          {vj, 256, IterKind::spatial, j},
                                          {vk, 64, IterKind::reduce, k}},
                            .init = Store::make(C, {vi, vj}, FloatImm::make(0.0)),
                            .body = update});
  Stmt loop_k = For::make(k, zero, IntImm::make(64), ForKind::serial, block);
  Stmt loop_j = For::make(j, zero, IntImm::make(256), ForKind::serial, loop_k);
  return For::make(i, zero, IntImm::make(128), ForKind::serial, loop_j);
}

class CountLoads : public IRVisitor {
 public:
  int loads = 0;
  void visit_Load(const Load* node) override {
    ++loads;
    IRVisitor::visit_Load(node);
  }
};

// Replaces one variable by an expression.
class Substitute : public IRMutator {
 public:
  Substitute(Expr from, Expr to) : from_(std::move(from)), to_(std::move(to)) {}
  Expr mutate_Var(const Var* node, const Expr& self) override {
    return self.same_as(from_) ? to_ : self;
  }

 private:
  Expr from_;
  Expr to_;
};

}  // namespace

TEST_CASE("loop IR nodes check their invariants", "[loop_ir]") {
  Buffer A = BufferNode::make("A", DType::f32, {4, 8});
  Expr i = Var::make("i");
  REQUIRE_THROWS_WITH(Load::make(A, {i}), Catch::Contains("rank 2"));
  REQUIRE_THROWS_WITH(Add::make(i, FloatImm::make(1.0)), Catch::Contains("Add of i64 and f32"));
  REQUIRE_THROWS_WITH(Store::make(A, {i, i}, IntImm::make(1)), Catch::Contains("Store of i64"));
  REQUIRE_THROWS_WITH(Call::make(DataType::f32(), "frobnicate", {}),
                      Catch::Contains("unknown intrinsic"));
  Expr ramp = Ramp::make(i, IntImm::make(1), 8);
  Expr vector_load = Load::make(A, {Broadcast::make(i, 8), ramp});
  REQUIRE(vector_load.type() == DataType::f32(8));
  REQUIRE(LT::make(i, IntImm::make(3)).type() == DataType::boolean());
  REQUIRE(type_name(vector_load.type()) == "f32x8");
}

TEST_CASE("the visitor reaches every load of a block", "[loop_ir]") {
  Buffer A = BufferNode::make("A", DType::f32, {128, 64});
  Buffer B = BufferNode::make("B", DType::f32, {64, 256});
  Buffer C = BufferNode::make("C", DType::f32, {128, 256});
  CountLoads counter;
  counter.visit(matmul_nest(A, B, C));
  REQUIRE(counter.loads == 3);
}

TEST_CASE("the mutator copies only what changes", "[loop_ir]") {
  Buffer A = BufferNode::make("A", DType::f32, {16});
  Expr i = Var::make("i"), j = Var::make("j");
  Expr untouched = Load::make(A, {j});
  Expr sum = Load::make(A, {i}) + untouched;
  Expr rewritten = Substitute(i, j * 2).mutate(sum);
  REQUIRE_FALSE(rewritten.same_as(sum));
  const Add* add = rewritten.as<Add>();
  REQUIRE(add);
  REQUIRE(add->b.same_as(untouched));
  REQUIRE(add->a.as<Load>()->indices[0].as<Mul>());
  // Nothing to replace: the very same expression comes back.
  REQUIRE(Substitute(Var::make("other"), j).mutate(sum).same_as(sum));
}
