// Loop IR → LLVM IR: the emitter shared by the files of src/codegen/llvm (internal).
//
// Course module 6. One CodeGen emits the functions of one loop IR module into one LLVM
// module. Its work is split by concept, one file each:
//   codegen_func.cpp   functions: the `void NAME(void** args)` entry and the body function
//                      with noalias buffer parameters; parallel loops outlined into
//                      functions the thread pool runs; storage for allocations; loops
//   codegen_stmt.cpp   statements: For, Block, Store, Allocate, Seq, IfThenElse, Evaluate
//   codegen_expr.cpp   expressions, buffer addressing, vector loads/stores, gathers
//   codegen_prefetch.cpp  the prefetches of loops annotated prefetch_ahead / _spread
//   codegen_math.cpp   the math intrinsics (exp, tanh, sigmoid, erf as vectorisable code)
// target.cpp makes the target's TargetMachine and runs LLVM's O3 pipeline; jit.cpp runs the
// result with ORC LLJIT; cpu_target.cpp makes CPU targets (the host's, or one by name).
//
// The emitter keeps two maps while it walks a function: each loop IR variable in scope to
// its LLVM value (a loop's phi, a block's binding, a parameter of an outlined function),
// and each buffer in scope to a pointer to its first element.
//
// Chapter: docs/module6-llvm-cpu.md#2-expressions-statements-intrinsics
#pragma once

#include "minic/codegen/llvm.h"
#include "minic/ir/loop/stmt.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace minic::codegen::llvm_backend {

class CodeGen {
 public:
  // options.target is a CPU target: its CPU and features go on every function, so that
  // O3 and the code generator see the same machine.
  CodeGen(llvm::Module& module, const LlvmOptions& options);

  // Emits `func` as `void NAME(void** args)` and verifies what it emitted (llvm::
  // verifyFunction); throws Error for what this back end cannot compile.
  void emit_func(const loop::PrimFunc& func);

  // --- expressions (codegen_expr.cpp) ---
  llvm::Value* emit(const loop::Expr& expr);

  // --- statements (codegen_stmt.cpp) ---
  void emit(const loop::Stmt& stmt);

 private:
  // codegen_expr.cpp
  llvm::Value* emit_binary(const loop::Expr& expr, const loop::Expr& a, const loop::Expr& b);
  llvm::Value* emit_integer_division(loop::ExprKind kind, DType dtype, llvm::Value* a,
                                     llvm::Value* b, const loop::Expr& divisor);
  llvm::Value* emit_select(const loop::Select* node);
  llvm::Value* emit_cast(const loop::Cast* node);
  // A float value (scalar or vector) narrowed to the float type `type`, rounded to
  // nearest even as Tensor::cast rounds.
  llvm::Value* emit_float_narrow(llvm::Value* value, llvm::Type* type);
  // Where an access reads or writes: one pointer for a scalar or a run of consecutive
  // elements, or a vector of pointers (one a lane) for a gather or scatter.
  struct Address {
    llvm::Value* pointer = nullptr;
    llvm::Value* lane_pointers = nullptr;
  };
  Address emit_address(const loop::Buffer& buffer, const std::vector<loop::Expr>& indices,
                       int lanes);
  llvm::Value* emit_load(const loop::Load* node);
  // codegen_prefetch.cpp: the prefetches that follow `node`, a load at `pointer`, inside a
  // loop annotated prefetch_ahead.
  void emit_prefetches(const loop::Load* node, llvm::Type* element, llvm::Value* pointer);
  // Prefetches the lines of a vector load of `lanes` elements at `pointer`,
  // prefetch_.ahead elements on.
  void emit_prefetch(llvm::Type* element, int64_t element_bytes, llvm::Value* pointer,
                     int lanes);
  // Under a loop annotated prefetch_spread: this step's one line of the region ahead of
  // the load at `pointer`.
  void emit_spread_prefetch(llvm::Type* element, int64_t element_bytes, llvm::Value* pointer);
  bool already_prefetched(const loop::Load* node) const;
  void emit_store(const loop::Store* node);
  // codegen_math.cpp
  llvm::Value* emit_call(const loop::Call* node);
  // acc + dot4_u8i8(a, b), for `node` that call.
  llvm::Value* emit_dot4(llvm::Value* acc, const loop::Call* node);
  // round(a / b), a quantisation's quotient (a vector a, b one value in every lane), by
  // b's reciprocal; emit_quantized: the operand of a saturating cast to an integer, that
  // form for round(a / b) and round(a / b) + z, emit otherwise.
  llvm::Value* emit_round_of_quotient(const loop::Div* quotient);
  llvm::Value* emit_quantized(const loop::Expr& value);
  llvm::Value* emit_exp_f64(llvm::Value* x);
  llvm::Value* emit_exp_f32(llvm::Value* x);
  llvm::Value* emit_erf_f32(llvm::Value* x);
  llvm::Value* emit_power_by_roots(llvm::Value* x, int quarters);
  llvm::Value* emit_tanh_f64(llvm::Value* x);
  llvm::Value* emit_libm_call(const char* name, llvm::Value* x);

