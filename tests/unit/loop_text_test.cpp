// Unit tests for the loop IR text form: printing, parsing, and print∘parse round trips
// over every node kind. Course module 3.
#include "minic/ir/loop/parser.h"
#include "minic/ir/loop/printer.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using namespace minic;
using namespace minic::loop;

namespace {

Expr i64(int64_t value) { return IntImm::make(value); }

// print(parse(print(m))) must equal print(m); returns the printed text.
std::string check_round_trip(const LoopModule& module) {
  std::string text = print_module(module);
  LoopModule parsed = parse_loop_module(text, "test.mloop");
  REQUIRE(print_module(parsed) == text);
  return text;
}

std::string check_round_trip(const PrimFunc& func) { return check_round_trip(LoopModule{{func}}); }

PrimFunc matmul() {
  Buffer A = BufferNode::make("A", DType::f32, {128, 64});
  Buffer B = BufferNode::make("B", DType::f32, {64, 256});
  Buffer C = BufferNode::make("C", DType::f32, {128, 256});
  Expr i = Var::make("i"), j = Var::make("j"), k = Var::make("k");
  Expr vi = Var::make("vi"), vj = Var::make("vj"), vk = Var::make("vk");
  auto point = [](const Buffer& buffer, Expr a, Expr b) {
    return BufferRegion{buffer, {{a, i64(1)}, {b, i64(1)}}};
  };
  Stmt update = Store::make(
      C, {vi, vj}, Load::make(C, {vi, vj}) + Load::make(A, {vi, vk}) * Load::make(B, {vk, vj}));
  Stmt block = Block::make({.name = "C",
                            .iter_vars = {{vi, 128, IterKind::spatial, i},
                                          {vj, 256, IterKind::spatial, j},
                                          {vk, 64, IterKind::reduce, k}},
                            .reads = {point(A, vi, vk), point(B, vk, vj), point(C, vi, vj)},
                            .writes = {point(C, vi, vj)},
                            .init = Store::make(C, {vi, vj}, FloatImm::make(0.0)),
                            .body = update});
  Stmt loop_k = For::make(k, i64(0), i64(64), ForKind::serial, block);
  Stmt loop_j = For::make(j, i64(0), i64(256), ForKind::serial, loop_k);
  return {"matmul", {A, B, C}, For::make(i, i64(0), i64(128), ForKind::serial, loop_j)};
}

// A GPU kernel: blocks and threads, a shared-memory stage, a barrier, a guarded block
// with a local buffer, a multi-statement init and annotations.
PrimFunc gpu_kernel() {
  Buffer X = BufferNode::make("X", DType::f32, {1024});
  Buffer Y = BufferNode::make_strided("Y", DType::f32, {32, 32}, {33, 1});
  Buffer S = BufferNode::make("S", DType::f32, {32}, MemoryScope::shared);
  Buffer T = BufferNode::make("T", DType::f16, {4}, MemoryScope::local);
  Expr bx = Var::make("bx"), tx = Var::make("tx"), v = Var::make("v"), r = Var::make("r");
  Expr global_index = bx * 32 + tx;
  Stmt stage = Store::make(S, {tx}, Load::make(X, {global_index}));
  Stmt barrier = Evaluate::make(Call::make(DataType::int64(), "barrier", {}));
  Stmt init = Seq::make({Store::make(T, {i64(0)}, FloatImm::make(0.0, {DType::f16, 1})),
                         Store::make(Y, {v, i64(0)}, FloatImm::make(-0.0))});
  Expr cast = Cast::make(DataType::f32(), Load::make(T, {i64(0)}));
  Stmt body = Store::make(Y, {v, r}, Load::make(S, {r}) + cast);
  Stmt block =
      Block::make({.name = "stage out",
                   .iter_vars = {{v, 32, IterKind::spatial, bx}, {r, 32, IterKind::reduce, tx}},
                   .reads = {{S, {{i64(0), i64(32)}}}, {X, {{bx * 32, i64(32)}}}},
                   .writes = {{Y, {{v, i64(1)}, {i64(0), i64(32)}}}},
                   .alloc_buffers = {T},
                   .predicate = LT::make(global_index, i64(1000)),
                   .init = init,
                   .body = body,
                   .annotations = {{"meta_schedule.tiling", 2}}});
  Stmt threads = For::make(tx, i64(0), i64(32), ForKind::thread_binding,
                           Seq::make({stage, barrier, block}), "threadIdx.x");
  Stmt alloc = Allocate::make(S, threads);
  return {
      "gpu", {X, Y}, For::make(bx, i64(0), i64(32), ForKind::thread_binding, alloc, "blockIdx.x")};
}

// Every expression kind and every other loop kind, in one function.
PrimFunc every_expression() {
  Buffer F = BufferNode::make("F", DType::f32, {64});
  Buffer D = BufferNode::make("D", DType::f64, {8});
  Buffer I = BufferNode::make("I", DType::i32, {8});
  Buffer P = BufferNode::make("P", DType::boolean, {8});
  Expr i = Var::make("i"), j = Var::make("j"), k = Var::make("k"), m = Var::make("m");
  Expr n = Var::make("n");
  Expr f = Load::make(F, {i});
  Expr x = Load::make(I, {i});
  Expr i32_one = IntImm::make(1, {DType::i32, 1});
  std::vector<Stmt> stmts = {
      Store::make(F, {i},
                  Call::make(DataType::f32(), "exp", {f}) +
                      Call::make(DataType::f32(), "pow", {f, FloatImm::make(1.5)})),
      Store::make(D, {i},
                  Div::make(Load::make(D, {i}), FloatImm::make(0.1, {DType::f64, 1})) -
                      Cast::make({DType::f64, 1}, f)),
      Store::make(I, {i}, Mod::make(Div::make(x, i32_one), x) * (x - (x - i32_one))),
      Store::make(I, {i}, Min::make(x, Max::make(x, IntImm::make(-7, {DType::i32, 1})))),
      Store::make(F, {FloorDiv::make(i, i64(3)) + FloorMod::make(i, i64(-3))},
                  Select::make(Not::make(LT::make(i, m)), f, FloatImm::make(2.5))),
      Store::make(P, {i},
                  Or::make(And::make(EQ::make(i, m), NE::make(i, k)),
                           And::make(Or::make(LE::make(i, m), GT::make(i, k)), GE::make(m, k)))),
      Store::make(P, {m}, EQ::make(LT::make(i, m), IntImm::make(1, DataType::boolean()))),
      Evaluate::make(f * FloatImm::make(std::numeric_limits<double>::infinity())),
      Evaluate::make(Call::make(DataType::f32(), "barrier", {})),
      IfThenElse::make(LT::make(i, i64(4)), Store::make(F, {i}, FloatImm::make(1e-45)),
                       Store::make(F, {i}, FloatImm::make(std::nan("")))),
      IfThenElse::make(
          Not::make(Not::make(GT::make(i, i64(60)))),
          Store::make(F, {i}, FloatImm::make(-std::numeric_limits<double>::infinity()))),
  };
  Expr ramp = Ramp::make(j * 8, i64(1), 8);
  Stmt vector_store = Store::make(
      F, {ramp},
      Load::make(F, {ramp}) * Broadcast::make(FloatImm::make(3.0), 8) +
          Cast::make(DataType::f32(8), Broadcast::make(IntImm::make(2, {DType::i32, 1}), 8)));
  Stmt vectorized = For::make(j, i64(0), i64(8), ForKind::vectorized, vector_store);
  Stmt inner = For::make(m, i64(0), i64(2), ForKind::serial, Seq::make(stmts));
  Stmt unrolled = For::make(k, i64(-2), i64(2), ForKind::unrolled, inner, "",
                            {{"unroll_explicit", 1}, {"max-step", -4}});
  Stmt odd_range =
      For::make(n, i * 2, i64(3), ForKind::serial, Store::make(F, {n}, FloatImm::make(0.5)));
  Stmt body =
      Seq::make({For::make(i, i64(0), i64(64), ForKind::parallel, Seq::make({unrolled, odd_range})),
                 vectorized});
  return {"every_expression", {F, D, I, P}, body};
}

}  // namespace

