// Tests of the loop IR access analysis (include/minic/ir/loop/access.h): the accesses of
// a statement, the buffers it reads and writes, declared regions, and regions under given
// loop bounds. Course module 3 and 4.
#include "minic/ir/loop/access.h"

#include "minic/ir/loop/parser.h"
#include "minic/ir/loop/printer.h"

#include <catch2/catch.hpp>

namespace minic::loop {
namespace {

PrimFunc parse(const std::string& text) {
  return parse_loop_module(text, "access_test.mloop").functions.at(0);
}

// "load A[i * 2] in B under i" for each access, one a line.
std::string describe(const std::vector<Access>& accesses) {
  std::string text;
  for (const Access& access : accesses) {
    std::vector<std::string> indices;
    for (const Expr& index : access.indices) indices.push_back(print_expr(index));
    std::vector<std::string> loops;
    for (const LoopAround& around : access.loops) {
      loops.push_back(around.loop->var.as<Var>()->name);
    }
    text += fmt::format("{} {}[{}] in {} under {}\n",
                        access.kind == AccessKind::load ? "load" : "store", access.buffer->name,
                        fmt::join(indices, ", "), access.block ? access.block->name : "-",
                        fmt::join(loops, " "));
  }
  return text;
}

std::string print_region(const BufferRegion& region) {
  std::vector<std::string> ranges;
  for (const Range& range : region.region) {
    ranges.push_back(print_expr(range.min) + ":+" + print_expr(range.extent));
  }
  return fmt::format("{}[{}]", region.buffer->name, fmt::join(ranges, ", "));
}

std::string print_dim(const DimRange& range) {
  std::string base = range.base ? print_expr(range.base) + " + " : "";
  return fmt::format("{}[{}, {}]", base, range.lo, range.hi);
}

// The first loop of a function's body (its variable) and the For itself.
const For& first_loop(const PrimFunc& func) {
  const For* loop = func.body.as<For>();
  REQUIRE(loop != nullptr);
  return *loop;
}

// A scope of one fixed loop (the outermost of `func`), with the range it has.
LoopScope scope_of(const For& loop) {
  LoopScope scope;
  scope.vars.push_back(loop.var);
  int64_t extent = *as_const_int(loop.extent);
  scope.bounds[loop.var.as<Var>()] = {0, extent - 1};
  scope.exact.push_back(true);
  return scope;
}

const char* const kTiled = R"(func @tiled(A: f32[128,64], C: f32[128]) {
  for io in 0..4 {
    for ii in 0..32 {
      for k in 0..64 {
        block C(vi = spatial(128) io * 32 + ii, vk = reduce(64) k) {
          reads(A[vi, vk], C[vi]) writes(C[vi])
          init { C[vi] = 0.0 }
          C[vi] = C[vi] + A[vi, vk]
        }
      }
    }
  }
}
)";

}  // namespace

TEST_CASE("collect_accesses lists every load and store in program order", "[loop_access]") {
  PrimFunc func = parse(kTiled);
  CHECK(describe(collect_accesses(func.body)) ==
        "store C[vi] in C under io ii k\n"
        "store C[vi] in C under io ii k\n"
        "load C[vi] in C under io ii k\n"
        "load A[vi, vk] in C under io ii k\n");
}

TEST_CASE("collect_accesses replaces iteration variables by their bindings when asked",
          "[loop_access]") {
  PrimFunc func = parse(kTiled);
  std::vector<Access> accesses = collect_accesses(func.body, {.bindings = true});
  CHECK(describe(accesses) ==
        "store C[io * 32 + ii] in C under io ii k\n"
        "store C[io * 32 + ii] in C under io ii k\n"
        "load C[io * 32 + ii] in C under io ii k\n"
        "load A[io * 32 + ii, k] in C under io ii k\n");
  // Through nested blocks, and in the bounds of loops inside a block.
  PrimFunc nested = parse(R"(func @nested(A: f32[8,4], B: f32[8,4]) {
  for i in 0..8 {
    block outer(vo = spatial(8) i) {
      for j in 0..+vo % 4 + 1 {
        block inner(vu = spatial(8) vo, vj = spatial(4) j) {
          B[vu, vj] = A[vu, vj]
        }
      }
    }
  }
}
)");
  std::vector<Access> inner = collect_accesses(nested.body, {.bindings = true});
  CHECK(describe(inner) == "store B[i, j] in inner under i j\nload A[i, j] in inner under i j\n");
  CHECK(print_expr(inner[0].loops[1].extent) == "i % 4 + 1");
  CHECK(collect_accesses(nested.body)[0].indices[0].as<Var>()->name == "vu");
}

