// The toy NPU: a teaching back end for a fixed-function GEMM unit. Course module 6
// (bring your own codegen).
//
// The device: a 16 x 16 systolic array with three tile buffers in its scratchpad (A, B and
// an accumulator, each 16 x 16 f32) and a DMA engine between them and memory. It can do
// four things, each with a fixed cost in cycles:
//
//   npu_clear()              zero the accumulator                                   1
//   npu_load_a / npu_load_b  one 16 x 16 tile from memory (zero-padded at the edges;
//                            B transposed on the way where asked)    8 + 1 per 16 bytes = 72
//   npu_mma()                accumulator += A tile x B tile: one k-step a cycle      16
//   npu_store                the accumulator to memory, with a bias per column (or
//                            row) and a Relu on the way out (the store's epilogue)  72
//
// It runs GEMMs and nothing else: Y = A B (+ bias) (then Relu), A [M, K], B [K, N] (or
// [N, K], transposed), f32. The back end claims the nodes its patterns
// (include/minic/backends/toy_npu.h) turn into such a GEMM; the built-in one, "gemm",
// takes a MatMul or Gemm (alpha = beta = 1, A not transposed, a bias of one value per
// column), alone or fused with a Relu after it. For each it emits a C program that drives
// the device a tile at a time, and the device itself as C functions that compute what the
// hardware would and count its cycles (a simulator). The system's C compiler (`cc`) builds the two into a
// shared library, which minic loads and calls as the node's step. What the emitted C says
// is what a driver for a real fixed-function unit says; only the four functions would be
// the hardware's.
//
// `minic inspect MODEL --partition toy-npu` prints each program and its cycles, which the
// back end also works out from the tile counts: the simulator's count after a run must
// agree (tests/unit/backends_test.cpp checks it: report() after runs).
//
// Chapter: docs/module6-llvm-cpu.md#bring-your-own-codegen
#include "minic/backends/toy_npu.h"

#include "minic/lower/lower.h"
#include "minic/support/error.h"
#include "minic/support/file.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <map>
#include <optional>
#include <filesystem>
#include <unistd.h>

namespace minic {
namespace {

constexpr int64_t kTile = 16;
constexpr int64_t kDmaCycles = 8 + kTile * kTile * 4 / 16;  // a tile: setup + 16 bytes a cycle
constexpr int64_t kMmaCycles = kTile;
constexpr int64_t kClearCycles = 1;

// The device, in C: its state, its four operations and its cycle counter.
constexpr const char* kDevice = R"(/* The toy NPU: a 16 x 16 systolic array and its DMA engine, simulated. */
enum { T = 16, DMA_CYCLES = 8 + T * T * 4 / 16, MMA_CYCLES = T };
static float npu_a[T][T], npu_b[T][T], npu_acc[T][T];
long long toy_npu_cycles;

static void npu_clear(void) {
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < T; ++j) npu_acc[i][j] = 0.0f;
  toy_npu_cycles += 1;
}

/* Tile (r0, c0) of a rows x cols row-major matrix, zero past its edges. */
static void npu_load(float tile[T][T], const float* m, int rows, int cols, int r0, int c0,
                     int transpose) {
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < T; ++j) {
      int r = transpose ? r0 + j : r0 + i, c = transpose ? c0 + i : c0 + j;
      tile[i][j] = r < rows && c < cols ? m[(long)r * cols + c] : 0.0f;
    }
  toy_npu_cycles += DMA_CYCLES;
}
static void npu_load_a(const float* a, int rows, int cols, int r0, int c0) {
  npu_load(npu_a, a, rows, cols, r0, c0, 0);
}
/* B tile (k0, j0): from B [K, N], or from B [N, K] transposed. */
static void npu_load_b(const float* b, int rows, int cols, int k0, int j0, int transpose) {
  if (transpose) npu_load(npu_b, b, rows, cols, j0, k0, 1);
  else npu_load(npu_b, b, rows, cols, k0, j0, 0);
}

static void npu_mma(void) {
  for (int k = 0; k < T; ++k)
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j) npu_acc[i][j] += npu_a[i][k] * npu_b[k][j];
  toy_npu_cycles += MMA_CYCLES;
}

/* The accumulator to tile (r0, c0) of y [rows, cols], plus a bias (may be 0) per column
   (or per row, with bias_rows), then a Relu where asked. */
