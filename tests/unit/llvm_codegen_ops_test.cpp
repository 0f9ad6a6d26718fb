// The LLVM backend against the interpreter, operation by operation: every binary operator
// in f32, i64 and i32, every intrinsic, casts, on scalar code and on vector code (a
// vectorized loop turned into ramps by vectorize_loops). Course module 6.
#include "llvm_test_util.h"
#include "minic/passes/loop/vectorize_loops.h"

#include <cmath>
#include <functional>

using namespace minic;
using namespace minic::loop;
using namespace minic::loop::test;

namespace {

using ValueFn = std::function<Expr(Expr, Expr)>;

constexpr int64_t kElements = 64;

// C[i] = value(A[i], B[i]) for i in 0..n; with lanes > 0 the loop is split and its inner
// part vectorized: for i.0 { vectorized for i.1 in 0..lanes { C[i.0 * lanes + i.1] = ... } }
PrimFunc elementwise(DType in, DType out, const ValueFn& value, int lanes = 0) {
  Buffer A = BufferNode::make("A", in, {kElements});
  Buffer B = BufferNode::make("B", in, {kElements});
  Buffer C = BufferNode::make("C", out, {kElements});
  if (lanes == 0) {
    Expr i = Var::make("i");
    Stmt store = Store::make(C, {i}, value(Load::make(A, {i}), Load::make(B, {i})));
    return {"elementwise", {A, B, C}, for_loop(i, kElements, store)};
  }
  Expr outer = Var::make("i.0");
  Expr inner = Var::make("i.1");
  Expr i = outer * lanes + inner;
  Stmt store = Store::make(C, {i}, value(Load::make(A, {i}), Load::make(B, {i})));
  Stmt vector_loop = for_loop(inner, lanes, store, ForKind::vectorized);
  Stmt loop = for_loop(outer, kElements / lanes, vector_loop);
  return {"elementwise", {A, B, C}, loop};
}

// Compares the interpreter on the serial kernel with the compiled serial kernel and the
// compiled vector kernel (which must have become ramps, unless `ramps` is false: then the
// loop stays for LLVM's vectoriser).
void check_elementwise(DType in, DType out, const ValueFn& value, std::vector<Tensor> args,
                       Tolerance tolerance = {1e-5, 1e-37}, bool ramps = true) {
  PrimFunc serial = elementwise(in, out, value);
  check_compiled(serial, args, tolerance);
  for (int lanes : {8, 16}) {
    PrimFunc vector = vectorize_loops(elementwise(in, out, value, lanes));
    bool inner_loop_gone = vector.body.as<For>()->body.as<Store>() != nullptr;
    REQUIRE(inner_loop_gone == ramps);
    check_compiled(serial, vector, args, tolerance);
  }
}

// Float inputs whose first elements are the awkward ones.
std::vector<Tensor> float_arguments(DType dtype, std::mt19937& rng, float lo, float hi) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> special_a = {nan, 1.0f, inf, -inf, 0.0f, -0.0f, 1e-10f, 100.0f, -100.0f,
                                  800.0f, -800.0f, 2.5f, 0.5f, -2.5f, 3.0f, -7.0f};
  std::vector<float> special_b = {1.0f, nan, 2.0f, 0.5f, 0.0f, 3.0f, -0.0f, 3.0f, 2.0f,
                                  0.0f, 1.0f, -2.0f, 0.0f, 4.0f, -inf, 2.0f};
  Tensor a = uniform_tensor({kElements}, rng, lo, hi);
  Tensor b = uniform_tensor({kElements}, rng, lo, hi);
  for (size_t i = 0; i < special_a.size(); ++i) {
    a.values<float>()[i] = special_a[i];
    b.values<float>()[i] = special_b[i];
  }
  return {a.cast(dtype), b.cast(dtype), Tensor(dtype, {kElements})};
}

