// Helpers for the LLVM backend's tests: random arguments for a function's parameters, and
// the differential check — the loop IR interpreter and the compiled code on the same
// inputs must leave the same values in every buffer. Course module 6.
#pragma once

#include "loop_test_util.h"
#include "minic/codegen/llvm.h"
#include "minic/ir/loop/interpreter.h"
#include "minic/runtime/compare.h"
#include "minic/runtime/thread_pool.h"

#include <catch2/catch.hpp>

#include <limits>
#include <random>

namespace minic::loop::test {

// A tensor for `buffer` with random elements: floats uniform in [lo, hi), integers small
// (in [-20, 20], unsigned [0, 40]) and never 0 when `nonzero`, bools 0 or 1.
inline Tensor random_argument(const BufferNode& buffer, std::mt19937& rng, float lo = -2.0f,
                              float hi = 2.0f, bool nonzero = false) {
  Tensor values = uniform_tensor(buffer.shape, rng, lo, hi);
  if (is_float(buffer.dtype)) return values.cast(buffer.dtype);
  Tensor integers(DType::i64, buffer.shape);
  std::uniform_int_distribution<int64_t> small(-20, 20);
  for (int64_t& x : integers.values<int64_t>()) {
    do {
      x = small(rng);
      if (is_unsigned_int(buffer.dtype)) x += 20;
      if (buffer.dtype == DType::boolean) x &= 1;
    } while (nonzero && x == 0);
  }
  return integers.cast(buffer.dtype);
}

inline std::vector<Tensor> random_arguments(const PrimFunc& func, std::mt19937& rng,
                                            float lo = -2.0f, float hi = 2.0f) {
  std::vector<Tensor> args;
  for (const Buffer& param : func.params) args.push_back(random_argument(*param, rng, lo, hi));
  return args;
}

// Calls the compiled `name` of `module` on the tensors, in place.
inline void call_compiled(const codegen::CompiledModule& module, const std::string& name,
                          std::vector<Tensor>& args) {
  std::vector<void*> data;
  for (Tensor& arg : args) data.push_back(arg.bytes().data());
  module.find(name)(data.data());
}

// How close compiled results must be to the interpreter's. Compiled code may contract
// a * b + c into one fused multiply-add (rounded once), so a sum of many products that
// cancels to near zero can differ by a few ulps of its terms: hence the absolute part.
inline constexpr Tolerance kCompiledTolerance{1e-5, 1e-5};

// `options` with parallel loops on the runtime's thread pool, as the driver compiles them.
inline codegen::LlvmOptions with_thread_pool(codegen::LlvmOptions options) {
  if (!options.parallel_for) options.parallel_for = &minic_parallel_for;
  return options;
}

// Runs `reference` in the interpreter and `compiled` (the same computation, perhaps
// scheduled or lowered differently) through the LLVM backend, each on its own copy of
// `args`; every buffer must agree within `tolerance` (integers and bools exactly).
inline void check_compiled(const PrimFunc& reference, const PrimFunc& compiled,
                           const std::vector<Tensor>& args, Tolerance tolerance = kCompiledTolerance,
                           const codegen::LlvmOptions& options = {}) {
  std::vector<Tensor> expected = args;
  std::vector<Tensor*> pointers;
  for (Tensor& tensor : expected) pointers.push_back(&tensor);
  run_func(reference, pointers);
  std::unique_ptr<codegen::CompiledModule> module =
      codegen::compile_llvm(LoopModule{{compiled}}, with_thread_pool(options));
  std::vector<Tensor> actual = args;
  call_compiled(*module, compiled.name, actual);
  for (size_t i = 0; i < args.size(); ++i) {
    TensorComparison comparison = compare_tensors(actual[i], expected[i], tolerance);
    INFO("@" << compiled.name << ", buffer " << compiled.params[i]->name << ": "
             << describe(comparison));
    CHECK(comparison.ok());
  }
}

inline void check_compiled(const PrimFunc& func, const std::vector<Tensor>& args,
                           Tolerance tolerance = kCompiledTolerance,
                           const codegen::LlvmOptions& options = {}) {
  check_compiled(func, func, args, tolerance, options);
}

}  // namespace minic::loop::test
