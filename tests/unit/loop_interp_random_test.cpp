// Randomized tests for the loop IR interpreter: random elementwise expression trees,
// evaluated by the interpreter (scalar and vectorized) and directly in C++.
// Course module 3.
#include "loop_test_util.h"
#include "minic/ir/loop/interpreter.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace minic;
using namespace minic::loop;
using namespace minic::loop::test;

namespace {

constexpr int64_t kSize = 16;
constexpr int kLanes = 8;

// Builds a random tree over three inputs. The same seed gives the same tree at any width:
// loads are A[i] for scalars and A[ramp(i * lanes, 1, lanes)] for vectors, constants are
// broadcast.
class TreeMaker {
 public:
  TreeMaker(uint32_t seed, DType dtype, int lanes, std::vector<Buffer> inputs, Expr index)
      : rng_(seed), dtype_(dtype), lanes_(lanes), inputs_(std::move(inputs)),
        index_(std::move(index)) {}

  Expr make(int depth) {
    int choice = pick(0, depth == 0 ? 1 : 10);
    if (choice == 0) return Load::make(inputs_[pick(0, 2)], {lane_index()});
    if (choice == 1) return constant(dtype_ == DType::f32 ? pick(-8, 8) / 4.0 : pick(-7, 7));
    Expr a = make(depth - 1);
    if (choice == 2 && dtype_ == DType::f32) return unary(a);
    if (choice == 2) return FloorDiv::make(a, constant(nonzero()));
    if (choice == 3 && dtype_ == DType::i32) return FloorMod::make(a, constant(nonzero()));
    if (choice == 3) {
      return Cast::make(DataType{DType::f32, lanes_}, Cast::make({DType::f16, lanes_}, a));
    }
    if (choice == 4 && dtype_ == DType::i32) return Div::make(a, constant(nonzero()));
    Expr b = make(depth - 1);
    switch (choice) {
      case 4: return Div::make(a, b);
      case 5: return a + b;
      case 6: return a - b;
      case 7: return a * b;
      case 8: return min(a, b);
      case 9: return max(a, b);
      default: return Select::make(LT::make(a, b), make(depth - 1), b);
    }
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  int nonzero() {
    int value = pick(-7, 6);
    return value >= 0 ? value + 1 : value;
  }
  Expr lane_index() { return lanes_ == 1 ? index_ : Ramp::make(index_ * kLanes, i64(1), lanes_); }
  Expr constant(double value) {
    return make_const(DataType{dtype_, lanes_}, value);
  }
  Expr unary(const Expr& a) {
    static const char* kNames[] = {"exp", "tanh", "fabs", "sqrt", "sigmoid", "floor", "round"};
    return Call::make(a.type(), kNames[pick(0, 6)], {a});
  }

  std::mt19937 rng_;
  DType dtype_;
  int lanes_;
  std::vector<Buffer> inputs_;
  Expr index_;
};

// The tree evaluated directly in C++ for element `n`, from the scalar form of the tree.
struct Reference {
  const std::vector<Tensor>& inputs;
  const std::vector<Buffer>& buffers;
  int64_t n;

  double input(const Buffer& buffer) const {
    for (size_t k = 0; k < buffers.size(); ++k) {
      if (buffers[k] == buffer) return inputs[k].as_double(n);
    }
    FAIL("unknown buffer");
    return 0;
  }

  float f32(const Expr& e) const {
    if (const Load* load = e.as<Load>()) return static_cast<float>(input(load->buffer));
    if (const FloatImm* imm = e.as<FloatImm>()) return static_cast<float>(imm->value);
    if (const Add* node = e.as<Add>()) return f32(node->a) + f32(node->b);
    if (const Sub* node = e.as<Sub>()) return f32(node->a) - f32(node->b);
    if (const Mul* node = e.as<Mul>()) return f32(node->a) * f32(node->b);
    if (const Div* node = e.as<Div>()) return f32(node->a) / f32(node->b);
    if (const Min* node = e.as<Min>()) return min_max(f32(node->a), f32(node->b), false);
    if (const Max* node = e.as<Max>()) return min_max(f32(node->a), f32(node->b), true);
    if (const Select* node = e.as<Select>()) {
      const LT* lt = node->condition.as<LT>();
      return f32(lt->a) < f32(lt->b) ? f32(node->true_value) : f32(node->false_value);
    }
    if (const Cast* node = e.as<Cast>()) {
      return static_cast<float>(Half(f32(node->value.as<Cast>()->value)));
    }
    const Call* call = e.as<Call>();
    double x = f32(call->args[0]);
    double y = call->name == "exp" ? std::exp(x) : call->name == "tanh" ? std::tanh(x)
               : call->name == "fabs" ? std::fabs(x) : call->name == "sqrt" ? std::sqrt(x)
               : call->name == "sigmoid" ? 1.0 / (1.0 + std::exp(-x))
               : call->name == "floor" ? std::floor(x) : std::nearbyint(x);
    return static_cast<float>(y);
  }

