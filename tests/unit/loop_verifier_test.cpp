// Unit tests for the loop IR verifier: each rule, broken once. Course module 3.
#include "loop_test_util.h"
#include "minic/ir/loop/verifier.h"

#include <catch2/catch.hpp>

using namespace minic;
using namespace minic::loop;
using namespace minic::loop::test;

namespace {

Buffer A = BufferNode::make("A", DType::f32, {16});
Buffer B = BufferNode::make("B", DType::f32, {16});

PrimFunc func(Stmt body) { return {"f", {A, B}, std::move(body)}; }

// block name(vi = spatial(extent) binding) { B[vi] = A[vi] }, with options.
Stmt copy_block(const Expr& vi, int64_t extent, const Expr& binding, Stmt body = Stmt(),
                Stmt init = Stmt(), IterKind kind = IterKind::spatial) {
  if (!body) body = Store::make(B, {vi}, Load::make(A, {vi}));
  return Block::make({.name = "copy",
                      .iter_vars = {{vi, extent, kind, binding}},
                      .init = std::move(init),
                      .body = std::move(body)});
}

}  // namespace

TEST_CASE("the verifier accepts well-formed functions", "[loop_verifier]") {
  Expr i = Var::make("i"), vi = Var::make("vi");
  REQUIRE_NOTHROW(verify_func(func(for_loop(i, 16, copy_block(vi, 16, i)))));
  // A split with a guard: the binding reaches 19, the predicate keeps it below 16.
  Expr i0 = Var::make("i0"), i1 = Var::make("i1");
  Stmt guarded = Block::make({.name = "copy",
                              .iter_vars = {{vi, 16, IterKind::spatial, i0 * 5 + i1}},
                              .predicate = LT::make(i0 * 5 + i1, i64(16)),
                              .body = Store::make(B, {vi}, Load::make(A, {vi}))});
  REQUIRE_NOTHROW(verify_func(func(for_loop(i0, 4, for_loop(i1, 5, guarded)))));
  // The same loop variable in two sibling loops is fine.
  Stmt twice = Seq::make({for_loop(i, 16, Store::make(B, {i}, f32(0.0))),
                          for_loop(i, 16, Store::make(A, {i}, f32(0.0)))});
  REQUIRE_NOTHROW(verify_func(func(twice)));
}

TEST_CASE("the verifier rejects undefined and out-of-scope variables", "[loop_verifier]") {
  Expr i = Var::make("i"), j = Var::make("j"), vi = Var::make("vi");
  REQUIRE_THROWS_WITH(verify_func(func(for_loop(i, 16, Store::make(B, {j}, f32(1.0))))),
                      Catch::Contains("invalid loop IR in @f: variable j is not defined here"));
  // The block body uses the loop variable i instead of its iteration variable vi.
  Stmt leaky = copy_block(vi, 16, i, Store::make(B, {i}, Load::make(A, {vi})));
  REQUIRE_THROWS_WITH(verify_func(func(for_loop(i, 16, leaky))),
                      Catch::Contains("@f, block copy: variable i is used inside the block"));
  // A loop variable defined again inside its own loop.
  Stmt nested = for_loop(i, 4, for_loop(i, 4, Store::make(B, {i}, f32(1.0))));
  REQUIRE_THROWS_WITH(verify_func(func(nested)),
                      Catch::Contains("variable i is defined again"));
}