TEST_CASE("the matmul prints as the course shows it and parses back", "[loop_text]") {
  std::string text = check_round_trip(matmul());
  REQUIRE(text ==
          "func @matmul(A: f32[128,64], B: f32[64,256], C: f32[128,256]) {\n"
          "  for i in 0..128 {\n"
          "    for j in 0..256 {\n"
          "      for k in 0..64 {\n"
          "        block C(vi = spatial(128) i, vj = spatial(256) j, vk = reduce(64) k) {\n"
          "          reads(A[vi, vk], B[vk, vj], C[vi, vj]) writes(C[vi, vj])\n"
          "          init { C[vi, vj] = 0.0 }\n"
          "          C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n"
          "        }\n"
          "      }\n"
          "    }\n"
          "  }\n"
          "}\n");
}

TEST_CASE("parsing builds the same structure the printer saw", "[loop_text]") {
  LoopModule module = parse_loop_module(print_func(matmul()), "matmul.mloop");
  REQUIRE(module.functions.size() == 1);
  const PrimFunc& func = module.functions[0];
  REQUIRE(func.params.size() == 3);
  const For* loop_i = func.body.as<For>();
  REQUIRE(loop_i);
  const Block* block = loop_i->body.as<For>()->body.as<For>()->body.as<Block>();
  REQUIRE(block);
  REQUIRE(block->iter_vars[2].kind == IterKind::reduce);
  // The binding of vi is the very Var of loop i; the store writes the parameter C.
  REQUIRE(block->iter_vars[0].binding.same_as(loop_i->var));
  const Store* store = block->body.as<Store>();
  REQUIRE(store->buffer == func.params[2]);
  REQUIRE(store->indices[0].same_as(block->iter_vars[0].var));
}