// Integer inputs, B never 0 (the interpreter rejects a division by 0), with the wrapping
// case MIN / -1 among them.
std::vector<Tensor> integer_arguments(DType dtype, std::mt19937& rng) {
  Buffer buffer = BufferNode::make("X", dtype, {kElements});
  Tensor a = random_argument(*buffer, rng).cast(DType::i64);
  Tensor b = random_argument(*buffer, rng, -2, 2, true).cast(DType::i64);
  int64_t min = dtype == DType::i64 ? std::numeric_limits<int64_t>::min()
                                    : std::numeric_limits<int32_t>::min();
  a.values<int64_t>()[0] = min;
  b.values<int64_t>()[0] = -1;
  a.values<int64_t>()[1] = -7;
  b.values<int64_t>()[1] = 2;
  a.values<int64_t>()[2] = 7;
  b.values<int64_t>()[2] = -2;
  return {a.cast(dtype), b.cast(dtype), Tensor(dtype, {kElements})};
}

struct BinaryOp {
  const char* name;
  ValueFn make;
};

const std::vector<BinaryOp>& arithmetic() {
  static const std::vector<BinaryOp> ops = {
      {"Add", [](Expr a, Expr b) { return Add::make(a, b); }},
      {"Sub", [](Expr a, Expr b) { return Sub::make(a, b); }},
      {"Mul", [](Expr a, Expr b) { return Mul::make(a, b); }},
      {"Div", [](Expr a, Expr b) { return Div::make(a, b); }},
      {"Mod", [](Expr a, Expr b) { return Mod::make(a, b); }},
      {"Min", [](Expr a, Expr b) { return Min::make(a, b); }},
      {"Max", [](Expr a, Expr b) { return Max::make(a, b); }},
  };
  return ops;
}

const std::vector<BinaryOp>& comparisons() {
  static const std::vector<BinaryOp> ops = {
      {"EQ", [](Expr a, Expr b) { return EQ::make(a, b); }},
      {"NE", [](Expr a, Expr b) { return NE::make(a, b); }},
      {"LT", [](Expr a, Expr b) { return LT::make(a, b); }},
      {"LE", [](Expr a, Expr b) { return LE::make(a, b); }},
      {"GT", [](Expr a, Expr b) { return GT::make(a, b); }},
      {"GE", [](Expr a, Expr b) { return GE::make(a, b); }},
  };
  return ops;
}

}  // namespace

TEST_CASE("compiled f32 arithmetic and comparisons match the interpreter, NaN and inf too",
          "[llvm]") {
  std::mt19937 rng(11);
  for (const BinaryOp& op : arithmetic()) {
    INFO(op.name);
    check_elementwise(DType::f32, DType::f32, op.make, float_arguments(DType::f32, rng, -3, 3));
  }
  for (const BinaryOp& op : comparisons()) {
    INFO(op.name);
    std::vector<Tensor> args = float_arguments(DType::f32, rng, -1, 1);
    args[2] = Tensor(DType::boolean, {kElements});
    check_elementwise(DType::f32, DType::boolean, op.make, args);
  }
}

TEST_CASE("compiled Min and Max of floats propagate NaN from either side", "[llvm]") {
  std::mt19937 rng(12);
  for (const BinaryOp& op : {arithmetic()[5], arithmetic()[6]}) {
    std::vector<Tensor> args = float_arguments(DType::f32, rng, -1, 1);
    PrimFunc func = vectorize_loops(elementwise(DType::f32, DType::f32, op.make, 16));
    auto module = codegen::compile_llvm(LoopModule{{func}}, {});
    call_compiled(*module, func.name, args);
    auto a = args[0].values<float>(), b = args[1].values<float>(), c = args[2].values<float>();
    for (int64_t i = 0; i < kElements; ++i) {
      INFO(op.name << " of " << a[i] << " and " << b[i] << " gave " << c[i]);
      CHECK(std::isnan(c[i]) == (std::isnan(a[i]) || std::isnan(b[i])));
    }
  }
}