  // codegen_stmt.cpp
  // if (condition) { then_case } else { else_case }; else_case may be empty.
  void emit_if(llvm::Value* condition, const std::function<void()>& then_case,
               const std::function<void()>& else_case);
  void emit_for(const loop::For* node);
  // One iteration of `node`'s body, its variable `counter` (from `min`).
  void emit_loop_body(const loop::For* node, llvm::Value* min, llvm::Value* counter);
  void emit_block(const loop::Block* node);
  void emit_allocate(const loop::Buffer& buffer, const std::function<void()>& body);

  // codegen_func.cpp
  // A loop over [begin, end) whose body `body` emits, given the counter. `metadata`
  // (llvm.loop hints, or null) goes on the back edge.
  void emit_counted_loop(llvm::Value* begin, llvm::Value* end, const std::string& name,
                         llvm::MDNode* metadata, const std::function<void(llvm::Value*)>& body);
  llvm::MDNode* loop_metadata(loop::ForKind kind);
  // A parallel loop, outlined: the closure of what its body captures (step 1), the body
  // and task functions (step 2), and the call to the thread pool (step 3).
  struct ParallelClosure {
    std::vector<loop::Buffer> buffers;  // captured, in order of first use
    std::vector<const loop::Var*> vars;
    std::vector<llvm::Type*> fields;    // the buffers' pointers, the variables, the min
    llvm::StructType* type = nullptr;
  };
  void emit_parallel_for(const loop::For* node);
  ParallelClosure parallel_closure(const loop::For* node);
  void emit_parallel_body(const loop::For* node, const ParallelClosure& closure,
                          llvm::Function* body);
  void emit_parallel_task(const ParallelClosure& closure, llvm::Function* body,
                          llvm::Function* task);
  void emit_parallel_call(const loop::For* node, const ParallelClosure& closure,
                          llvm::Function* task, const std::string& name);
  // A function returning void with the target's attributes, private unless `exported`.
  llvm::Function* make_function(const std::string& name, llvm::FunctionType* type,
                                bool exported);
  // Storage for a buffer of the current function: a stack slot in the entry block when
  // small, else aligned_alloc (`heap` is set; the caller frees it with emit_free).
  llvm::Value* emit_storage(const loop::Buffer& buffer, bool& heap);
  void emit_free(llvm::Value* pointer);

  // Types: a DataType in registers (bool is i1) and an element in memory (bool is i8).
  llvm::Type* value_type(loop::DataType type);
  llvm::Type* memory_type(DType dtype);
  llvm::Value* splat(llvm::Value* scalar, int lanes);
  // `scalar` repeated as many times as `like` has lanes (itself if `like` is scalar).
  llvm::Value* splat_like(llvm::Value* scalar, llvm::Value* like);
  llvm::Value* i64(int64_t value);
  // "@f, block C: " for errors.
  [[noreturn]] void error(const std::string& reason) const;

  llvm::LLVMContext& context_;
  llvm::Module& module_;
  llvm::IRBuilder<> builder_;
  LlvmOptions options_;
  std::string features_;  // the target's features, comma-separated

  std::string func_name_;
  std::vector<std::string> blocks_;  // the enclosing blocks, for errors
  std::unordered_map<const loop::Var*, llvm::Value*> vars_;
  std::unordered_map<const loop::BufferNode*, llvm::Value*> buffers_;
  // The function's inputs (the parameters it does not write: a plane-form convolution's
  // sums accumulate in its output): the buffers whose loads may be prefetched.
  std::unordered_set<const loop::BufferNode*> inputs_;
  // A loop's iteration (from 0) and its number of iterations.
  struct LoopPosition {
    llvm::Value* index = nullptr;
    int64_t extent = 0;
  };
  // What the loops around the code being emitted ask to prefetch (codegen_prefetch.cpp);
  // each loop body starts from its enclosing loop's, with no load prefetched yet, and
  // emit_loop_body restores the enclosing loop's after it.
  struct PrefetchState {
    int64_t ahead = 0;   // the prefetch_ahead annotation in force (0: none)
    int64_t spread = 0;  // the prefetch_spread annotation in force: elements a step reads
    LoopPosition share;  // the prefetch_spread loop
    LoopPosition step;   // the prefetch_ahead loop, its iterations counted across the
                         // loops inside it (innermost fastest)
    std::vector<const loop::Load*> done;  // the loads prefetched in the current body
    int64_t done_lanes = 0;               // their lanes, added up
  };
  PrefetchState prefetch_;
  int parallel_depth_ = 0;       // > 0 inside an outlined parallel loop
  int parallel_functions_ = 0;   // how many the current PrimFunc has outlined
};

// Builds the LLVM module of `module` for options.target, one entry function per PrimFunc,
// each verified. Does not optimise it (target.cpp does).
std::unique_ptr<llvm::Module> build_module(const loop::LoopModule& module,
                                           const LlvmOptions& options, llvm::LLVMContext& context);

}  // namespace minic::codegen::llvm_backend
