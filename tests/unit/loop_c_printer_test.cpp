// Unit tests for the "equivalent C" printer: the text a student reads, and, where a C
// compiler is installed, that the C of CPU kernels compiles as C99 and computes what the
// loop IR says. Course module 3.
#include "minic/ir/loop/c_printer.h"
#include "minic/support/file.h"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>

using namespace minic;
using namespace minic::loop;

namespace {

Expr i64(int64_t value) { return IntImm::make(value); }

// C[m, n] = sum_k A[m, k] * B[k, n], with C's rows padded to `c_row_stride` elements.
PrimFunc matmul(int64_t M, int64_t N, int64_t K, int64_t c_row_stride) {
  Buffer A = BufferNode::make("A", DType::f32, {M, K});
  Buffer B = BufferNode::make("B", DType::f32, {K, N});
  Buffer C = BufferNode::make_strided("C", DType::f32, {M, N}, {c_row_stride, 1});
  Expr i = Var::make("i"), j = Var::make("j"), k = Var::make("k");
  Expr vi = Var::make("vi"), vj = Var::make("vj"), vk = Var::make("vk");
  Stmt update = Store::make(
      C, {vi, vj}, Load::make(C, {vi, vj}) + Load::make(A, {vi, vk}) * Load::make(B, {vk, vj}));
  Stmt block = Block::make({.name = "C",
                            .iter_vars = {{vi, M, IterKind::spatial, i},
                                          {vj, N, IterKind::spatial, j},
                                          {vk, K, IterKind::reduce, k}},
                            .init = Store::make(C, {vi, vj}, FloatImm::make(0.0)),
                            .body = update});
  Stmt loop_k = For::make(k, i64(0), i64(K), ForKind::serial, block);
  Stmt loop_j = For::make(j, i64(0), i64(N), ForKind::serial, loop_k);
  return {"matmul", {A, B, C}, For::make(i, i64(0), i64(M), ForKind::parallel, loop_j)};
}

// Y[j*4 .. j*4+3] = X[...] * 2 + 1, four lanes at a time.
PrimFunc scale_add() {
  Buffer X = BufferNode::make("X", DType::f32, {8});
  Buffer Y = BufferNode::make("Y", DType::f32, {8});
  Expr j = Var::make("j");
  Expr lanes = Ramp::make(j * 4, i64(1), 4);
  Expr value = Load::make(X, {lanes}) * Broadcast::make(FloatImm::make(2.0), 4) +
               Broadcast::make(FloatImm::make(1.0), 4);
  return {"scale_add",
          {X, Y},
          For::make(j, i64(0), i64(2), ForKind::vectorized, Store::make(Y, {lanes}, value))};
}

// Integer index arithmetic on negative numbers, where C's / and % differ from floor.
PrimFunc index_math() {
  Buffer O = BufferNode::make("O", DType::i64, {8});
  Expr i = Var::make("i.0");  // not a C identifier
  Expr shifted = i - 5;
  Expr value = Select::make(LT::make(i, i64(4)), FloorDiv::make(shifted, i64(3)),
                            FloorMod::make(shifted, i64(3))) +
               Min::make(i, i64(2)) * 100 + Div::make(shifted, i64(2)) * 1000;
  Stmt store = Store::make(O, {i}, value);
  return {"index_math", {O}, For::make(i, i64(0), i64(8), ForKind::unrolled, store)};
}

// Runs `command` in the shell; returns its exit status.
int run_shell(const std::string& command) { return std::system(command.c_str()); }

}  // namespace

