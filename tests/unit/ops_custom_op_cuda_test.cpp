// Custom operators with a hand-written CUDA kernel (OpSchema::cuda, include/minic/ops/
// custom_op.h): on a CUDA target the op stays out of fusion, its source joins the model's
// CUDA program and its node launches it as the launch rule says; emulated, the node runs
// its reference kernel; a source that does not compile, or lacks the kernel its launch
// names, is an error naming the op. Course modules 6 and 8.
#include "minic/ops/custom_op.h"

#include "minic/codegen/cuda.h"
#include "minic/passes/graph/fuse_ops.h"
#include "minic/runtime/cuda_driver.h"

#include "custom_op_test_util.h"
#include "driver_test_util.h"

#include <catch2/catch.hpp>


using namespace minic;

namespace {

constexpr const char* kSoftsignCuda = R"(
extern "C" __global__ void test_softsign_f32(const float* x, float* y, int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] / (1.0f + fabsf(x[i]));
}
)";

// NAME: Softsign (custom_op_test_util.h) with the CUDA kernel `cuda`, if any.
OpSchema softsign(const std::string& name, std::optional<CudaKernelSource> cuda) {
  OpSchema schema = testing::softsign_schema(name);
  schema.cuda = std::move(cuda);
  return schema;
}

// com.cuda.Softsign, com.cuda.Plain (no CUDA kernel), and three ops whose CUDA kernels are
// wrong: a source that does not compile, a launch naming a kernel the source lacks, a
// launch rule that refuses.
void register_cuda_ops() {
  static const bool registered = [] {
    register_custom_op(softsign("com.cuda.Plain", std::nullopt));
    register_custom_op(
        softsign("com.cuda.Softsign", elementwise_cuda_kernel(kSoftsignCuda, "test_softsign_f32")));
    register_custom_op(softsign("com.cuda.Broken",
                                elementwise_cuda_kernel("this is not CUDA", "broken_f32")));
    register_custom_op(
        softsign("com.cuda.Misnamed", elementwise_cuda_kernel(kSoftsignCuda, "softsign_f32")));
    CudaKernelSource picky = elementwise_cuda_kernel(kSoftsignCuda, "test_softsign_f32");
    picky.launch = [](const NodeContext& ctx) -> CudaKernelLaunch {
      ctx.fail("its kernel takes 1-D tensors only");
    };
    register_custom_op(softsign("com.cuda.Picky", picky));
    return true;
  }();
  (void)registered;
}

// MatMul, then OP, then Relu.
std::string model(const std::string& op) {
  return R"(graph g(%a: f32[32,48], %b: f32[48,64]) -> (%y: f32[32,64]) opset 17 {
  %m = MatMul(%a, %b)
  %s = )" + op + R"((%m)
  %y = Relu(%s)
  return %y
})";
}

std::vector<std::string> ops_of(const Graph& graph) {
  std::vector<std::string> ops;
  for (const Node* node : graph.nodes()) ops.push_back(node->op);
  return ops;
}

CompileOptions for_gpu(bool emulate) {
  CompileOptions options;
  options.target = cuda_target("sm_90");
  options.emulate = emulate;
  return options;
}

}  // namespace

TEST_CASE("an op with its own CUDA kernel fuses on a CPU and stays alone on a GPU",
          "[custom_op][cuda]") {
  register_cuda_ops();
  Graph cpu = testing::graph_from_text(model("com.cuda.Softsign"));
  fuse_operators(cpu, Target(CpuTarget{}));
  CHECK(ops_of(cpu) == std::vector<std::string>{"Fused"});
  Graph gpu = testing::graph_from_text(model("com.cuda.Softsign"));
  fuse_operators(gpu, cuda_target("sm_90"));
  CHECK(ops_of(gpu) == std::vector<std::string>{"MatMul", "com.cuda.Softsign", "Relu"});
  // Without a CUDA kernel, the same op fuses on the GPU too.
  Graph plain = testing::graph_from_text(model("com.cuda.Plain"));
  fuse_operators(plain, cuda_target("sm_90"));
  CHECK(ops_of(plain) == std::vector<std::string>{"Fused"});
}

