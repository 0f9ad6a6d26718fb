// Helpers of the block and memory primitive tests (schedule_blocks_test.cpp,
// schedule_blocks_move_test.cpp): parsing a kernel, running it on random inputs before and
// after a primitive, and catching a primitive's error. Course module 4.
#pragma once

#include "loop_test_util.h"
#include "minic/ir/loop/interpreter.h"
#include "minic/ir/loop/parser.h"
#include "minic/ir/loop/printer.h"
#include "minic/schedule/primitives.h"
#include "minic/support/error.h"

#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

namespace minic::schedule::test {

inline loop::PrimFunc parse_func(const std::string& text) {
  return loop::parse_loop_module(text, "test.mloop").functions.at(0);
}

// The expected text in the printer's own form.
inline std::string expected(const std::string& text) {
  return loop::print_func(parse_func(text));
}

// Every parameter after running `func` on random small integers drawn with `seed` (the
// outputs start random too, so an element left unwritten shows).
inline std::vector<Tensor> run_random(const loop::PrimFunc& func, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<Tensor> tensors;
  for (const loop::Buffer& param : func.params) {
    tensors.push_back(loop::test::small_int_tensor(param->shape, rng));
  }
  std::vector<Tensor*> args;
  for (Tensor& tensor : tensors) args.push_back(&tensor);
  loop::run_func(func, args);
  return tensors;
}

// `after` computes what `before` computes, on two random inputs.
inline void require_same_outputs(const loop::PrimFunc& before, const loop::PrimFunc& after) {
  for (unsigned seed : {1u, 2u}) {
    std::vector<Tensor> want = run_random(before, seed);
    std::vector<Tensor> got = run_random(after, seed);
    REQUIRE(want.size() == got.size());
    for (size_t i = 0; i < want.size(); ++i) {
      INFO("parameter " << before.params[i]->name << ", seed " << seed);
      REQUIRE(want[i].identical(got[i]));
    }
  }
}

// The error a primitive throws, checking that it left the function as it was.
inline std::string error_of(loop::PrimFunc& func,
                            const std::function<void(loop::PrimFunc&)>& primitive) {
  std::string before = loop::print_func(func);
  try {
    primitive(func);
  } catch (const Error& error) {
    CHECK(loop::print_func(func) == before);
    return error.what();
  }
  return "(no error)";
}

// The index-th loop around a block, outermost first.
inline Expr loop_of(const loop::PrimFunc& func, const std::string& block, size_t index) {
  return get_loops(func, block).at(index);
}

}  // namespace minic::schedule::test