TEST_CASE("the matmul prints as equivalent C", "[loop_c]") {
  // The course's matmul, with its outer loop serial.
  PrimFunc serial = matmul(128, 256, 64, 256);
  const For* loop_i = serial.body.as<For>();
  serial.body = For::make(loop_i->var, loop_i->min, loop_i->extent, ForKind::serial, loop_i->body);
  REQUIRE(print_c(serial) ==
          "void matmul(const float* restrict A, const float* restrict B, float* restrict C) {\n"
          "  for (int64_t i = 0; i < 128; ++i) {\n"
          "    for (int64_t j = 0; j < 256; ++j) {\n"
          "      for (int64_t k = 0; k < 64; ++k) {\n"
          "        // block C: spatial vi, vj; reduce vk\n"
          "        {\n"
          "          const int64_t vi = i;\n"
          "          const int64_t vj = j;\n"
          "          const int64_t vk = k;\n"
          "          if (vk == 0) {  // init: the first step of the reduction\n"
          "            C[vi * 256 + vj] = 0.0f;\n"
          "          }\n"
          "          C[vi * 256 + vj] = C[vi * 256 + vj] + A[vi * 64 + vk] * B[vk * 256 + vj];\n"
          "        }\n"
          "      }\n"
          "    }\n"
          "  }\n"
          "}\n");
}

TEST_CASE("loop kinds, vectors and names in C", "[loop_c]") {
  std::string parallel = print_c(matmul(4, 4, 4, 4));
  CHECK_THAT(parallel, Catch::Contains("  #pragma omp parallel for\n  for (int64_t i = 0;"));
  std::string vector = print_c(scale_add());
  CHECK_THAT(vector, Catch::Contains("for (int64_t j = 0; j < 2; ++j) {  // vectorized\n"));
  CHECK_THAT(
      vector,
      Catch::Contains(
          "    for (int64_t lane = 0; lane < 4; ++lane) {  // the 4 lanes of a vector store\n"
          "      Y[j * 4 + lane] = X[j * 4 + lane] * 2.0f + 1.0f;\n"));
  std::string index = print_c(index_math());
  CHECK_THAT(index, Catch::Contains("void index_math(int64_t* restrict O) {"));
  CHECK_THAT(index, Catch::Contains("for (int64_t i_0 = 0; i_0 < 8; ++i_0) {  // unrolled"));
  CHECK_THAT(index,
             Catch::Contains("O[i_0] = (i_0 < 4 ? floordiv(i_0 - 5, 3) : floormod(i_0 - 5, 3))"
                             " + min(i_0, 2) * 100 + (i_0 - 5) / 2 * 1000;"));
}

TEST_CASE("GPU code shows its thread axes, shared memory and barriers", "[loop_c]") {
  Buffer X = BufferNode::make("X", DType::f32, {64});
  Buffer S = BufferNode::make("S", DType::f32, {32}, MemoryScope::shared);
  Buffer T = BufferNode::make("T", DType::f32, {2}, MemoryScope::local);
  Expr bx = Var::make("bx"), tx = Var::make("tx"), v = Var::make("v");
  Expr global_index = bx * 32 + tx;
  Stmt block = Block::make({.name = "out",
                            .iter_vars = {{v, 64, IterKind::spatial, global_index}},
                            .alloc_buffers = {T},
                            .predicate = LT::make(global_index, i64(60)),
                            .body = Store::make(X, {v}, Load::make(S, {i64(31) - tx}))});
  Stmt body = Seq::make({Store::make(S, {tx}, Load::make(X, {global_index})),
                         Evaluate::make(Call::make(DataType::int64(), "barrier", {})), block});
  Stmt threads = For::make(tx, i64(0), i64(32), ForKind::thread_binding, body, "threadIdx.x");
  PrimFunc func{"reverse",
                {X},
                For::make(bx, i64(0), i64(2), ForKind::thread_binding, Allocate::make(S, threads),
                          "blockIdx.x")};
  std::string c = print_c(func);
  CHECK_THAT(c, Catch::Contains("void reverse(float* restrict X) {"));
  CHECK_THAT(c, Catch::Contains("for (int64_t bx = 0; bx < 2; ++bx) {  // bound to blockIdx.x\n"));
  CHECK_THAT(c, Catch::Contains("    __shared__ float S[32];  // shared [32]\n"));
  CHECK_THAT(c,
             Catch::Contains("__syncthreads();  // barrier: every thread of the block waits here"));
  CHECK_THAT(c, Catch::Contains("const int64_t v = bx * 32 + tx;\n"));
  CHECK_THAT(c, Catch::Contains("float T[2];  // local [2]\n"));
  CHECK_THAT(c, Catch::Contains("if (bx * 32 + tx < 60) {  // the block's predicate\n"));
  CHECK_THAT(c, Catch::Contains("X[v] = S[31 - tx];"));
}

