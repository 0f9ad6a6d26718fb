// The LLVM backend against the interpreter, kernel by kernel: the .mloop files of
// tests/lit/loop, matmul with a reduction block (scalar, vectorised, parallel), guarded
// split tails, local buffers on the stack and the heap, parallel loops on 1 and 4 threads;
// then what it refuses and the text it emits. Course module 6.
#include "llvm_test_util.h"
#include "target_test_util.h"
#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/parser.h"
#include "minic/ir/loop/visitor.h"
#include "minic/passes/loop/vectorize_loops.h"
#include "minic/runtime/thread_pool.h"
#include "minic/support/file.h"

#include <algorithm>
#include <filesystem>

using namespace minic;
using namespace minic::loop;
using namespace minic::loop::test;

namespace {

bool binds_gpu_threads(const PrimFunc& func) {
  struct Finder : IRVisitor {
    bool found = false;
    void visit_For(const For* node) override {
      found = found || node->for_kind == ForKind::thread_binding;
      IRVisitor::visit_For(node);
    }
  } finder;
  finder.visit(func.body);
  return finder.found;
}

// C = A x B as the course writes it; with `scheduled`, the schedule a CPU wants: rows in
// parallel, k outside j, j split by 16 with the inner part vectorized.
PrimFunc matmul(int64_t m, int64_t n, int64_t k, bool scheduled) {
  Buffer A = BufferNode::make("A", DType::f32, {m, k});
  Buffer B = BufferNode::make("B", DType::f32, {k, n});
  Buffer C = BufferNode::make("C", DType::f32, {m, n});
  Expr i = Var::make("i"), j = Var::make("j"), r = Var::make("k");
  Expr j_outer = Var::make("j.0"), j_inner = Var::make("j.1");
  Expr vi = Var::make("vi"), vj = Var::make("vj"), vk = Var::make("vk");
  Expr j_binding = scheduled ? j_outer * 16 + j_inner : j;
  Stmt block = Block::make(
      {.name = "C",
       .iter_vars = {{vi, m, IterKind::spatial, i}, {vj, n, IterKind::spatial, j_binding},
                     {vk, k, IterKind::reduce, r}},
       .init = Store::make(C, {vi, vj}, f32(0.0)),
       .body = Store::make(C, {vi, vj},
                           Load::make(C, {vi, vj}) +
                               Load::make(A, {vi, vk}) * Load::make(B, {vk, vj}))});
  if (!scheduled) {
    return {"matmul", {A, B, C}, for_loop(i, m, for_loop(j, n, for_loop(r, k, block)))};
  }
  Stmt j_loops = for_loop(j_outer, n / 16, for_loop(j_inner, 16, block, ForKind::vectorized));
  return {"matmul", {A, B, C}, for_loop(i, m, for_loop(r, k, j_loops), ForKind::parallel)};
}

// Y[v] = exp(X[v]) over 100 elements, the loop split by 8 with a guard on the tail.
PrimFunc guarded_split(ForKind inner_kind) {
  Buffer X = BufferNode::make("X", DType::f32, {100});
  Buffer Y = BufferNode::make("Y", DType::f32, {100});
  Expr outer = Var::make("i.0"), inner = Var::make("i.1"), v = Var::make("v");
  Expr index = outer * 8 + inner;
  Stmt block = Block::make(
      {.name = "Y",
       .iter_vars = {{v, 100, IterKind::spatial, index}},
       .predicate = LT::make(index, i64(100)),
       .body = Store::make(Y, {v}, Call::make(DataType::f32(), "exp", {Load::make(X, {v})}))});
  return {"guarded", {X, Y}, for_loop(outer, 13, for_loop(inner, 8, block, inner_kind))};
}

// Reverses each row of 16 through a local buffer: Y[i, 15 - k] = 2 * X[i, k].
PrimFunc reverse_rows(MemoryScope scope, bool block_buffer) {
  Buffer X = BufferNode::make("X", DType::f32, {8, 16});
  Buffer Y = BufferNode::make("Y", DType::f32, {8, 16});
  Buffer T = BufferNode::make("T", DType::f32, {16}, scope);
  Expr i = Var::make("i"), k = Var::make("k"), l = Var::make("l");
  Stmt fill = for_loop(k, 16, Store::make(T, {k}, Load::make(X, {i, k}) * f32(2.0)));
  Stmt drain = for_loop(l, 16, Store::make(Y, {i, i64(15) - l}, Load::make(T, {l})));
  Stmt body = Seq::make({fill, drain});
  if (block_buffer) {
    Expr vi = Var::make("vi");
    Stmt inner = substitute(body, {{i.as<Var>(), vi}});
    body = Block::make({.name = "rows",
                        .iter_vars = {{vi, 8, IterKind::spatial, i}},
                        .alloc_buffers = {T},
                        .body = inner});
  } else {
    body = Allocate::make(T, body);
  }
  return {"reverse_rows", {X, Y}, for_loop(i, 8, body)};
}

// Parallel loops inside a serial one, using its variable, allocating in the parallel body,
// with a parallel loop nested inside (run serially) and a select that guards a load.
PrimFunc nested_parallel() {
  Buffer X = BufferNode::make("X", DType::f32, {4, 32});
  Buffer Y = BufferNode::make("Y", DType::f32, {4, 32});
  Buffer T = BufferNode::make("T", DType::f32, {4}, MemoryScope::local);
  Expr i = Var::make("i"), j = Var::make("j"), k = Var::make("k");
  Expr column = j * 4 + k;
  Expr guarded = Select::make(LT::make(column, i64(31)), Load::make(X, {i, column + 1}), f32(-1.0));
  Stmt fill = for_loop(k, 4, Store::make(T, {k}, guarded), ForKind::parallel);
  Stmt drain = For::make(k, i64(0), i64(4), ForKind::serial,
                         Store::make(Y, {i, column},
                                     Load::make(T, {k}) + Cast::make(DataType::f32(), i)));
  Stmt body = Allocate::make(T, Seq::make({fill, drain}));
  return {"nested_parallel", {X, Y}, for_loop(i, 4, for_loop(j, 8, body, ForKind::parallel))};
}

}  // namespace