TEST_CASE("compiled i64 and i32 arithmetic matches the interpreter, wrapping at MIN / -1",
          "[llvm]") {
  std::mt19937 rng(13);
  std::vector<BinaryOp> ops = arithmetic();
  ops.push_back({"FloorDiv", [](Expr a, Expr b) { return FloorDiv::make(a, b); }});
  ops.push_back({"FloorMod", [](Expr a, Expr b) { return FloorMod::make(a, b); }});
  for (DType dtype : {DType::i64, DType::i32}) {
    for (const BinaryOp& op : ops) {
      INFO(op.name << " of " << dtype_name(dtype));
      check_elementwise(dtype, dtype, op.make, integer_arguments(dtype, rng), {0, 0});
    }
    for (const BinaryOp& op : comparisons()) {
      INFO(op.name << " of " << dtype_name(dtype));
      std::vector<Tensor> args = integer_arguments(dtype, rng);
      args[2] = Tensor(DType::boolean, {kElements});
      check_elementwise(dtype, DType::boolean, op.make, args, {0, 0});
    }
  }
}

TEST_CASE("compiled And, Or, Not and Select of bools match the interpreter", "[llvm]") {
  std::mt19937 rng(14);
  Buffer buffer = BufferNode::make("X", DType::boolean, {kElements});
  std::vector<ValueFn> ops = {
      [](Expr a, Expr b) { return And::make(a, b); },
      [](Expr a, Expr b) { return Or::make(a, b); },
      [](Expr a, Expr b) { return Not::make(a); },
      // A vector select between loads stays a loop (vectorize_loops.h says why).
      [](Expr a, Expr b) { return Select::make(a, Not::make(b), b); },
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    std::vector<Tensor> args = {random_argument(*buffer, rng), random_argument(*buffer, rng),
                                Tensor(DType::boolean, {kElements})};
    check_elementwise(DType::boolean, DType::boolean, ops[i], args, {0, 0}, i < 3);
  }
}

TEST_CASE("every compiled intrinsic matches the interpreter within rtol 1e-5 in f32",
          "[llvm]") {
  std::mt19937 rng(15);
  for (const char* name : {"exp", "log", "sqrt", "tanh", "erf", "sigmoid", "fabs", "floor",
                           "ceil", "round", "pow", "sin", "cos", "tan", "asin", "acos", "atan",
                           "sinh", "cosh", "asinh", "acosh", "atanh"}) {
    INFO(name);
    ValueFn call = [&](Expr a, Expr b) {
      std::vector<Expr> args = {a};
      if (std::string(name) == "pow") args.push_back(b);
      return Call::make(a.type(), name, args);
    };
    // Small arguments (where tanh and erf are delicate) and large ones.
    check_elementwise(DType::f32, DType::f32, call, float_arguments(DType::f32, rng, -1, 1));
    check_elementwise(DType::f32, DType::f32, call, float_arguments(DType::f32, rng, -30, 30));
    check_elementwise(DType::f64, DType::f64, call, float_arguments(DType::f64, rng, -5, 5),
                      {1e-13, 1e-300});
  }
}

// exp, sigmoid and erf of f32 are computed in f32 (src/codegen/llvm/codegen_math.cpp):
// within 2 ulps of the interpreter's correctly rounded result (erf: 3), over the whole
// range where e^x is a finite f32 of at least 1.7e-38; below x = -87 exp gives 0, where
// the true results are below 1.7e-38 (subnormal ones among them).
TEST_CASE("compiled f32 exp, sigmoid and erf are within 2 or 3 ulps", "[llvm]") {
  std::mt19937 rng(18);
  for (const char* name : {"exp", "sigmoid", "erf"}) {
    INFO(name);
    const double ulps = std::string(name) == "erf" ? 3 : 2;
    ValueFn call = [&](Expr a, Expr) { return Call::make(a.type(), name, {a}); };
    for (auto [lo, hi] : {std::pair{-104.0f, -87.0f}, std::pair{-87.0f, 88.7f},
                          std::pair{-5.0f, 5.0f}, std::pair{-1.0f, 1.0f},
                          std::pair{-0.01f, 0.01f}}) {
      const double flushed = lo < -87.0f ? 1.7e-38 : 3e-45;  // absolute error allowed
      for (int round = 0; round < 8; ++round) {
        std::vector<Tensor> args = {uniform_tensor({kElements}, rng, lo, hi),
                                    uniform_tensor({kElements}, rng, lo, hi),
                                    Tensor(DType::f32, {kElements})};
        check_elementwise(DType::f32, DType::f32, call, args, {ulps * 1.2e-7, flushed});
      }
    }
  }
}