static void npu_store(float* y, int rows, int cols, int r0, int c0, const float* bias,
                      int bias_rows, int relu) {
  for (int i = 0; i < T && r0 + i < rows; ++i)
    for (int j = 0; j < T && c0 + j < cols; ++j) {
      float v = npu_acc[i][j] + (bias ? bias[bias_rows ? r0 + i : c0 + j] : 0.0f);
      y[(long)(r0 + i) * cols + c0 + j] = relu && v < 0.0f ? 0.0f : v;
    }
  toy_npu_cycles += DMA_CYCLES;
}
)";

// The built-in pattern: a MatMul or Gemm, alone or fused with a Relu after it.
std::optional<NpuGemm> gemm_pattern(const Node& node) {
  const std::vector<const Node*> ops = body_ops(node);
  if (ops.empty() || ops.size() > 2 || node.outputs().size() != 1) return std::nullopt;
  std::optional<PlainGemm> gemm = plain_gemm(*ops[0]);
  if (!gemm) return std::nullopt;
  NpuGemm job;
  job.m = gemm->m;
  job.n = gemm->n;
  job.k = gemm->k;
  job.transpose_b = gemm->transpose_b;
  const Value* result = ops[0]->output(0);
  if (ops.size() == 2) {
    if (ops[1]->op != "Relu" || ops[1]->input(0) != result) return std::nullopt;
    job.relu = true;
    result = ops[1]->output(0);
  }
  job.a = argument_index(node, gemm->a);
  job.b = argument_index(node, gemm->b);
  job.bias = gemm->bias ? argument_index(node, gemm->bias) : -1;
  job.y = argument_index(node, result);
  if (job.a < 0 || job.b < 0 || job.y < 0 || (gemm->bias && job.bias < 0)) return std::nullopt;
  return job;
}

std::map<std::string, NpuPattern>& patterns() {
  static std::map<std::string, NpuPattern> registered = {{"gemm", gemm_pattern}};
  return registered;
}

// The job of `node`: the first pattern's, by name, that matches; else nullopt.
std::optional<NpuGemm> npu_job(const Node& node) {
  for (const auto& [name, pattern] : patterns()) {
    if (std::optional<NpuGemm> job = pattern(node)) return job;
  }
  return std::nullopt;
}

int64_t tiles(int64_t extent) { return (extent + kTile - 1) / kTile; }

// The cycles of one run of `job`, from the tile counts (what the simulator counts).
int64_t estimated_cycles(const NpuGemm& job) {
  const int64_t per_output_tile =
      kClearCycles + tiles(job.k) * (2 * kDmaCycles + kMmaCycles) + kDmaCycles;
  return tiles(job.m) * tiles(job.n) * per_output_tile;
}

// The program: the device's C, then the node's driver loop over the tiles.
std::string program(const NpuGemm& job, const std::string& function) {
  std::string source = kDevice;
  source += fmt::format(
      "\n/* Y[{m}x{n}] = {relu}A[{m}x{k}] . B{b}{bias}{close}, {tm} x {tn} output tiles of "
      "{tk} steps */\n"
      "void {function}(void** args) {{\n"
      "  const float* a = (const float*)args[{a}];\n"
      "  const float* b = (const float*)args[{bi}];\n"
      "  const float* bias = {bias_arg};\n"
      "  float* y = (float*)args[{y}];\n"
      "  for (int i0 = 0; i0 < {m}; i0 += T)\n"
      "    for (int j0 = 0; j0 < {n}; j0 += T) {{\n"
      "      npu_clear();\n"
      "      for (int k0 = 0; k0 < {k}; k0 += T) {{\n"
      "        npu_load_a(a, {m}, {k}, i0, k0);\n"
      "        npu_load_b(b, {brows}, {bcols}, k0, j0, {transpose});\n"
      "        npu_mma();\n"
      "      }}\n"
      "      npu_store(y, {m}, {n}, i0, j0, bias, {bias_rows}, {relu_flag});\n"
      "    }}\n"
      "}}\n",
      fmt::arg("m", job.m), fmt::arg("n", job.n), fmt::arg("k", job.k),
      fmt::arg("relu", job.relu ? "relu(" : ""), fmt::arg("close", job.relu ? ")" : ""),
      fmt::arg("b", job.transpose_b ? fmt::format("[{}x{}]^T", job.n, job.k)
                                    : fmt::format("[{}x{}]", job.k, job.n)),
      fmt::arg("bias", job.bias < 0 ? "" : job.bias_per_row ? " + bias per row" : " + bias"),
      fmt::arg("tm", tiles(job.m)),
      fmt::arg("tn", tiles(job.n)), fmt::arg("tk", tiles(job.k)), fmt::arg("function", function),
      fmt::arg("a", job.a), fmt::arg("bi", job.b), fmt::arg("y", job.y),
      fmt::arg("bias_arg", job.bias >= 0 ? fmt::format("(const float*)args[{}]", job.bias)
                                         : std::string("0")),
      fmt::arg("brows", job.transpose_b ? job.n : job.k),
      fmt::arg("bcols", job.transpose_b ? job.k : job.n),
      fmt::arg("transpose", job.transpose_b ? 1 : 0), fmt::arg("relu_flag", job.relu ? 1 : 0),
      fmt::arg("bias_rows", job.bias_per_row ? 1 : 0));
  return source;
}