TEST_CASE("the verifier checks buffers and constant indices", "[loop_verifier]") {
  Expr i = Var::make("i");
  Buffer T = BufferNode::make("T", DType::f32, {16}, MemoryScope::local);
  REQUIRE_THROWS_WITH(verify_func(func(for_loop(i, 16, Store::make(T, {i}, f32(1.0))))),
                      Catch::Contains("store to buffer T, which is neither a parameter"));
  Stmt fill = for_loop(i, 16, Store::make(T, {i}, f32(1.0)));
  REQUIRE_NOTHROW(verify_func(func(Allocate::make(T, fill))));
  REQUIRE_THROWS_WITH(verify_func(func(Allocate::make(A, Store::make(A, {i64(0)}, f32(1.0))))),
                      Catch::Contains("buffer A is allocated again"));
  REQUIRE_THROWS_WITH(verify_func(func(Store::make(B, {i64(16)}, f32(1.0)))),
                      Catch::Contains("store to B: index 16 of dimension 0 is outside [0, 16)"));
  Expr ramp = Ramp::make(i64(12), i64(1), 8);
  REQUIRE_THROWS_WITH(verify_func(func(Store::make(B, {ramp}, Load::make(A, {ramp})))),
                      Catch::Contains("index 19"));
  // A load that runs only when a Select picks it may have a constant index out of range:
  // Concat's second input at v - 1 under v < 1, once v is the constant 0.
  Expr v = i64(0);
  Expr picked = Select::make(LT::make(v, i64(1)), Load::make(A, {v}),
                             Load::make(A, {Sub::make(v, i64(1))}));
  REQUIRE_NOTHROW(verify_func(func(Store::make(B, {i64(0)}, picked))));
  REQUIRE_THROWS_WITH(verify_func(func(Store::make(B, {i64(0)}, Load::make(A, {i64(-1)})))),
                      Catch::Contains("load from A: index -1 of dimension 0 is outside [0, 16)"));
}

TEST_CASE("the verifier checks bindings against iteration extents", "[loop_verifier]") {
  Expr i = Var::make("i"), vi = Var::make("vi");
  REQUIRE_THROWS_WITH(verify_func(func(for_loop(i, 8, copy_block(vi, 16, i)))),
                      Catch::Contains("block copy: iteration variable vi of extent 16 is bound "
                                      "to a loop over 0..8"));
  Expr i0 = Var::make("i0"), i1 = Var::make("i1");
  Stmt split = for_loop(i0, 4, for_loop(i1, 5, copy_block(vi, 16, i0 * 5 + i1)));
  REQUIRE_THROWS_WITH(verify_func(func(split)),
                      Catch::Contains("bound to values in [0, 19] (a binding beyond the extent "
                                      "needs a predicate)"));
  // An init needs a reduction variable.
  Stmt init = Store::make(B, {vi}, f32(0.0));
  REQUIRE_THROWS_WITH(verify_func(func(for_loop(i, 16, copy_block(vi, 16, i, Stmt(), init)))),
                      Catch::Contains("an init needs a reduction iteration variable"));
  REQUIRE_NOTHROW(verify_func(
      func(for_loop(i, 16, copy_block(vi, 16, i, Stmt(), init, IterKind::reduce)))));
}

TEST_CASE("the verifier checks loop kinds, thread axes and barriers", "[loop_verifier]") {
  Expr i = Var::make("i"), n = Var::make("n"), tx = Var::make("tx");
  Stmt store = Store::make(B, {i}, f32(1.0));
  Stmt vectorized = for_loop(n, 2, For::make(i, i64(0), n * 8, ForKind::vectorized, store));
  REQUIRE_THROWS_WITH(verify_func(func(vectorized)),
                      Catch::Contains("vectorized loop i needs a constant extent"));
  REQUIRE_THROWS_WITH(verify_func(func(bind(i, 16, "threadIdx.w", store))),
                      Catch::Contains("bound to 'threadIdx.w'"));
  Stmt inverted = bind(tx, 4, "threadIdx.x", bind(i, 4, "blockIdx.x", store));
  REQUIRE_THROWS_WITH(verify_func(func(inverted)),
                      Catch::Contains("over blockIdx.x is inside a threadIdx loop"));
  REQUIRE_THROWS_WITH(verify_func(func(for_loop(i, 16, Seq::make({store, barrier()})))),
                      Catch::Contains("a barrier outside the threadIdx loops"));
  REQUIRE_THROWS_WITH(verify_func(func(bind(i, 16, "blockIdx.x", Seq::make({store, barrier()})))),
                      Catch::Contains("a barrier outside the threadIdx loops"));
  REQUIRE_NOTHROW(verify_func(func(bind(i, 16, "threadIdx.x", Seq::make({store, barrier()})))));
}