// Below -87, f32 exp is 0, and is computed without a subnormal step (no microcode assist):
// exactly 0 there, e^-87 itself still a normal number.
TEST_CASE("compiled f32 exp flushes results below 1.7e-38 to 0", "[llvm]") {
  ValueFn call = [&](Expr a, Expr) { return Call::make(a.type(), "exp", {a}); };
  std::vector<float> inputs(kElements, -10000.0f);
  inputs[1] = -87.5f;
  inputs[2] = -100.0f;
  inputs[3] = -87.0f;
  std::vector<Tensor> args = {Tensor::from_vector<float>({kElements}, inputs),
                              Tensor::from_vector<float>({kElements}, inputs),
                              Tensor(DType::f32, {kElements})};
  PrimFunc func = elementwise(DType::f32, DType::f32, call);
  std::unique_ptr<codegen::CompiledModule> module =
      codegen::compile_llvm(LoopModule{{func}}, with_thread_pool({}));
  call_compiled(*module, func.name, args);
  std::span<const float> out = args[2].values<float>();
  CHECK(out[0] == 0.0f);
  CHECK(out[1] == 0.0f);
  CHECK(out[2] == 0.0f);
  CHECK(out[3] >= 1.6e-38f);
}

// pow of f32 by a constant quarter k/4, |k| <= 16, is computed from x, sqrt x and
// sqrt sqrt x (src/codegen/llvm/codegen_math.cpp): within 3 ulps of the interpreter's
// correctly rounded result, with pow's answers at -inf, -0, negative x and NaN.
TEST_CASE("compiled f32 pow by a constant quarter is within 3 ulps, special values too",
          "[llvm]") {
  std::mt19937 rng(19);
  for (int k = -16; k <= 16; ++k) {
    INFO("exponent " << k << "/4");
    ValueFn call = [&](Expr a, Expr) {
      return Call::make(a.type(), "pow", {a, FloatImm::make(k / 4.0, DataType::f32())});
    };
    check_elementwise(DType::f32, DType::f32, call, float_arguments(DType::f32, rng, 0, 4),
                      {3 * 1.2e-7, 3e-45});
    check_elementwise(DType::f32, DType::f32, call, float_arguments(DType::f32, rng, -3, 3),
                      {3 * 1.2e-7, 3e-45});
  }
}