TEST_CASE("buffer_use and block_buffer_use name what is read and written", "[loop_access]") {
  PrimFunc func = parse(R"(func @f(A: f32[4], B: f32[4], C: f32[4]) {
  for i in 0..4 {
    block outer(v = spatial(4) i) {
      reads(A[v]) writes(C[v])
      block inner(w = spatial(4) v) {
        B[w] = A[w]
      }
      C[v] = B[v]
    }
  }
}
)");
  BufferUse all = buffer_use(func.body);
  auto names = [](const std::set<const BufferNode*>& buffers) {
    std::vector<std::string> result;
    for (const BufferNode* buffer : buffers) result.push_back(buffer->name);
    std::sort(result.begin(), result.end());
    return fmt::format("{}", fmt::join(result, " "));
  };
  CHECK(names(all.reads) == "A B");
  CHECK(names(all.writes) == "B C");
  // The outer block alone: its own loads and stores and its declared regions, not those
  // of the block nested in it (B is written only inside).
  const Block& outer = *func.body.as<For>()->body.as<Block>();
  BufferUse own = block_buffer_use(outer);
  CHECK(names(own.reads) == "A B");
  CHECK(names(own.writes) == "C");
  CHECK(own.touches(func.params[1].get()));
  CHECK_FALSE(own.writes_buffer(func.params[1].get()));
}

TEST_CASE("declared_regions: a point where every access agrees, else the whole dimension",
          "[loop_access]") {
  Buffer a = BufferNode::make("A", DType::f32, {8, 4});
  Buffer c = BufferNode::make("C", DType::f32, {8});
  Expr v = Var::make("v");
  Expr k = Var::make("k");
  VarBounds bounds = {{v.as<Var>(), {0, 7}}, {k.as<Var>(), {0, 3}}};
  // C[v] = A[v, k] + A[v, 3 - k] + A[v + 1, k]: dimension 0 differs (whole), and so
  // does dimension 1.
  Expr value = Load::make(a, {v, k}) + Load::make(a, {v, IntImm::make(3) - k});
  Stmt body = Store::make(c, {v}, value);
  DeclaredRegions regions = declared_regions(body, bounds);
  REQUIRE(regions.reads.size() == 1);
  CHECK(print_region(regions.reads[0]) == "A[v:+1, 0:+4]");
  REQUIRE(regions.writes.size() == 1);
  CHECK(print_region(regions.writes[0]) == "C[v:+1]");
  // An index that may leave the buffer gets the whole dimension.
  Stmt shifted = Store::make(c, {v}, Load::make(a, {v + 1, k}));
  CHECK(print_region(declared_regions(shifted, bounds).reads[0]) == "A[0:+8, k:+1]");
  CHECK(print_region(point_region(a, {v, k})) == "A[v:+1, k:+1]");
  CHECK(print_region(whole_region(a)) == "A[0:+8, 0:+4]");
}

