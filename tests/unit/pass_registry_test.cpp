// The pass registry and the pass manager, for both kinds of pass. Course modules 2 and 4.
//
//   - every pass the sources register (MINIC_REGISTER_*_PASS in src/passes/{graph,loop})
//     is in the registry of this binary, once: a registration the linker dropped fails
//     here, and so does a default pipeline naming a pass that does not exist;
//   - a loop pass registered by one line in this file runs by name through the registry;
//   - the manager names an unknown pass and a pass that breaks the IR;
//   - --verify-each=numeric (add_numeric_check) names a pass, registered here, that
//     changes what a kernel computes, and lets the default loop pipeline through.
#include "minic/passes/pass_manager.h"

#include "loop_pass_kernels.h"
#include "loop_test_util.h"
#include "pass_sources.h"
#include "minic/ir/loop/parser.h"
#include "minic/ir/loop/printer.h"
#include "minic/ir/loop/visitor.h"
#include "minic/runtime/numeric_check.h"
#include "minic/support/error.h"

#include <catch2/catch.hpp>

#include <random>

namespace minic {
namespace {

loop::LoopModule matmul_module() {
  return loop::parse_loop_module(loop::test::kMatmul, "<matmul>");
}

// A toy pass: every serial loop becomes an unrolled one (what it computes is unchanged).
class UnrollSerial : public loop::IRMutator {
 public:
  loop::Stmt mutate_For(const loop::For* node, const loop::Stmt& self) override {
    loop::Stmt body = mutate(node->body);
    loop::ForKind kind =
        node->for_kind == loop::ForKind::serial ? loop::ForKind::unrolled : node->for_kind;
    return loop::For::make(node->var, node->min, node->extent, kind, body, node->thread_axis,
                           node->annotations);
  }
};

loop::PrimFunc unroll_serial(loop::PrimFunc func) {
  func.body = UnrollSerial().mutate(func.body);
  return func;
}

// A wrong pass: every store of a float value stores one more.
class OffByOne : public loop::IRMutator {
 public:
  loop::Stmt mutate_Store(const loop::Store* node, const loop::Stmt& self) override {
    if (!is_float(node->value.type().dtype)) return self;
    return loop::Store::make(node->buffer, node->indices,
                             node->value + loop::FloatImm::make(1.0, node->value.type()));
  }
};

loop::PrimFunc off_by_one(loop::PrimFunc func) {
  func.body = OffByOne().mutate(func.body);
  return func;
}

// A pass that breaks the IR: the body stores to a buffer that nothing declares.
loop::PrimFunc store_to_nowhere(loop::PrimFunc func) {
  loop::Buffer nowhere = loop::BufferNode::make("nowhere", DType::f32, {1});
  func.body = loop::Store::make(nowhere, {loop::IntImm::make(0)}, loop::FloatImm::make(0.0));
  return func;
}

MINIC_REGISTER_LOOP_PASS("test-unroll-serial", unroll_serial,
                         "(a test) make every serial loop an unrolled one");
MINIC_REGISTER_LOOP_PASS("test-off-by-one", off_by_one,
                         "(a test, wrong on purpose) store one more than computed");
MINIC_REGISTER_LOOP_PASS("test-store-to-nowhere", store_to_nowhere,
                         "(a test, wrong on purpose) store to an undeclared buffer");

InputMaker seeded_inputs() {
  auto random = std::make_shared<std::mt19937>(5);
  return [random](const TensorType& type) {
    return loop::test::uniform_tensor(type.shape, *random);
  };
}

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("every pass the sources register is in the registry, once", "[passes]") {
  for (PassKind kind : {PassKind::graph, PassKind::loop}) {
    INFO(pass_kind_name(kind) << " passes");
    std::vector<std::string> names = test::passes_in_sources(kind);
    CHECK(names.size() >= 9);
    CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
    for (const std::string& name : names) {
      INFO("pass " << name);
      const PassInfo* pass = PassRegistry::find(kind, name);
      REQUIRE(pass != nullptr);
      CHECK(pass->kind() == kind);
      CHECK(!pass->summary.empty());
    }
  }
  for (const std::string& name : default_pipeline()) {
    CHECK(PassRegistry::find(PassKind::graph, name) != nullptr);
  }
  for (const std::string& name : loop::default_loop_pipeline()) {
    CHECK(PassRegistry::find(PassKind::loop, name) != nullptr);
  }
  // One name, two kinds: the graph simplify and the loop simplify are different passes.
  CHECK(PassRegistry::find(PassKind::graph, "simplify") !=
        PassRegistry::find(PassKind::loop, "simplify"));
}

TEST_CASE("a loop pass registered by one line runs by name", "[passes]") {
  const PassInfo* pass = PassRegistry::find(PassKind::loop, "test-unroll-serial");
  REQUIRE(pass != nullptr);
  CHECK(PassRegistry::find(PassKind::graph, "test-unroll-serial") == nullptr);
  std::vector<const PassInfo*> loop_passes = PassRegistry::all(PassKind::loop);
  CHECK(std::find(loop_passes.begin(), loop_passes.end(), pass) != loop_passes.end());

  loop::LoopModule module = matmul_module();
  run_passes(module, {"lower-blocks", "test-unroll-serial"});
  CHECK(loop::print_module(module) ==
        "func @matmul(A: f32[6,5], B: f32[5,7], C: f32[6,7]) {\n"
        "  unrolled for i in 0..6 {\n"
        "    unrolled for j in 0..7 {\n"
        "      unrolled for k in 0..5 {\n"
        "        if (k == 0) {\n"
        "          C[i, j] = 0.0\n"
        "        }\n"
        "        C[i, j] = C[i, j] + A[i, k] * B[k, j]\n"
        "      }\n"
        "    }\n"
        "  }\n"
        "}\n");
}

TEST_CASE("the pass manager names an unknown pass and a pass that breaks the IR", "[passes]") {
  loop::LoopModule module = matmul_module();
  CHECK_THAT(error_of([&] { run_passes(module, {"lower-blocks", "no-such-pass"}); }),
             Catch::StartsWith("unknown loop pass 'no-such-pass' (passes: compact-buffers,"));
  // Nothing ran: the names are looked up first.
  CHECK(loop::print_module(module) == loop::print_module(matmul_module()));
  CHECK_THAT(error_of([&] { run_passes(module, {"test-store-to-nowhere"}); }),
             Catch::StartsWith("loop pass 'test-store-to-nowhere' produced invalid IR: "));
}

TEST_CASE("the numeric check names the first pass that changes a result", "[passes]") {
  PassManagerOptions<loop::LoopModule> options;
  std::vector<std::string> seen;
  options.after_each = [&](const std::string& pass, const loop::LoopModule&) {
    seen.push_back(pass);
  };
  add_numeric_check(options, seeded_inputs());
  loop::LoopModule module = matmul_module();
  CHECK_THAT(
      error_of([&] {
        run_passes(module, {"lower-blocks", "simplify", "test-off-by-one", "remove-no-ops"},
                   options);
      }),
      Catch::StartsWith("loop pass 'test-off-by-one' changed parameter C of @matmul: ") &&
          Catch::Contains("42 of 42 elements differ"));
  // The hooks already there run first, and nothing runs after the failing pass.
  CHECK(seen == std::vector<std::string>{"lower-blocks", "simplify", "test-off-by-one"});

  SECTION("the default loop pipeline changes nothing, flattened parameters included") {
    PassManagerOptions<loop::LoopModule> checked;
    add_numeric_check(checked, seeded_inputs());
    loop::LoopModule kernels = matmul_module();
    CHECK_NOTHROW(run_passes(kernels, loop::default_loop_pipeline(), checked));
    CHECK(kernels.functions.at(0).params.at(0)->shape == std::vector<int64_t>{30});
  }
}

}  // namespace minic