// A C function name from a kernel name ("gemm_relu_1" stays; other characters become _).
std::string c_name(const std::string& kernel) {
  std::string name = "toy_npu_";
  for (char c : kernel) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

// One program built and loaded: its library stays loaded while the back end lives.
struct LoadedProgram {
  void* library = nullptr;
  void (*run)(void**) = nullptr;
  const long long* cycles = nullptr;
  int64_t estimate = 0;
};

LoadedProgram build(const std::string& source, const std::string& function,
                    const Node& node) {
  static std::atomic<int> count = 0;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    fmt::format("minic-toy-npu-{}-{}", getpid(), count++);
  std::filesystem::create_directories(dir);
  const std::string c_file = (dir / "program.c").string();
  const std::string library = (dir / "program.so").string();
  write_file(c_file, source);
  const std::string command =
      fmt::format("cc -O2 -shared -fPIC -o '{}' '{}' 2> '{}/cc.log'", library, c_file,
                  dir.string());
  const int status = std::system(command.c_str());
  LoadedProgram loaded;
  if (status == 0) loaded.library = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string why = status != 0 ? read_file((dir / "cc.log").string())
                                : (loaded.library ? "" : dlerror());
  std::filesystem::remove_all(dir);
  if (!loaded.library) {
    fail("{}: the toy NPU's program did not build (`{}`): {}", node.describe(), command, why);
  }
  loaded.run = reinterpret_cast<void (*)(void**)>(dlsym(loaded.library, function.c_str()));
  loaded.cycles = static_cast<const long long*>(dlsym(loaded.library, "toy_npu_cycles"));
  MINIC_CHECK(loaded.run && loaded.cycles);
  return loaded;
}

class ToyNpu : public ExternalBackend {
 public:
  ~ToyNpu() override {
    for (LoadedProgram& program : programs_) dlclose(program.library);
  }

  bool claims(const Node& node, int, const Target& target) const override {
    return target.is_cpu() && npu_job(node).has_value();
  }

  runtime::KernelCall compile(const Node& node, int, const Target&) override {
    std::optional<NpuGemm> job = npu_job(node);
    if (!job) fail("{}: the toy NPU runs GEMMs (with a bias and a Relu) only", node.describe());
    const std::string function = c_name(kernel_name(node));
    LoadedProgram loaded = build(program(*job, function), function, node);
    loaded.estimate = estimated_cycles(*job);
    programs_.push_back(loaded);
    return [run = loaded.run](void** args) { run(args); };
  }

  std::string describe(const Node& node, int) const override {
    std::optional<NpuGemm> job = npu_job(node);
    if (!job) return "";
    const std::string text = program(*job, c_name(kernel_name(node)));
    // The driver loop only: the device's C is the same in every program.
    return fmt::format("{} simulated cycles a run\n{}", estimated_cycles(*job),
                       text.substr(std::string(kDevice).size() + 1));
  }

  // Convolutions stay Conv nodes, in NCHW, and matrix products MatMul or Gemm nodes (those
  // of attention too), for patterns that take them.
  std::vector<std::string> skip_passes() const override {
    return {"blocked-layout", "winograd", "pack-matmul-weights", "fuse-attention"};
  }

  std::string report() const override {
    int64_t simulated = 0;
    for (const LoadedProgram& program : programs_) simulated += *program.cycles;
    return fmt::format("toy-npu: {} program{}, {} cycles simulated so far", programs_.size(),
                       programs_.size() == 1 ? "" : "s", simulated);
  }

 private:
  std::vector<LoadedProgram> programs_;
};

}  // namespace


RegisterNpuPattern::RegisterNpuPattern(const char* name, NpuPattern pattern) {
  MINIC_CHECK(!patterns().count(name));
  patterns().emplace(name, std::move(pattern));
}

MINIC_REGISTER_BACKEND("toy-npu", ToyNpu,
                       "a 16x16 systolic GEMM unit, simulated: MatMul/Gemm (+ bias, Relu) as "
                       "emitted C built with cc");

}  // namespace minic