TEST_CASE("emulated, a node with its own CUDA kernel runs its reference kernel",
          "[custom_op][cuda]") {
  register_cuda_ops();
  Graph reference = testing::graph_from_text(model("com.cuda.Softsign"));
  std::vector<Tensor> inputs = testing::random_float_inputs(reference, 3);
  std::vector<Tensor> expected = interpret(reference, inputs);
  std::unique_ptr<CompiledModel> compiled =
      compile_model(testing::graph_from_text(model("com.cuda.Softsign")), for_gpu(true));
  CHECK(compiled->stats().kernels == 3);
  CHECK(compiled->stats().compiled_kernels == 2);
  CHECK(compiled->stats().reference_ops == std::vector<std::string>{"com.cuda.Softsign"});
  // The program holds the hand-written source all the same (what --emit cuda shows).
  CHECK_THAT(compiled->cuda()->module.source, Catch::Contains("test_softsign_f32(const float*"));
  std::vector<Tensor> actual = compiled->run(inputs);
  TensorComparison comparison = compare_tensors(actual[0], expected[0], {1e-4, 1e-5});
  INFO(describe(comparison));
  CHECK(comparison.ok());
}

TEST_CASE("NVRTC compiles an op's own CUDA kernel into the model's program, launched as its "
          "launch rule says",
          "[custom_op][cuda][nvrtc]") {
  INFO("NVRTC not found: scripts/setup.sh installs it, MINIC_NVRTC names it");
  REQUIRE(codegen::nvrtc_version());
  register_cuda_ops();
  std::unique_ptr<CompiledModel> compiled =
      compile_model(testing::graph_from_text(model("com.cuda.Softsign")), for_gpu(false));
  CHECK(compiled->stats().compiled_kernels == 2);
  CHECK(compiled->stats().backend_kernels.at("custom CUDA") == 1);
  const CudaProgram& program = *compiled->cuda();
  const codegen::CudaFunction* softsign = nullptr;
  for (const codegen::CudaFunction& function : program.module.functions) {
    if (function.launches.size() == 1 && function.launches[0].kernel == "test_softsign_f32") {
      softsign = &function;
    }
  }
  REQUIRE(softsign);
  const codegen::CudaLaunch& launch = softsign->launches[0];
  CHECK(softsign->num_params == 2);
  CHECK(launch.args == std::vector<int>{0, 1});
  CHECK(launch.grid == std::array<int64_t, 3>{32 * 64 / 256, 1, 1});
  CHECK(launch.block == std::array<int64_t, 3>{256, 1, 1});
  CHECK(launch.scalars == std::vector<int64_t>{32 * 64});
  CHECK_THAT(program.binary->ptx, Catch::Contains(".entry test_softsign_f32("));
  if (!cuda_driver_version()) {
    CHECK_THROWS_WITH(compiled->run(testing::random_float_inputs(compiled->graph(), 1)),
                      Catch::Contains("no CUDA driver"));
  }
}

TEST_CASE("an op's CUDA kernel that does not compile, or is not there, is an error naming it",
          "[custom_op][cuda][nvrtc]") {
  REQUIRE(codegen::nvrtc_version());
  register_cuda_ops();
  CHECK_THROWS_WITH(
      compile_model(testing::graph_from_text(model("com.cuda.Broken")), for_gpu(false)),
      Catch::Contains("custom op com.cuda.Broken: its CUDA source does not compile"));
  CHECK_THROWS_WITH(
      compile_model(testing::graph_from_text(model("com.cuda.Misnamed")), for_gpu(false)),
      Catch::Contains("custom op com.cuda.Misnamed: its launch rule names kernel softsign_f32"));
  // A launch rule that refuses a node: the node runs its reference kernel, and says why.
  std::unique_ptr<CompiledModel> picky =
      compile_model(testing::graph_from_text(model("com.cuda.Picky")), for_gpu(false));
  CHECK(picky->stats().reference_ops == std::vector<std::string>{"com.cuda.Picky"});
  REQUIRE(picky->cuda()->refused.size() == 1);
  CHECK_THAT(picky->cuda()->refused.begin()->second,
             Catch::Contains("its kernel takes 1-D tensors only"));
  // A CUDA kernel without a source or a launch rule is not registered.
  OpSchema empty = softsign("com.cuda.Empty", CudaKernelSource{});
  CHECK_THROWS_WITH(register_custom_op(empty), Catch::Contains("needs a source and a launch rule"));
  CHECK_THROWS_WITH(elementwise_cuda_kernel(kSoftsignCuda, "k", 2048),
                    Catch::Contains("a block of 2048 threads"));
}