TEST_CASE("region_of: the loads under a loop per iteration of it", "[loop_access]") {
  PrimFunc func = parse(kTiled);
  const For& io = first_loop(func);
  LoopScope fixed = scope_of(io);
  std::vector<Access> accesses = collect_accesses(io.body, {.bindings = true});
  RegionResult a = region_of(accesses, func.params[0].get(), AccessKind::load, fixed);
  REQUIRE(a.region);
  CHECK_FALSE(a.unbounded);
  REQUIRE(a.region->size() == 2);
  CHECK(print_dim((*a.region)[0]) == "io * 32 + [0, 31]");
  CHECK(print_dim((*a.region)[1]) == "[0, 63]");
  CHECK(print_expr((*a.region)[0].min()) == "io * 32");
  // The stores of C, and no store of A at all.
  RegionResult c = region_of(accesses, func.params[1].get(), AccessKind::store, fixed);
  REQUIRE(c.region);
  CHECK(print_dim((*c.region)[0]) == "io * 32 + [0, 31]");
  RegionResult none = region_of(accesses, func.params[0].get(), AccessKind::store, fixed);
  CHECK_FALSE(none.region);
  CHECK_FALSE(none.unbounded);
}

TEST_CASE("region_of: a non-linear index gives a superset, an unbounded one a reason",
          "[loop_access]") {
  PrimFunc func = parse(R"(func @f(A: f32[64], I: i64[8], C: f32[8]) {
  for io in 0..2 {
    for ii in 0..4 {
      block C(v = spatial(8) io * 4 + ii) {
        C[v] = A[v * v] + A[floordiv(v, 2) + 40] + A[I[v]]
      }
    }
  }
}
)");
  const For& io = first_loop(func);
  LoopScope fixed = scope_of(io);
  std::vector<Access> accesses = collect_accesses(io.body, {.bindings = true});
  // v * v is not linear: its bound over every loop, [0, 49]; the floordiv, [40, 43];
  // united with different bases: [0, 49] holds both (and every element touched).
  std::vector<Access> without_gather;
  for (const Access& access : accesses) {
    if (access.indices[0].as<Load>() == nullptr) without_gather.push_back(access);
  }
  RegionResult a = region_of(without_gather, func.params[0].get(), AccessKind::load, fixed);
  REQUIRE(a.region);
  CHECK(print_dim((*a.region)[0]) == "[0, 49]");
  for (int64_t io_value = 0; io_value < 2; ++io_value) {
    for (int64_t ii = 0; ii < 4; ++ii) {
      int64_t v = io_value * 4 + ii;
      CHECK(v * v <= (*a.region)[0].hi);
      CHECK(v / 2 + 40 <= (*a.region)[0].hi);
    }
  }
  // A[I[v]]: a load in an index has no bound.
  RegionResult gather = region_of(accesses, func.params[0].get(), AccessKind::load, fixed);
  CHECK_FALSE(gather.region);
  REQUIRE(gather.unbounded);
  CHECK(*gather.unbounded == "cannot bound the index I[io * 4 + ii] of buffer A");
}

TEST_CASE("unite and covers: regions of several accesses and iterations", "[loop_access]") {
  PrimFunc func = parse(kTiled);
  LoopScope fixed = scope_of(first_loop(func));
  Expr io = fixed.vars[0];
  DimRange tile{io * 32, 0, 31};
  DimRange shifted{io * 32, 1, 32};
  CHECK(print_dim(unite(tile, shifted, fixed)) == "io * 32 + [0, 32]");
  // Different bases: the constant bounds over every value of io.
  CHECK(print_dim(unite(tile, DimRange{Expr(), 0, 3}, fixed)) == "[0, 127]");
  CHECK(overall_bound(tile, fixed) == IntBound{0, 127});
  // The four tiles cover all 128 rows; tiles of 16 leave gaps.
  CHECK(covers({tile}, {128}, fixed));
  CHECK_FALSE(covers({DimRange{io * 32, 0, 15}}, {128}, fixed));
}

TEST_CASE("allocated_buffers finds Allocate statements and block allocations",
          "[loop_access]") {
  PrimFunc func = parse(R"(func @f(A: f32[4], C: f32[4]) {
  alloc T: f32[4] {
    for i in 0..4 {
      block C(v = spatial(4) i) {
        alloc_buffer U: f32[1]
        U[0] = A[v]
        T[v] = U[0]
        C[v] = T[v]
      }
    }
  }
}
)");
  std::vector<std::string> names;
  for (const BufferNode* buffer : allocated_buffers(func.body)) names.push_back(buffer->name);
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"T", "U"});
}

}  // namespace minic::loop
