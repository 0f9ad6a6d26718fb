// The CUDA back end without a GPU: the default GPU schedule against the interpreter, the
// host/device split and the CUDA C it writes, its refusals, and NVRTC. Course module 6.
#include "schedule_kernels.h"
#include "schedule_test_util.h"

#include "minic/codegen/cuda.h"
#include "minic/driver/target.h"
#include "minic/passes/pass_manager.h"
#include "minic/schedule/rules.h"

#include <cstdlib>
#include <filesystem>

namespace minic::schedule::test {
namespace {

const Target& gpu() {
  static const Target target = parse_target("cuda -arch=sm_90");
  return target;
}

// The kernel as the driver compiles it for the GPU: the default GPU schedule, then the
// default loop passes.
loop::PrimFunc gpu_compiled(const loop::PrimFunc& func) {
  loop::LoopModule module{{default_gpu_schedule(func, gpu())}};
  run_passes(module, loop::default_loop_pipeline());
  return module.functions[0];
}

// check_same_outputs for a kernel whose loop passes flattened its parameters: the same
// random arguments, each viewed with the flat shape.
void check_same_flat_outputs(const loop::PrimFunc& before, const loop::PrimFunc& after,
                             uint32_t seed, bool exact) {
  std::vector<Tensor> arguments = random_arguments(before, seed);
  std::vector<Tensor> flat;
  for (size_t i = 0; i < arguments.size(); ++i) {
    flat.push_back(arguments[i].reshaped(after.params[i]->shape));
  }
  std::vector<Tensor> expected;
  for (Tensor& result : run_on(before, arguments)) {
    expected.push_back(result.reshaped({result.num_elements()}));
  }
  INFO("after:\n" << loop::print_func(after));
  CHECK(same_results(expected, run_on(after, flat), exact));
}

size_t count(const std::string& text, const std::string& word) {
  size_t n = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

TEST_CASE("the default GPU schedule keeps every kernel's results", "[cuda][schedule]") {
  for (const ScheduleKernel& kernel : kScheduleKernels) {
    INFO(kernel.name);
    loop::PrimFunc func = parse_func(kernel.text);
    loop::PrimFunc scheduled = default_gpu_schedule(func, gpu());
    std::string text = loop::print_func(scheduled);
    CHECK(count(text, "bind(blockIdx.x)") >= 1);
    CHECK(count(text, "bind(threadIdx.x)") >= 1);
    // A staged kernel (the GEMM rule's registers and shared tiles) runs only once
    // compact-buffers has placed its buffers in the thread blocks and threads.
    if (count(text, " local {") == 0) check_same_outputs(func, scheduled, 11, kernel.exact);
    check_same_flat_outputs(func, gpu_compiled(func), 12, kernel.exact);
  }
}

// C[b, i, j] = sum over k of A[b, i, k] * B[b, k, j]: a batch of GEMMs.
const char* const kBatchedGemm = R"(func @bmm(A: f32[2,32,16], B: f32[2,16,64], C: f32[2,32,64]) {
  for b in 0..2 {
    for i in 0..32 {
      for j in 0..64 {
        for k in 0..16 {
          block C(vb = spatial(2) b, vi = spatial(32) i, vj = spatial(64) j, vk = reduce(16) k) {
            reads(A[vb, vi, vk], B[vb, vk, vj], C[vb, vi, vj]) writes(C[vb, vi, vj])
            init { C[vb, vi, vj] = 0.0 }
            C[vb, vi, vj] = C[vb, vi, vj] + A[vb, vi, vk] * B[vb, vk, vj]
          }
        }
      }
    }
  }
})";

TEST_CASE("the GPU GEMM rule: shared tiles, register tiles, barriers", "[cuda][schedule]") {
  struct Case {
    const char* text;
    const char* a_tile;  // the shared A tile after the loop passes
    const char* b_tile;
    const char* registers;  // the thread's accumulator
    const char* blocks;     // the grid
    size_t barriers;        // 2 in a loop over k steps, 1 for a single step
  };
  // kGemmKernel: 64 x 48 x 32, 4 x 1 register tiles, two k steps; the batch: 2 x 32 x
  // 64 x 16, 2 x 4 register tiles, one k step, the batch on blockIdx.z.
  for (const Case& c : {Case{kGemmKernel, "A_shared: f32[1024] shared", "B_shared: f32[256] shared",
                             "C_local: f32[4] local", "grid (3, 1, 1)", 2},
                        Case{kBatchedGemm, "A_shared: f32[512] shared",
                             "B_shared: f32[1024] shared", "C_local: f32[8] local",
                             "grid (1, 1, 2)", 1}}) {
    loop::PrimFunc func = parse_func(c.text);
    loop::PrimFunc compiled = gpu_compiled(func);
    std::string text = loop::print_func(compiled);
    INFO(text);
    CHECK(count(text, c.a_tile) == 1);
    CHECK(count(text, c.b_tile) == 1);
    CHECK(count(text, c.registers) == 1);
    // One barrier before each k step's copies (the threads may still read the last
    // step's tiles), one between the copies and their use; the first is not needed
    // where there is one k step, which simplify leaves as no loop.
    CHECK(count(text, "barrier()") == c.barriers);
    CHECK(count(text, "bind(threadIdx.y)") == 3);  // the thread's rows, and both copies'
    loop::LoopModule module{{compiled}};
    CHECK(codegen::emit_cuda(module, gpu()).source.find(c.blocks) != std::string::npos);
    check_same_flat_outputs(func, compiled, 13, true);
  }
}

TEST_CASE("the GPU GEMM rule leaves what it cannot tile to one thread per output",
          "[cuda][schedule]") {
  // 20 rows: not a multiple of 16.
  std::string text = kGemmKernel;
  for (const char* from : {"64,32]", "64,48]", "spatial(64)", "0..64"}) {
    std::string to = std::string(from);
    to.replace(to.find("64"), 2, "20");
    text.replace(text.find(from), std::string(from).size(), to);
  }
  loop::PrimFunc func = parse_func(text);
  std::string scheduled = loop::print_func(default_gpu_schedule(func, gpu()));
  INFO(scheduled);
  CHECK(count(scheduled, "shared") == 0);
  CHECK(count(scheduled, "fused") >= 1);  // the one-thread-per-output rule's fused loop
  check_same_flat_outputs(func, gpu_compiled(func), 14, true);
}

// A 3x3 convolution as src/lower writes it for a CUDA target: the 6 x 6 output positions
// one loop p, 16 output channels.
const char* const kConvPositions = R"(func @conv(X: f32[1,3,8,8], W: f32[16,3,3,3], Y: f32[1,16,36]) {
  for n in 0..1 {
    for f in 0..16 {
      for p in 0..36 {
        for c in 0..3 {
          for r in 0..3 {
            for s in 0..3 {
              block Y(vn = spatial(1) n, vf = spatial(16) f, vp = spatial(36) p, vc = reduce(3) c, vr = reduce(3) r, vs = reduce(3) s) {
                reads(X[vn, vc, floordiv(vp, 6) + vr, floormod(vp, 6) + vs], W[vf, vc, vr, vs], Y[vn, vf, vp]) writes(Y[vn, vf, vp])
                init { Y[vn, vf, vp] = 0.0 }
                Y[vn, vf, vp] = Y[vn, vf, vp] + X[vn, vc, floordiv(vp, 6) + vr, floormod(vp, 6) + vs] * W[vf, vc, vr, vs]
              }
            }
          }
        }
      }
    }
  }
})";