TEST_CASE("every statement kind, loop kind and scope round-trips", "[loop_text]") {
  std::string text = check_round_trip(gpu_kernel());
  CHECK_THAT(text, Catch::Contains("func @gpu(X: f32[1024], Y: f32[32,32] strides[33,1]) {"));
  CHECK_THAT(text, Catch::Contains("for bx in 0..32 bind(blockIdx.x) {"));
  CHECK_THAT(text, Catch::Contains("alloc S: f32[32] shared {"));
  CHECK_THAT(text, Catch::Contains("S[tx] = X[bx * 32 + tx]\n"));
  CHECK_THAT(text, Catch::Contains("      barrier()\n"));
  CHECK_THAT(text, Catch::Contains("block \"stage out\"(v = spatial(32) bx, r = reduce(32) tx) "
                                   "where (bx * 32 + tx < 1000) {meta_schedule.tiling=2} {"));
  CHECK_THAT(text, Catch::Contains("alloc_buffer T: f16[4] local\n"));
  CHECK_THAT(text, Catch::Contains("reads(S[0:32], X[bx * 32:+32]) writes(Y[v, 0:32])"));
  CHECK_THAT(text,
             Catch::Contains(
                 "init {\n            T[0] = 0.0f16\n            Y[v, 0] = -0.0\n          }\n"));
  CHECK_THAT(text, Catch::Contains("Y[v, r] = S[r] + cast<f32>(T[0])"));
}

TEST_CASE("every expression kind round-trips", "[loop_text]") {
  std::string text = check_round_trip(every_expression());
  CHECK_THAT(text, Catch::Contains("parallel for i in 0..64 {"));
  CHECK_THAT(text,
             Catch::Contains("unrolled for k in -2..0 {\"max-step\"=-4, unroll_explicit=1} {"));
  CHECK_THAT(text, Catch::Contains("for n in i * 2..+3 {"));
  CHECK_THAT(text, Catch::Contains("vectorized for j in 0..8 {"));
  CHECK_THAT(text, Catch::Contains("F[i] = exp(F[i]) + pow(F[i], 1.5)"));
  CHECK_THAT(text, Catch::Contains("D[i] = D[i] / 0.1f64 - cast<f64>(F[i])"));
  CHECK_THAT(text, Catch::Contains("I[i] = I[i] / 1i32 % I[i] * (I[i] - (I[i] - 1i32))"));
  CHECK_THAT(text, Catch::Contains("I[i] = min(I[i], max(I[i], -7i32))"));
  CHECK_THAT(text,
             Catch::Contains("F[floordiv(i, 3) + floormod(i, -3)] = select(!(i < m), F[i], 2.5)"));
  CHECK_THAT(text, Catch::Contains("P[i] = i == m && i != k || (i <= m || i > k) && m >= k"));
  CHECK_THAT(text, Catch::Contains("P[m] = (i < m) == true"));
  CHECK_THAT(text, Catch::Contains("evaluate F[i] * inf"));
  CHECK_THAT(text, Catch::Contains("barrier<f32>()"));
  CHECK_THAT(text, Catch::Contains("if (i < 4) {\n"));
  CHECK_THAT(text, Catch::Contains("F[i] = 1e-45\n"));
  CHECK_THAT(text, Catch::Contains("} else {\n"));
  CHECK_THAT(text, Catch::Contains("F[i] = nan\n"));
  CHECK_THAT(text, Catch::Contains("if (!!(i > 60)) {"));
  CHECK_THAT(text, Catch::Contains("F[i] = -inf\n"));
  CHECK_THAT(text,
             Catch::Contains("F[ramp(j * 8, 1, 8)] = F[ramp(j * 8, 1, 8)] * broadcast(3.0, 8) + "
                             "cast<f32x8>(broadcast(2i32, 8))"));
}