TEST_CASE("every CPU kernel of tests/lit/loop compiles and matches the interpreter", "[llvm]") {
  std::mt19937 rng(21);
  int compiled = 0;
  // In sorted order, so the random inputs are the same on every run.
  std::vector<std::filesystem::path> paths;
  const char* directory = MINIC_SOURCE_DIR "/tests/lit/loop";
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    if (entry.path().extension() == ".mloop") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  for (const std::filesystem::path& path : paths) {
    LoopModule module;
    try {
      module = parse_loop_module(read_file(path.string()), path.string());
    } catch (const Error&) {
      continue;  // errors.mloop: bad on purpose
    }
    for (const PrimFunc& func : module.functions) {
      if (binds_gpu_threads(func)) continue;
      INFO(path.filename().string() << ": @" << func.name);
      check_compiled(func, random_arguments(func, rng));
      ++compiled;
    }
  }
  CHECK(compiled >= 3);  // matmul, add_relu, add_relu_lowered
}

TEST_CASE("a compiled matmul with a reduction block and init matches the interpreter",
          "[llvm]") {
  std::mt19937 rng(22);
  PrimFunc plain = matmul(24, 32, 20, false);
  // Small integers: sums are exact in any order, so the vectorised, parallel and fused
  // (fast-math) versions must agree exactly; C starts as garbage the init overwrites.
  std::vector<Tensor> args = {small_int_tensor({24, 20}, rng), small_int_tensor({20, 32}, rng),
                              filled(DType::f32, {24, 32}, 777.0)};
  check_compiled(plain, args, {0, 0});
  PrimFunc scheduled = matmul(24, 32, 20, true);
  check_compiled(plain, scheduled, args, {0, 0});
  PrimFunc vectorized = vectorize_loops(scheduled);
  check_compiled(plain, vectorized, args, {0, 0});
  codegen::LlvmOptions fast;
  fast.fast_math = true;
  check_compiled(plain, vectorized, args, {0, 0}, fast);
}

TEST_CASE("a guarded split tail compiles, as a scalar loop and for LLVM's vectoriser",
          "[llvm]") {
  std::mt19937 rng(23);
  PrimFunc serial = guarded_split(ForKind::serial);
  std::vector<Tensor> args = random_arguments(serial, rng);
  check_compiled(serial, args);
  check_compiled(serial, guarded_split(ForKind::unrolled), args);
  // The predicate depends on the vector loop: vectorize_loops leaves the loop.
  PrimFunc vectorized = vectorize_loops(guarded_split(ForKind::vectorized));
  check_compiled(serial, vectorized, args);
}