TEST_CASE("the GPU convolution rule: a register tile of output channels per thread",
          "[cuda][schedule]") {
  // 8 x 2 output channels a block, 2 a thread; the 36 positions in blocks of 32 threads,
  // the last one guarded.
  loop::PrimFunc func = parse_func(kConvPositions);
  loop::PrimFunc compiled = gpu_compiled(func);
  std::string printed = loop::print_func(compiled);
  INFO(printed);
  CHECK(count(printed, "Y_local: f32[2] local") == 1);
  CHECK(count(printed, "shared") == 0);
  loop::LoopModule module{{compiled}};
  std::string cuda = codegen::emit_cuda(module, gpu()).source;
  CHECK(cuda.find("// grid (2, 1, 1), block (32, 8, 1)") != std::string::npos);
  check_same_flat_outputs(func, compiled, 15, true);
}

TEST_CASE("the GPU reduction rule: a thread block per output, partials in shared memory",
          "[cuda][schedule]") {
  // Rows of 100: 64 threads a row (the largest power of two up to 100), two steps, the
  // second guarded; then thread 0 sums the 64 partials.
  std::string text = kRowSumKernel;
  for (const char* from : {"16,24]", "reduce(24)", "0..24"}) {
    std::string to = from;
    to.replace(to.find("24"), 2, "100");
    text.replace(text.find(from), std::string(from).size(), to);
  }
  loop::PrimFunc func = parse_func(text);
  loop::PrimFunc compiled = gpu_compiled(func);
  std::string printed = loop::print_func(compiled);
  INFO(printed);
  CHECK(count(printed, "S_rf: f32[64] shared") == 1);
  loop::LoopModule module{{compiled}};
  std::string cuda = codegen::emit_cuda(module, gpu()).source;
  CHECK(cuda.find("// grid (16, 1, 1), block (64, 1, 1)") != std::string::npos);
  CHECK(count(cuda, "__syncthreads();  // the thread nest before ends") == 1);
  check_same_flat_outputs(func, compiled, 16, false);
}