TEST_CASE("compiled shifts match the interpreter, 0 for a shift by the width or more",
          "[llvm]") {
  std::mt19937 rng(17);
  for (DType dtype : {DType::u8, DType::u16, DType::u32, DType::u64}) {
    INFO(dtype_name(dtype));
    for (const char* name : {"shift_left", "shift_right"}) {
      INFO(name);
      ValueFn shift = [&](Expr a, Expr b) { return Call::make(a.type(), name, {a, b}); };
      Tensor a(DType::i64, {kElements});
      Tensor b(DType::i64, {kElements});
      std::uniform_int_distribution<int64_t> value(0, 1'000'000'007);
      std::uniform_int_distribution<int64_t> amount(0, 70);  // past every width
      for (int64_t& x : a.values<int64_t>()) x = value(rng);
      for (int64_t& x : b.values<int64_t>()) x = amount(rng);
      std::vector<Tensor> args = {a.cast(dtype), b.cast(dtype), Tensor(dtype, {kElements})};
      check_elementwise(dtype, dtype, shift, args, {0, 0});
    }
  }
}

TEST_CASE("compiled dot4_u8i8 matches the interpreter, with VNNI and without", "[llvm]") {
  // Words over the whole int32 range (every byte value, signed and unsigned), alone and
  // added to an accumulator (the form code generation turns into vpdpbusd); vectors of 4, 8,
  // 16 and 32 lanes (32: two instructions), for a CPU with AVX-512 VNNI and one without.
  std::mt19937 rng(31);
  Tensor a(DType::i32, {kElements});
  Tensor b(DType::i32, {kElements});
  std::uniform_int_distribution<int32_t> word(std::numeric_limits<int32_t>::min(),
                                              std::numeric_limits<int32_t>::max());
  for (int32_t& x : a.values<int32_t>()) x = word(rng);
  for (int32_t& x : b.values<int32_t>()) x = word(rng);
  std::vector<Tensor> args = {a, b, Tensor(DType::i32, {kElements})};
  const std::vector<std::pair<const char*, ValueFn>> forms = {
      {"dot4", [](Expr x, Expr y) { return Call::make(x.type(), "dot4_u8i8", {x, y}); }},
      {"acc + dot4",
       [](Expr x, Expr y) { return x + Call::make(x.type(), "dot4_u8i8", {x, y}); }},
  };
  for (const char* cpu : {"cascadelake", "skylake-avx512"}) {
    INFO(cpu);
    codegen::LlvmOptions options;
    options.target = codegen::cpu_target(cpu);
    for (const auto& [name, form] : forms) {
      INFO(name);
      PrimFunc serial = elementwise(DType::i32, DType::i32, form);
      check_compiled(serial, serial, args, {0, 0}, options);
      for (int lanes : {4, 8, 16, 32}) {
        INFO(lanes << " lanes");
        check_compiled(serial, vectorize_loops(elementwise(DType::i32, DType::i32, form, lanes)),
                       args, {0, 0}, options);
      }
    }
  }
}

TEST_CASE("compiled casts convert as Tensor::cast: truncating, saturating, NaN to 0",
          "[llvm]") {
  std::mt19937 rng(16);
  std::vector<std::pair<DType, DType>> casts = {
      {DType::f32, DType::i32}, {DType::f32, DType::i64}, {DType::f32, DType::u8},
      {DType::f32, DType::u32}, {DType::f32, DType::boolean}, {DType::f32, DType::f64},
      {DType::f32, DType::f16}, {DType::f64, DType::f32}, {DType::i64, DType::i32},
      {DType::i64, DType::i8},  {DType::i64, DType::f32}, {DType::i64, DType::boolean},
      {DType::i32, DType::i64}, {DType::i32, DType::u64}, {DType::u32, DType::f32},
      {DType::boolean, DType::f32}, {DType::boolean, DType::i32}, {DType::f16, DType::bf16},
      {DType::f64, DType::i32},     {DType::f32, DType::i16},
  };
  for (auto [from, to] : casts) {
    INFO("cast from " << dtype_name(from) << " to " << dtype_name(to));
    DType target = to;
    ValueFn cast = [target](Expr a, Expr) {
      return Cast::make(DataType{target, a.type().lanes}, a);
    };
    std::vector<Tensor> args;
    if (is_float(from)) {
      // Beyond every integer range, and NaN, among ordinary values.
      args = float_arguments(DType::f32, rng, -300, 300);
      args[0].values<float>()[1] = 3e9f;
      args[0].values<float>()[2] = -1e20f;
      // Around int32's ends: the largest float below 2^31, 2^31 itself, -2^31.
      args[0].values<float>()[3] = 2147483520.0f;
      args[0].values<float>()[4] = 2147483648.0f;
      args[0].values<float>()[5] = -2147483648.0f;
    } else {
      args = integer_arguments(DType::i64, rng);
      args[0].values<int64_t>()[3] = 5000000000;  // does not fit 32 bits
    }
    for (Tensor& arg : args) arg = arg.cast(from);
    args[2] = Tensor(to, {kElements});
    check_elementwise(from, to, cast, args, {1e-6, 0});
  }
}