TEST_CASE("local buffers live on the stack or, when large, on the heap", "[llvm]") {
  std::mt19937 rng(24);
  codegen::LlvmOptions heap;
  heap.max_stack_bytes = 16;  // T (64 bytes) goes to the heap
  for (bool block_buffer : {false, true}) {
    INFO((block_buffer ? "a block's buffer" : "an Allocate"));
    PrimFunc func = reverse_rows(MemoryScope::local, block_buffer);
    std::vector<Tensor> args = random_arguments(func, rng);
    check_compiled(func, args);
    check_compiled(func, func, args, {1e-5, 1e-6}, heap);
    // Where T is, in the IR before optimisation: an alloca of its 16 floats, or a 64-byte
    // aligned_alloc freed after its last use.
    codegen::LlvmOptions unoptimised;
    unoptimised.opt_level = 0;
    std::string stack_ir = codegen::emit_llvm_text(LoopModule{{func}}, unoptimised);
    CHECK_THAT(stack_ir, Catch::Contains("alloca [16 x float]"));
    CHECK_THAT(stack_ir, !Catch::Contains("aligned_alloc"));
    unoptimised.max_stack_bytes = heap.max_stack_bytes;
    std::string heap_ir = codegen::emit_llvm_text(LoopModule{{func}}, unoptimised);
    CHECK_THAT(heap_ir, !Catch::Contains("alloca [16 x float]"));
    CHECK_THAT(heap_ir, Catch::Contains("@aligned_alloc(i64 64, i64 64)"));
    CHECK_THAT(heap_ir, Catch::Contains("call void @free("));
  }
}

TEST_CASE("parallel loops give the interpreter's results on 1 and on 4 threads", "[llvm]") {
  std::mt19937 rng(25);
  PrimFunc nested = nested_parallel();
  PrimFunc plain = matmul(24, 32, 20, false);
  PrimFunc scheduled = vectorize_loops(matmul(24, 32, 20, true));
  std::vector<Tensor> matmul_args = {small_int_tensor({24, 20}, rng),
                                     small_int_tensor({20, 32}, rng),
                                     filled(DType::f32, {24, 32}, 777.0)};
  for (int threads : {1, 4}) {
    INFO(threads << " threads");
    runtime::ThreadPool pool(threads);
    runtime::ThreadPoolScope use(pool);
    check_compiled(nested, random_arguments(nested, rng));
    check_compiled(plain, scheduled, matmul_args, {0, 0});
  }
}

TEST_CASE("GPU loops, barriers and storage-only types are errors for the LLVM backend",
          "[llvm]") {
  LoopModule gpu = parse_loop_module(read_file(MINIC_SOURCE_DIR "/tests/lit/loop/gpu.mloop"),
                                     "gpu.mloop");
  CHECK_THROWS_WITH(codegen::compile_llvm(gpu, {}),
                    Catch::Contains("@reverse_scale") && Catch::Contains("CUDA backend"));
  Buffer A = BufferNode::make("A", DType::f8e4m3fn, {4});
  Expr i = Var::make("i");
  PrimFunc storage_only{"fp8", {A}, for_loop(i, 4, Store::make(A, {i}, Load::make(A, {i})))};
  CHECK_THROWS_WITH(codegen::compile_llvm(LoopModule{{storage_only}}, {}),
                    Catch::Contains("@fp8") && Catch::Contains("A"));
  auto compiled = codegen::compile_llvm(LoopModule{{reverse_rows(MemoryScope::local, false)}}, {});
  CHECK_THROWS_WITH(compiled->find("nope"), Catch::Contains("@nope"));
}

TEST_CASE("the backend emits LLVM IR, assembly and an object file, deterministically",
          "[llvm]") {
  LoopModule module =
      parse_loop_module(read_file(MINIC_SOURCE_DIR "/tests/lit/loop/vectorized.mloop"),
                        "vectorized.mloop");
  std::string ir = codegen::emit_llvm_text(module, {});
  CHECK(ir == codegen::emit_llvm_text(module, {}));
  CHECK_THAT(ir, Catch::Contains("define void @minic_kernel_add_relu_lowered(ptr"));
  CHECK_THAT(ir, Catch::Contains("<8 x float>"));
  CHECK_THAT(ir, Catch::Contains(fmt::format("\"prefer-vector-width\"=\"{}\"",
                                             codegen::host_target().cpu().vector_bytes * 8)));
  CHECK_THAT(ir, Catch::Contains("@minic_parallel_for"));
  std::string assembly = codegen::emit_asm_text(module, {});
  CHECK_THAT(assembly, Catch::Contains("add_relu_lowered:"));
  std::vector<char> object = codegen::emit_object(module, {});
  REQUIRE(object.size() > 4);
  CHECK(std::string(object.begin(), object.begin() + 4) == "\x7f" "ELF");
  auto compiled = codegen::compile_llvm(module, {});
  CHECK(compiled->function_names() == std::vector<std::string>{"add_relu", "add_relu_lowered"});
  CHECK(compiled->llvm_ir() == ir);
}