TEST_CASE("operators print with the fewest parentheses", "[loop_text]") {
  Expr a = Var::make("a"), b = Var::make("b"), c = Var::make("c");
  CHECK(print_expr((a + b) * c) == "(a + b) * c");
  CHECK(print_expr(a + b * c) == "a + b * c");
  CHECK(print_expr(a - b - c) == "a - b - c");
  CHECK(print_expr(a - (b - c)) == "a - (b - c)");
  CHECK(print_expr(Div::make(a, b * c)) == "a / (b * c)");
  CHECK(print_expr(a - i64(-3)) == "a - -3");
  CHECK(print_expr(LT::make(a + b, c)) == "a + b < c");
  CHECK(print_expr(Not::make(LT::make(a, b))) == "!(a < b)");
  Expr t = LT::make(a, b), u = LT::make(b, c);
  CHECK(print_expr(Or::make(t, And::make(u, t))) == "a < b || b < c && a < b");
  CHECK(print_expr(And::make(Or::make(t, u), t)) == "(a < b || b < c) && a < b");
  CHECK(print_expr(Or::make(t, Or::make(u, t))) == "a < b || (b < c || a < b)");
}

TEST_CASE("float immediates print exactly at their type's precision", "[loop_text]") {
  auto f32 = [](double v) { return print_expr(FloatImm::make(v)); };
  auto f64 = [](double v) { return print_expr(FloatImm::make(v, {DType::f64, 1})); };
  CHECK(f32(1.5) == "1.5");
  CHECK(f32(2.0) == "2.0");
  CHECK(f32(-0.0) == "-0.0");
  CHECK(f32(1e-45) == "1e-45");  // the smallest f32 denormal
  CHECK(f32(0.1) == "0.1");      // 0.1 as f32
  CHECK(f32(1e20) == "1e+20");
  CHECK(f32(std::nan("")) == "nan");
  CHECK(f64(0.1) == "0.1f64");
  CHECK(f64(1.0 / 3.0) == "0.3333333333333333f64");
  CHECK(f64(std::numeric_limits<double>::infinity()) == "inff64");
  CHECK(f64(-std::numeric_limits<double>::infinity()) == "-inff64");
  CHECK(print_expr(FloatImm::make(1.5, {DType::f16, 1})) == "1.5f16");
  CHECK(print_expr(FloatImm::make(0.1, {DType::bf16, 1})) == "0.100097656bf16");
  CHECK(print_expr(IntImm::make(3, {DType::i32, 1})) == "3i32");
  CHECK(print_expr(IntImm::make(255, {DType::u8, 1})) == "255u8");
  CHECK(print_expr(IntImm::make(std::numeric_limits<int64_t>::min())) == "-9223372036854775808");
  CHECK(print_expr(IntImm::make(0, DataType::boolean())) == "false");

  // Reading them back gives the same bits.
  Buffer F = BufferNode::make("F", DType::f32, {1});
  Buffer D = BufferNode::make("D", DType::f64, {1});
  auto read_value = [](const std::string& text) {
    LoopModule module = parse_loop_module(text, "floats.mloop");
    return module.functions[0].body.as<Store>()->value.as<FloatImm>()->value;
  };
  double zero = read_value("func @f(F: f32[1]) { F[0] = -0.0 }");
  CHECK((zero == 0.0 && std::signbit(zero)));
  CHECK(read_value("func @f(F: f32[1]) { F[0] = 1e-45 }") ==
        static_cast<double>(std::numeric_limits<float>::denorm_min()));
  CHECK(read_value("func @f(F: f32[1]) { F[0] = 0.1 }") == static_cast<double>(0.1f));
  CHECK(read_value("func @f(D: f64[1]) { D[0] = 0.1f64 }") == 0.1);
  CHECK(std::isnan(read_value("func @f(F: f32[1]) { F[0] = nan }")));
  CHECK(read_value("func @f(D: f64[1]) { D[0] = -inff64 }") ==
        -std::numeric_limits<double>::infinity());
  (void)F;
  (void)D;
}