TEST_CASE("the GPU rules need a CUDA target", "[cuda][schedule]") {
  CHECK_THROWS_WITH(default_gpu_schedule(parse_func(kGemmKernel), parse_target("llvm")),
                    Catch::Contains("the default GPU rules need a CUDA target"));
}

TEST_CASE("emit_cuda makes a kernel per launch, with its grid, block and arguments",
          "[cuda][codegen]") {
  // The elementwise chain: three nests over 32 x 24, two scratch buffers between them.
  loop::LoopModule module{{gpu_compiled(parse_func(kElementwiseKernel))}};
  codegen::CudaModule cuda = codegen::emit_cuda(module, gpu());
  REQUIRE(cuda.functions.size() == 1);
  const codegen::CudaFunction& chain = cuda.functions[0];
  CHECK(chain.num_params == 3);
  REQUIRE(chain.scratch.size() == 2);
  CHECK(chain.scratch[0].bytes == 32 * 24 * 4);
  REQUIRE(chain.launches.size() == 3);
  CHECK(count(cuda.source, "extern \"C\" __global__ void __launch_bounds__(256) ") == 3);
  for (const codegen::CudaLaunch& launch : chain.launches) {
    INFO(launch.kernel);
    CHECK(count(cuda.source, " " + launch.kernel + "(") == 1);
    CHECK(launch.grid == std::array<int64_t, 3>{3, 1, 1});  // 768 elements, 256 a block
    CHECK(launch.block == std::array<int64_t, 3>{256, 1, 1});
    CHECK(launch.dynamic_shared_bytes == 0);
  }
  // A (0), B (1), D (2), then the scratch buffers T and U in the order the host code
  // allocates them: add reads A and B, writes T; sub reads U and A, writes D.
  int t = chain.scratch[0].name == "T" ? 3 : 4, u = 7 - t;
  CHECK(chain.scratch[t - 3].name == "T");
  CHECK(chain.launches[0].args == std::vector<int>{0, 1, t});
  CHECK(chain.launches[2].args == std::vector<int>{0, 2, u});
  // 768 is a multiple of 256: no guard on the threads, none on the blocks.
  CHECK(count(cuda.source, "if (") == 0);
  // No header: the prelude defines what the kernels use.
  CHECK(count(cuda.source, "#include") == 0);

  // The softmax's three blocks share its row loop: one launch, a thread per row, each
  // running the row's maximum, sum and quotient.
  codegen::CudaModule softmax =
      codegen::emit_cuda({{gpu_compiled(parse_func(kSoftmaxKernel))}}, gpu());
  REQUIRE(softmax.functions[0].launches.size() == 1);
  CHECK(softmax.functions[0].launches[0].block == std::array<int64_t, 3>{8, 1, 1});
  CHECK(softmax.functions[0].scratch.size() == 2);
}

// A GPU kernel written by hand: a shared-memory stage, a barrier, a thread loop shorter
// than the block, and a thread block of 32 threads over 1000 elements (a guard).
const char* const kReverseKernel = R"(func @reverse(X: f32[1000], Y: f32[1000]) {
  for bx in 0..32 bind(blockIdx.x) {
    alloc S: f32[32] shared {
      for tx in 0..32 bind(threadIdx.x) {
        if (bx * 32 + tx < 1000) {
          S[tx] = X[bx * 32 + tx]
        }
        barrier()
        if (bx * 32 + 31 - tx < 1000) {
          Y[bx * 32 + 31 - tx] = S[tx] * 2.0
        }
      }
      for t in 0..16 bind(threadIdx.x) {
        Y[bx * 32 + t] = Y[bx * 32 + t]
      }
    }
  }
}
)";

TEST_CASE("shared memory, barriers and guards in the CUDA C", "[cuda][codegen]") {
  loop::LoopModule module{{parse_func(kReverseKernel)}};
  codegen::CudaModule cuda = codegen::emit_cuda(module, gpu());
  const std::string& source = cuda.source;
  INFO(source);
  CHECK(count(source, "__shared__ float S[32];") == 1);
  // The barrier of the kernel, and one between the two thread nests of the block.
  CHECK(count(source, "__syncthreads();") == 2);
  // The 16-thread loop runs in half of the block: guarded; the 32-thread one is not.
  CHECK(count(source, "if (t < 16) {") == 1);
  CHECK(count(source, "if (tx < 32)") == 0);
  CHECK(cuda.functions[0].launches[0].grid == std::array<int64_t, 3>{32, 1, 1});
}