TEST_CASE("the C of CPU kernels compiles as C99 and computes what the loop IR says", "[loop_c]") {
  // scripts/setup.sh installs gcc, and `minic compile` needs `cc` too: without it the
  // check fails rather than passing unchecked.
  REQUIRE(run_shell("command -v cc > /dev/null 2>&1") == 0);
  LoopModule module{{matmul(3, 5, 4, 8), scale_add(), index_math()}};
  // A main that fills the inputs, runs the kernels and prints every output element.
  std::string main = R"(
#include <stdio.h>
int main(void) {
  float A[12], B[20], C[24], X[8], Y[8];
  int64_t O[8];
  for (int n = 0; n < 12; ++n) A[n] = 0.5f * n;
  for (int n = 0; n < 20; ++n) B[n] = n - 10.0f;
  for (int n = 0; n < 24; ++n) C[n] = -1.0f;
  for (int n = 0; n < 8; ++n) X[n] = n * 0.25f;
  matmul(A, B, C);
  scale_add(X, Y);
  index_math(O);
  for (int n = 0; n < 24; ++n) printf("%.9g\n", C[n]);
  for (int n = 0; n < 8; ++n) printf("%.9g\n", Y[n]);
  for (int n = 0; n < 8; ++n) printf("%lld\n", (long long)O[n]);
  return 0;
}
)";
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("minic_loop_c_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  struct RemoveDir {
    std::filesystem::path path;
    ~RemoveDir() { std::filesystem::remove_all(path); }
  } remove_dir{dir};
  write_file((dir / "kernels.c").string(), print_c(module) + main);
  // Without OpenMP, `#pragma omp` is a pragma C99 lets a compiler ignore.
  std::string compile = "cc -std=c99 -Wall -Wno-unknown-pragmas -o " + (dir / "kernels").string() +
                        " " + (dir / "kernels.c").string() + " -lm 2> " +
                        (dir / "errors.txt").string();
  int status = run_shell(compile);
  INFO(read_file((dir / "errors.txt").string()));
  REQUIRE(status == 0);
  REQUIRE(read_file((dir / "errors.txt").string()).empty());  // no warnings either
  REQUIRE(run_shell((dir / "kernels").string() + " > " + (dir / "out.txt").string()) == 0);
  std::istringstream out(read_file((dir / "out.txt").string()));

  std::vector<double> values;
  for (double value; out >> value;) values.push_back(value);
  REQUIRE(values.size() == 40);
  // matmul: C's padding columns (5..7 of each 8-wide row) keep their -1.
  for (int m = 0; m < 3; ++m) {
    for (int n = 0; n < 8; ++n) {
      double expected = -1.0;
      if (n < 5) {
        expected = 0.0;
        for (int k = 0; k < 4; ++k) expected += 0.5 * (m * 4 + k) * ((k * 5 + n) - 10.0);
      }
      CHECK(values[m * 8 + n] == Approx(expected));
    }
  }
  for (int n = 0; n < 8; ++n) CHECK(values[24 + n] == Approx(n * 0.25 * 2 + 1));
  // index_math: floor semantics for floordiv/floormod, truncation for `/`.
  for (int64_t i = 0; i < 8; ++i) {
    int64_t shifted = i - 5;
    int64_t floor_div = static_cast<int64_t>(std::floor(shifted / 3.0));
    int64_t floor_mod = shifted - floor_div * 3;
    int64_t expected =
        (i < 4 ? floor_div : floor_mod) + std::min<int64_t>(i, 2) * 100 + (shifted / 2) * 1000;
    CHECK(values[32 + i] == expected);
  }
}