TEST_CASE("clashing names get a suffix; others stay as they are", "[loop_text]") {
  Buffer A = BufferNode::make("A", DType::f32, {4, 4});
  Buffer A2 = BufferNode::make("A", DType::f32, {4}, MemoryScope::local);
  Expr outer = Var::make("i"), inner = Var::make("i"), sibling = Var::make("i");
  Stmt store = Store::make(A, {outer, inner}, Load::make(A2, {inner}));
  Stmt nest = For::make(outer, i64(0), i64(4), ForKind::serial,
                        For::make(inner, i64(0), i64(4), ForKind::serial, store));
  Stmt other = For::make(sibling, i64(0), i64(4), ForKind::serial,
                         Store::make(A, {sibling, sibling}, FloatImm::make(1.0)));
  PrimFunc func{"clash", {A}, Seq::make({Allocate::make(A2, nest), other})};
  std::string text = check_round_trip(func);
  CHECK_THAT(text, Catch::Contains("alloc A_1: f32[4] local {"));
  CHECK_THAT(text, Catch::Contains("    for i in 0..4 {\n      for i_1 in 0..4 {"));
  CHECK_THAT(text, Catch::Contains("A[i, i_1] = A_1[i_1]"));
  // A sibling loop hides nothing: it keeps its name.
  CHECK_THAT(text, Catch::Contains("  for i in 0..4 {\n    A[i, i] = 1.0\n"));

  // Names that are keywords or no identifiers are quoted; dotted names stay bare.
  Buffer odd = BufferNode::make("conv1/W:0", DType::f32, {2});
  Expr keyword = Var::make("for"), dotted = Var::make("i.0");
  PrimFunc quoted{"odd name",
                  {odd},
                  For::make(keyword, i64(0), i64(2), ForKind::serial,
                            For::make(dotted, i64(0), i64(1), ForKind::serial,
                                      Store::make(odd, {keyword + dotted}, FloatImm::make(0.0))))};
  text = check_round_trip(quoted);
  CHECK_THAT(text, Catch::Contains("func @\"odd name\"(\"conv1/W:0\": f32[2]) {"));
  CHECK_THAT(text, Catch::Contains("for \"for\" in 0..2 {\n    for i.0 in 0..1 {"));
  CHECK_THAT(text, Catch::Contains("\"conv1/W:0\"[\"for\" + i.0] = 0.0"));

  // Control characters in a name are escaped as the graph text form escapes them.
  Buffer control = BufferNode::make("a\r\tb\x01", DType::f32, {1});
  PrimFunc escaped{"escaped", {control}, Store::make(control, {i64(0)}, FloatImm::make(1.0))};
  text = check_round_trip(escaped);
  CHECK_THAT(text, Catch::Contains("\"a\\r\\tb\\x01\": f32[1]"));
}

TEST_CASE("a module of several functions round-trips", "[loop_text]") {
  LoopModule module{{matmul(), gpu_kernel(), every_expression()}};
  std::string text = check_round_trip(module);
  CHECK_THAT(text, Catch::Contains("}\n\nfunc @gpu("));
  REQUIRE(print_module(LoopModule{}).empty());
  REQUIRE(parse_loop_module("// nothing but a comment\n", "empty.mloop").functions.empty());
}