  static float min_max(float a, float b, bool max) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<float>::quiet_NaN();
    return max ? std::max(a, b) : std::min(a, b);
  }

  // i32 arithmetic: computed in int64 and wrapped to 32 bits.
  int32_t i32(const Expr& e) const {
    auto wrap = [](int64_t v) { return static_cast<int32_t>(v); };
    if (const Load* load = e.as<Load>()) return static_cast<int32_t>(input(load->buffer));
    if (const IntImm* imm = e.as<IntImm>()) return static_cast<int32_t>(imm->value);
    if (const Add* node = e.as<Add>()) return wrap(int64_t{i32(node->a)} + i32(node->b));
    if (const Sub* node = e.as<Sub>()) return wrap(int64_t{i32(node->a)} - i32(node->b));
    if (const Mul* node = e.as<Mul>()) return wrap(int64_t{i32(node->a)} * i32(node->b));
    if (const Min* node = e.as<Min>()) return std::min(i32(node->a), i32(node->b));
    if (const Max* node = e.as<Max>()) return std::max(i32(node->a), i32(node->b));
    if (const Div* node = e.as<Div>()) return wrap(int64_t{i32(node->a)} / i32(node->b));
    if (const FloorDiv* node = e.as<FloorDiv>()) {
      return wrap(static_cast<int64_t>(std::floor(double(i32(node->a)) / i32(node->b))));
    }
    if (const FloorMod* node = e.as<FloorMod>()) {
      int64_t a = i32(node->a), b = i32(node->b);
      return wrap(a - b * static_cast<int64_t>(std::floor(double(a) / double(b))));
    }
    const Select* node = e.as<Select>();
    const LT* lt = node->condition.as<LT>();
    return i32(lt->a) < i32(lt->b) ? i32(node->true_value) : i32(node->false_value);
  }
};

// out = tree(A, B, C), as a scalar loop or a loop over vectors of kLanes.
PrimFunc tree_func(uint32_t seed, DType dtype, int lanes, std::vector<Buffer> inputs,
                   const Buffer& out) {
  Expr i = Var::make("i");
  Expr tree = TreeMaker(seed, dtype, lanes, inputs, i).make(5);
  Expr index = lanes == 1 ? i : Ramp::make(i * kLanes, i64(1), lanes);
  inputs.push_back(out);
  return {"tree", inputs, for_loop(i, kSize / lanes, Store::make(out, {index}, tree))};
}

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

void check_trees(DType dtype, std::vector<Tensor> inputs) {
  std::vector<Buffer> buffers;
  for (const char* name : {"A", "B", "C"}) {
    buffers.push_back(BufferNode::make(name, dtype, {kSize}));
  }
  Buffer out = BufferNode::make("out", dtype, {kSize});
  for (uint32_t seed = 1; seed <= 150; ++seed) {
    PrimFunc scalar = tree_func(seed, dtype, 1, buffers, out);
    PrimFunc vector = tree_func(seed, dtype, kLanes, buffers, out);
    Tensor scalar_out(dtype, {kSize}), vector_out(dtype, {kSize});
    run_func(scalar, {&inputs[0], &inputs[1], &inputs[2], &scalar_out});
    run_func(vector, {&inputs[0], &inputs[1], &inputs[2], &vector_out});
    const Store* store = scalar.body.as<For>()->body.as<Store>();
    INFO("seed " << seed);
    for (int64_t n = 0; n < kSize; ++n) {
      Reference reference{inputs, buffers, n};
      double expected = dtype == DType::f32 ? static_cast<double>(reference.f32(store->value))
                                            : static_cast<double>(reference.i32(store->value));
      INFO("element " << n << ": " << scalar_out.as_double(n) << " vs " << expected);
      REQUIRE(same(scalar_out.as_double(n), expected));
      REQUIRE(same(vector_out.as_double(n), expected));
    }
  }
}

}  // namespace

TEST_CASE("random f32 expression trees agree with C++", "[loop_interp][random]") {
  std::mt19937 rng(2024);
  std::vector<Tensor> inputs;
  for (int k = 0; k < 3; ++k) inputs.push_back(uniform_tensor({kSize}, rng, -3.0f, 3.0f));
  check_trees(DType::f32, std::move(inputs));
}

TEST_CASE("random i32 expression trees agree with C++", "[loop_interp][random]") {
  std::mt19937 rng(99);
  std::vector<Tensor> inputs;
  std::uniform_int_distribution<int32_t> value(-100000, 100000);
  for (int k = 0; k < 3; ++k) {
    Tensor tensor(DType::i32, {kSize});
    for (int32_t& x : tensor.values<int32_t>()) x = value(rng);
    inputs.push_back(std::move(tensor));
  }
  check_trees(DType::i32, std::move(inputs));
}