TEST_CASE("more than 48 KB of shared memory is dynamic shared memory", "[cuda][codegen]") {
  const char* text = R"(func @big(X: f32[32768], Y: f32[32768]) {
  for bx in 0..2 bind(blockIdx.x) {
    alloc S: f32[16384] shared {
      for tx in 0..256 bind(threadIdx.x) {
        for k in 0..64 {
          S[k * 256 + tx] = X[bx * 16384 + k * 256 + tx]
        }
        barrier()
        for k in 0..64 {
          Y[bx * 16384 + k * 256 + tx] = S[16383 - k * 256 - tx]
        }
      }
    }
  }
}
)";
  codegen::CudaModule cuda = codegen::emit_cuda({{parse_func(text)}}, gpu());
  CHECK(cuda.functions[0].launches[0].dynamic_shared_bytes == 65536);
  CHECK(count(cuda.source, "extern __shared__ __align__(16) unsigned char minic_shared[];") == 1);
  CHECK(count(cuda.source, "float* S = (float*)(minic_shared + 0);") == 1);
}

TEST_CASE("emit_cuda refuses what it cannot launch, naming the function", "[cuda][codegen]") {
  auto refusal = [](const char* text) {
    try {
      codegen::emit_cuda({{parse_func(text)}}, gpu());
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("(no error)");
  };
  CHECK_THAT(refusal(R"(func @half(X: f16[4], Y: f16[4]) {
  for i in 0..4 bind(threadIdx.x) {
    Y[i] = X[i]
  }
}
)"),
             Catch::Contains("half: X is f16, which the CUDA back end does not compute in"));
  CHECK_THAT(refusal(R"(func @host_loop(X: f32[4,8], Y: f32[4,8]) {
  for i in 0..4 {
    for b in 0..8 bind(blockIdx.x) {
      Y[i, b] = X[i, b]
    }
  }
}
)"),
             Catch::Contains("host_loop: loop b is bound to blockIdx.x inside another statement"));
  CHECK_THAT(refusal(R"(func @wide(X: f32[2048], Y: f32[2048]) {
  for t in 0..2048 bind(threadIdx.x) {
    Y[t] = X[t]
  }
}
)"),
             Catch::Contains("wide: a thread block of 2048 x 1 x 1 threads; CUDA allows at most 1024"));
  CHECK_THAT(refusal(R"(func @once(X: f32[8], Y: f32[8]) {
  for b in 0..2 bind(blockIdx.x) {
    Y[b] = 0.0
    for t in 0..4 bind(threadIdx.x) {
      Y[b * 4 + t] = X[b * 4 + t]
    }
  }
}
)"),
             Catch::Contains("once: a Store between the blockIdx loops and the threadIdx loops"));
}

TEST_CASE("NVRTC compiles the CUDA C to a cubin for sm_90 and sm_90a", "[cuda][nvrtc]") {
  // ctest passes NVRTC's path (tests/CMakeLists.txt); by hand, set MINIC_NVRTC.
  INFO("NVRTC not found: scripts/setup.sh installs it, MINIC_NVRTC names it");
  REQUIRE(codegen::nvrtc_version());
  loop::LoopModule module{{gpu_compiled(parse_func(kSoftmaxKernel)),
                           gpu_compiled(parse_func(kGemmKernel)), parse_func(kReverseKernel)}};
  codegen::CudaModule cuda = codegen::emit_cuda(module, gpu());
  for (const std::string arch : {"sm_90", "sm_90a"}) {
    codegen::CudaBinary binary = codegen::compile_cuda(cuda.source, arch, true);
    CHECK(binary.cubin.substr(0, 4) == "\x7f" "ELF");
    CHECK(count(binary.ptx, ".entry") == 3);  // a kernel each
    CHECK(count(binary.log, "0 bytes spill stores, 0 bytes spill loads") == 3);
  }
  CHECK_THROWS_WITH(codegen::compile_cuda("this is not CUDA", "sm_90"),
                    Catch::Contains("NVRTC could not compile the kernels for sm_90"));
}

TEST_CASE("NVRTC's output is cached on disk by the program and its options", "[cuda][nvrtc]") {
  REQUIRE(codegen::nvrtc_version());
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "minic-cache-test";
  std::filesystem::remove_all(dir);
  setenv("MINIC_CACHE_DIR", dir.c_str(), 1);
  // A program no other test compiles, so that neither cache holds it yet.
  std::string source = std::string(codegen::cuda_prelude()) +
                       "extern \"C\" __global__ void cached_once(float* y) { y[0] = 7.0f; }\n";
  codegen::CudaBinary first = codegen::compile_cuda(source, "sm_90");
  int entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "cuda")) {
    entries += entry.path().extension() == ".cubin";
  }
  CHECK(entries == 1);
  // Another arch is another entry; the same program again is the same cubin.
  codegen::compile_cuda(source, "sm_90a");
  CHECK(codegen::compile_cuda(source, "sm_90").cubin == first.cubin);
  entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "cuda")) {
    entries += entry.path().extension() == ".cubin";
  }
  CHECK(entries == 2);
  unsetenv("MINIC_CACHE_DIR");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace minic::schedule::test