TEST_CASE("parse errors name the line and column", "[loop_text]") {
  auto error_of = [](const std::string& text) -> std::string {
    try {
      parse_loop_module(text, "bad.mloop");
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK(error_of("func @f(A: f32[4]) {\n  A[i] = 1.0\n}") == "bad.mloop:2:5: unknown variable 'i'");
  CHECK(error_of("func @f(A: f32[4]) {\n  for i in 0..4 {\n    B[i] = 1.0\n  }\n}") ==
        "bad.mloop:3:5: unknown buffer 'B'");
  // A node invariant broken by the text is reported at the statement or operator.
  CHECK(error_of("func @f(A: f32[4]) {\n  for i in 0..4 {\n    A[i] = 1\n  }\n}") ==
        "bad.mloop:3:5: invalid loop IR: Store of i64 into A of f32 (1 lanes)");
  CHECK(error_of("func @f(A: f32[4]) {\n  A[0] = A[0] + 1\n}") ==
        "bad.mloop:2:15: invalid loop IR: Add of f32 and i64");
  CHECK(error_of("func @f(A: f32[4, 4]) {\n  A[0] = 0.0\n}") ==
        "bad.mloop:2:3: invalid loop IR: Store to A (rank 2) with 1 indices");
  CHECK(error_of("func @f(A: f32[4]) {\n  A[0] = frob(1.0)\n}") ==
        "bad.mloop:2:10: invalid loop IR: unknown intrinsic 'frob'");
  CHECK(error_of("func @f(A: f32[4]) {\n  for i in 0..4 {\n  }\n}") ==
        "bad.mloop:2:17: a loop needs at least one statement");
  CHECK(error_of("func @f(A: f32[4]) {\n  A[0] = 1.0 $\n}") ==
        "bad.mloop:2:14: unexpected character '$'");
  CHECK(error_of("func @f(A: f32[4]) {\n  A[0 < 1 < 2] = 1.0\n}") ==
        "bad.mloop:2:11: comparisons do not chain: add parentheses");
  CHECK(error_of("func @f(A: f32[4]) {\n  for i in 0..4 {\n    A[i] = 1.0\n") ==
        "bad.mloop:4:1: expected '}', found end of input");
  CHECK(error_of("func @f(A: q32[4]) {}") ==
        "bad.mloop:1:12: expected an element type (f32, i64, ...), found 'q32'");
  CHECK(error_of("func @f(A: f32[4]) {\n  for j in i..4 {\n  }\n}") ==
        "bad.mloop:2:12: unknown variable 'i'");
  CHECK(error_of("func @f(A: f32[4]) {\n  A[0] = 1.0q\n}") ==
        "bad.mloop:2:10: unknown type suffix 'q'");
  CHECK(error_of("func @f(A: f32[4]) {\n  A[0] = 1e39\n}") ==
        "bad.mloop:2:10: 1e39 does not fit in f32");
  CHECK(error_of("func @f(A: f32[4]) {\n  A[-x] = 1.0\n}") ==
        "bad.mloop:2:6: expected a number after '-' (there is no negation: write 0 - x), "
        "found 'x'");
}

TEST_CASE("every prefix of a valid text parses or throws Error", "[loop_text]") {
  std::string first = print_func(gpu_kernel());
  std::string text = first + "\n" + print_func(every_expression());
  std::vector<size_t> parsed_lengths;
  for (size_t length = 0; length <= text.size(); ++length) {
    try {
      LoopModule module = parse_loop_module(text.substr(0, length), "prefix.mloop");
      parsed_lengths.push_back(length);
    } catch (const Error&) {
      // most prefixes end inside a construct
    }
  }
  // Exactly the prefixes that end between whole functions parse: nothing, the first
  // function (with or without its newline and the blank line), and the whole text.
  std::vector<size_t> whole = {0, first.size() - 1, first.size(), first.size() + 1,
                               text.size() - 1, text.size()};
  REQUIRE(parsed_lengths == whole);
}

TEST_CASE("deeply nested input is an error, not a crash", "[loop_text]") {
  std::string deep = "func @f(A: f32[1]) {\n  A[0] = " + std::string(5000, '(') + "1.0" +
                     std::string(5000, ')') + "\n}\n";
  REQUIRE_THROWS_WITH(parse_loop_module(deep, "deep.mloop"), Catch::Contains("nested more than"));
}

TEST_CASE("a long chain of operators is an error, not a deep tree", "[loop_text]") {
  // 1 + 1 + ... parses without recursing, but into a tree as deep as the chain is long.
  std::string chain = "func @f(A: i64[1]) {\n  A[0] = 1";
  for (int i = 0; i < 100000; ++i) chain += " + 1";
  chain += "\n}\n";
  REQUIRE_THROWS_WITH(parse_loop_module(chain, "chain.mloop"), Catch::Contains("nested more than"));
  std::string fine = "func @f(A: i64[1]) {\n  A[0] = 1";
  for (int i = 0; i < 100; ++i) fine += " + 1";
  fine += "\n}\n";
  REQUIRE_NOTHROW(parse_loop_module(fine, "fine.mloop"));
}
