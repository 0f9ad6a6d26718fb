// emit_cuda: GPU-scheduled loop IR → CUDA C (see include/minic/codegen/cuda.h). Course
// module 6.
//
// The CUDA dialect of CWriter (include/minic/ir/loop/c_writer.h), which writes the
// statements and expressions as C. This file adds what is CUDA's:
//   1. the prelude: integer types and the loop IR's min, max, floordiv, floormod and
//      sigmoid as __device__ functions, with no header (NVRTC compiles it fastest);
//   2. a kernel per launch of the host/device split (host_device_split.h), taking the
//      buffers it uses, `const` where it only reads them;
//   3. thread-bound loops as their thread's index, guarded only where the loop's extent is
//      less than the launch's along that axis; loop variables `int` where the kernel's
//      indices provably fit 32 bits (index_width.h), else `int64_t`;
//   4. allocations: registers for local buffers, `__shared__` arrays for shared ones, or
//      slices of one `extern __shared__` array when a launch needs more than 48 KB;
//   5. between two thread nests of one thread block, a barrier: the loop interpreter runs
//      them one after the other, so every thread of the first has ended when the second
//      starts.
// Under a launch's blockIdx loops, a statement that is not a thread nest would run once per
// block in the interpreter but once per thread on the GPU: it is refused.
//
// Chapter: docs/module6-cuda.md#emitting-cuda-c
#include "minic/codegen/cuda.h"

#include "host_device_split.h"
#include "index_width.h"

#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/c_syntax.h"
#include "minic/ir/loop/c_writer.h"
#include "minic/ir/loop/gpu_axis.h"
#include "minic/ir/loop/visitor.h"
#include "minic/support/error.h"

#include <fmt/format.h>

namespace minic::codegen {

using namespace loop;
using namespace loop::c_syntax;

namespace {

constexpr std::string_view kCudaPrelude = R"(// minic's CUDA prelude: the types and helpers the kernels use, without a header.
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#define INT64_C(x) x##LL
#define INT64_MIN (-9223372036854775807LL - 1)
#define NAN __int_as_float(0x7fc00000)
#define INFINITY __int_as_float(0x7f800000)

// The loop IR's min and max: a NaN operand gives NaN, as in the interpreter.
template <typename A, typename B>
__device__ __forceinline__ auto minic_min(A a, B b) -> decltype(a + b) {
  return a != a ? a : b != b ? b : (b < a ? b : a);
}
template <typename A, typename B>
__device__ __forceinline__ auto minic_max(A a, B b) -> decltype(a + b) {
  return a != a ? a : b != b ? b : (a < b ? b : a);
}
// floordiv and floormod round toward negative infinity; C's / and % toward zero.
)";

// The prelude: the types and min/max above, then the C prelude's helper functions.
const std::string& cuda_prelude_text() {
  static const std::string text =
      std::string(kCudaPrelude) + helper_functions("__device__ __forceinline__");
  return text;
}

constexpr int64_t kStaticSharedLimit = 48 * 1024;  // above: dynamic shared memory

// C++ and CUDA words that C does not reserve (c_syntax reserves C's). The alternative
// operator spellings (and, or, not, ...) are C++ keywords too: ONNX's And node names its
// output `and`.
bool reserved_in_cuda(std::string_view name) {
  static const std::set<std::string_view> words = {
      "class", "namespace", "template", "typename", "new", "delete", "this", "operator",
      "private", "public", "protected", "friend", "virtual", "using", "try", "catch", "throw",
      "explicit", "mutable", "export", "asm", "decltype", "nullptr", "constexpr", "noexcept",
      "and", "and_eq", "bitand", "bitor", "compl", "not", "not_eq", "or", "or_eq", "xor",
      "xor_eq", "static_cast", "dynamic_cast", "reinterpret_cast", "const_cast", "typeid",
      "static_assert", "thread_local", "alignas", "alignof", "char8_t", "char16_t",
      "char32_t", "wchar_t", "concept", "requires", "consteval", "constinit", "co_await",
      "co_return", "co_yield",
      "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "minic_min", "minic_max",
      "minic_shared", "int64_t", "uint64_t"};
  return words.count(name) > 0;
}

// The element types a CUDA kernel computes in: f16, bf16 and the storage-only types are
// not emitted yet (their ops run reference kernels on the CPU).
bool has_cuda_type(DType dtype) {
  switch (dtype) {
    case DType::f32: case DType::f64: case DType::i8: case DType::i16: case DType::i32:
    case DType::i64: case DType::u8: case DType::u16: case DType::u32: case DType::u64:
    case DType::boolean: return true;
    default: return false;
  }
}

class TypeCheck : public IRVisitor {
 public:
  explicit TypeCheck(const PrimFunc& func) : func_(func) {
    for (const Buffer& param : func.params) check(param->dtype, param->name);
  }
  void visit_Load(const Load* node) override {
    check(node->buffer->dtype, node->buffer->name);
    IRVisitor::visit_Load(node);
  }
  void visit_Cast(const Cast* node) override {
    check(node->type.dtype, "a cast");
    IRVisitor::visit_Cast(node);
  }
  void visit_Allocate(const Allocate* node) override {
    check(node->buffer->dtype, node->buffer->name);
    IRVisitor::visit_Allocate(node);
  }