TEST_CASE("code is made for the target's CPU: its name, features and widest vectors",
          "[llvm]") {
  // Sixteen f32 lanes a store: one zmm register with AVX-512, two ymm with AVX2.
  LoopModule module = parse_loop_module(R"(
func @scale(X: f32[1024], Y: f32[1024]) {
  for i in 0..64 {
    Y[ramp(i * 16, 1, 16)] = X[ramp(i * 16, 1, 16)] * broadcast(2.0, 16)
  }
}
)", "scale.mloop");
  codegen::LlvmOptions avx512;
  avx512.target = testing::avx512();
  codegen::LlvmOptions avx2;
  avx2.target = testing::avx2();
  std::string avx512_ir = codegen::emit_llvm_text(module, avx512);
  CHECK_THAT(avx512_ir, Catch::Contains("\"target-cpu\"=\"skylake-avx512\""));
  CHECK_THAT(avx512_ir, Catch::Contains("+avx512f"));
  CHECK_THAT(avx512_ir, Catch::Contains("\"prefer-vector-width\"=\"512\""));
  std::string avx2_ir = codegen::emit_llvm_text(module, avx2);
  CHECK_THAT(avx2_ir, Catch::Contains("\"target-cpu\"=\"x86-64-v3\""));
  CHECK_THAT(avx2_ir, !Catch::Contains("avx512f"));
  CHECK_THAT(avx2_ir, Catch::Contains("\"prefer-vector-width\"=\"256\""));

  std::string avx512_asm = codegen::emit_asm_text(module, avx512);
  CHECK_THAT(avx512_asm, Catch::Contains("zmm"));
  std::string avx2_asm = codegen::emit_asm_text(module, avx2);
  CHECK_THAT(avx2_asm, Catch::Contains("ymm"));
  CHECK_THAT(avx2_asm, !Catch::Contains("zmm"));
  // Compiled for AVX2, the code runs here (every x86-64 machine these tests run on has it).
  Tensor x(DType::f32, {1024});
  for (int64_t k = 0; k < 1024; ++k) x.values<float>()[k] = static_cast<float>(k);
  check_compiled(module.functions[0], {x, Tensor(DType::f32, {1024})}, kCompiledTolerance, avx2);
}

TEST_CASE("the LLVM backend refuses a CUDA target, naming it", "[llvm]") {
  LoopModule module =
      parse_loop_module(read_file(MINIC_SOURCE_DIR "/tests/lit/loop/vectorized.mloop"),
                        "vectorized.mloop");
  codegen::LlvmOptions options;
  options.target = cuda_target("sm_90a");
  CHECK_THROWS_WITH(codegen::compile_llvm(module, options),
                    Catch::Contains("target cuda -arch=sm_90a") &&
                        Catch::Contains("compiles for CPUs only"));
}

TEST_CASE("the JIT's object code is cached on disk by each function's LLVM IR", "[llvm]") {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "minic-llvm-cache-test";
  std::filesystem::remove_all(dir);
  setenv("MINIC_CACHE_DIR", dir.c_str(), 1);
  auto objects = [&] {
    int count = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir / "llvm")) {
      count += entry.path().extension() == ".o";
    }
    return count;
  };
  // The guarded exp kernel at O3, from the compiler; again, from the cache; at O1, another
  // entry. Each computes what the interpreter does.
  std::mt19937 rng(3);
  PrimFunc func = guarded_split(ForKind::vectorized);
  std::vector<Tensor> args = random_arguments(func, rng);
  for (int opt_level : {3, 3, 1}) {
    codegen::LlvmOptions options;
    options.opt_level = opt_level;
    check_compiled(func, args, kCompiledTolerance, options);
  }
  CHECK(objects() == 2);
  unsetenv("MINIC_CACHE_DIR");
  std::filesystem::remove_all(dir);
}