 private:
  void check(DType dtype, const std::string& what) {
    if (!has_cuda_type(dtype)) {
      fail("{}: {} is {}, which the CUDA back end does not compute in", func_.name, what,
           dtype_name(dtype));
    }
  }
  const PrimFunc& func_;
};

bool binds_threads(const Stmt& s) {
  class Finder : public IRVisitor {
   public:
    bool found = false;
    void visit_For(const For* node) override {
      if (node->for_kind == ForKind::thread_binding && is_thread_axis(node->thread_axis)) {
        found = true;
      }
      IRVisitor::visit_For(node);
    }
  } finder;
  finder.visit(s);
  return finder.found;
}

class CudaWriter : public CWriter {
 public:
  CudaWriter(const PrimFunc& func, const Target& target) : func_(func), target_(target) {}

  // Appends the kernels of `func` to `source` and says how to launch them.
  CudaFunction write(std::string& source) {
    TypeCheck(func_).visit(func_.body);
    HostPlan plan = split_host_device(func_, target_);
    CudaFunction result;
    result.name = func_.name;
    result.num_params = static_cast<int>(func_.params.size());
    std::vector<Buffer> args = func_.params;
    for (const Buffer& buffer : plan.scratch) {
      result.scratch.push_back({buffer->name, buffer_bytes(*buffer, func_.name)});
      args.push_back(buffer);
    }
    for (size_t k = 0; k < plan.launches.size(); ++k) {
      const LaunchNest& nest = plan.launches[k];
      CudaLaunch launch;
      launch.kernel = identifier(fmt::format("{}_k{}", func_.name, k));
      launch.grid = nest.grid;
      launch.block = nest.block;
      launch.args = nest.args;
      if (nest.shared_bytes > kStaticSharedLimit) launch.dynamic_shared_bytes = nest.shared_bytes;
      kernel(launch, nest, args);
      result.launches.push_back(std::move(launch));
    }
    source += out_;
    return result;
  }

 private:
  std::string identifier(std::string_view own) const override {
    std::string id = c_identifier(own);
    return reserved_in_cuda(id) ? id + "_" : id;
  }
  std::string prelude_call(ExprKind kind) const override {
    if (kind == ExprKind::Min) return "minic_min";
    if (kind == ExprKind::Max) return "minic_max";
    return prelude_function(kind);
  }

  void kernel(const CudaLaunch& launch, const LaunchNest& nest, const std::vector<Buffer>& args) {
    size_t depth = scope_depth();
    std::set<const BufferNode*> stored = stored_buffers(nest.body);
    std::vector<std::string> params;
    for (int index : nest.args) {
      const Buffer& buffer = args[index];
      std::string qualifier = stored.count(buffer.get()) ? "" : "const ";
      params.push_back(fmt::format("{}{}* __restrict__ {}", qualifier, c_type(buffer->dtype),
                                   bind(buffer.get(), buffer->name)));
    }
    grid_ = nest.grid;
    block_ = nest.block;
    index_type_ = fits_int32(nest.body) ? "int" : "int64_t";
    binds_threads_ = nest.binds_threads;
    dynamic_shared_ = launch.dynamic_shared_bytes > 0;
    shared_offset_ = 0;
    int64_t threads = nest.block[0] * nest.block[1] * nest.block[2];
    out_ += '\n';
    line(fmt::format("// grid ({}, {}, {}), block ({}, {}, {})", nest.grid[0], nest.grid[1],
                     nest.grid[2], nest.block[0], nest.block[1], nest.block[2]));
    line(fmt::format("extern \"C\" __global__ void __launch_bounds__({}) {}({}) {{", threads,
                     launch.kernel, fmt::join(params, ", ")));
    ++indent_;
    if (dynamic_shared_) line("extern __shared__ __align__(16) unsigned char minic_shared[];");
    block_level(nest.body);
    --indent_;
    line("}");
    end_scope(depth);
  }

  // Under the launch's blockIdx loops and above its thread nests: what every thread block
  // runs once in the interpreter.
  void block_level(const Stmt& s) {
    if (!s) return;
    if (!binds_threads_) return stmt(s);  // one thread a block: all of it is that thread's
    if (const For* node = s.as<For>(); node && node->for_kind == ForKind::thread_binding) {
      return stmt(s);  // blockIdx: bound below; threadIdx: a thread nest
    }
    if (const Seq* seq = s.as<Seq>()) {
      bool after_threads = false;
      for (const Stmt& part : seq->stmts) {
        bool threads = binds_threads(part);
        if (threads && after_threads) {
          line("__syncthreads();  // the thread nest before ends in every thread first");
        }
        after_threads = after_threads || threads;
        block_level(part);
      }
      return;
    }
    if (const Allocate* node = s.as<Allocate>()) {
      size_t depth = scope_depth();
      line("{");
      ++indent_;
      declare_array(node->buffer);
      block_level(node->body);
      --indent_;
      line("}");
      end_scope(depth);
      return;
    }
    fail("{}: a {} between the blockIdx loops and the threadIdx loops of a launch would run "
         "once per thread block in the loop interpreter but in every thread on the GPU; "
         "bind its loops to threadIdx",
         func_.name, stmt_kind_name(s.kind()));
  }

  void for_loop(const For* node) override {
    if (node->for_kind != ForKind::thread_binding) {
      if (node->for_kind == ForKind::unrolled) line("#pragma unroll");
      return c_loop(node, node->for_kind == ForKind::serial ? "" : for_kind_name(node->for_kind));
    }
    bool block = is_block_axis(node->thread_axis);
    int64_t dim = (block ? grid_ : block_)[gpu_axis(node->thread_axis)->dim];
    int64_t extent = node->extent.as<IntImm>()->value;  // constant: split_host_device checked
    size_t depth = scope_depth();
    std::string var = bind(node->var.get(), node->var.as<Var>()->name);
    const IntImm* lo = node->min.as<IntImm>();
    std::string index = fmt::format("({}){}", index_type_, node->thread_axis);
    if (!lo || lo->value != 0) index = fmt::format("{} + {}", text(node->min), index);
    line("{");
    ++indent_;
    line(fmt::format("const {} {} = {};", index_type_, var, index));
    if (extent < dim) {
      line(fmt::format("if ({} < {}) {{  // {} runs {} of {}", var, loop_end(node),
                       node->thread_axis, extent, dim));
      ++indent_;
    }
    if (block) {
      block_level(node->body);
    } else {
      stmt(node->body);
    }
    if (extent < dim) {
      --indent_;
      line("}");
    }
    --indent_;
    line("}");
    end_scope(depth);
  }

  void declare_array(const Buffer& buffer) override {
    std::string name = bind(buffer.get(), buffer->name);
    const char* type = c_type(buffer->dtype);
    int64_t bytes = buffer_bytes(*buffer, func_.name);
    int64_t elements = bytes / dtype_size(buffer->dtype);
    switch (buffer->scope) {
      case MemoryScope::shared:
        if (dynamic_shared_) {
          line(fmt::format("{0}* {1} = ({0}*)(minic_shared + {2});  // shared, {3} elements", type,
                           name, shared_offset_, elements));
          shared_offset_ += shared_slot_bytes(*buffer, func_.name);
        } else {
          line(fmt::format("__shared__ {} {}[{}];", type, name, elements));
        }
        return;
      case MemoryScope::local:
        line(fmt::format("{} {}[{}];  // local: registers", type, name, elements));
        return;
      case MemoryScope::global: break;  // split_host_device refuses these in a launch
    }
  }

  const PrimFunc& func_;
  const Target& target_;
  std::array<int64_t, 3> grid_ = {1, 1, 1};
  std::array<int64_t, 3> block_ = {1, 1, 1};
  bool binds_threads_ = false;
  bool dynamic_shared_ = false;
  int64_t shared_offset_ = 0;
};

}  // namespace

std::string_view cuda_prelude() { return cuda_prelude_text(); }

CudaFunction emit_cuda_function(const PrimFunc& func, const Target& target, std::string& source) {
  if (!target.is_cuda()) fail("target {}: the CUDA back end needs a CUDA target", target.str());
  return CudaWriter(func, target).write(source);
}

CudaModule emit_cuda(const LoopModule& module, const Target& target) {
  CudaModule result;
  result.source = cuda_prelude_text();
  for (const PrimFunc& func : module.functions) {
    result.functions.push_back(emit_cuda_function(func, target, result.source));
  }
  return result;
}

}  // namespace minic::codegen
