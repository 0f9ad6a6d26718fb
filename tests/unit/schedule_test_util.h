// Helpers for the tests of schedule primitives: parse a kernel, find a loop by name, run a
// kernel before and after a primitive on the same random inputs, and check that a refused
// primitive left the kernel as it was. Course module 4.
#pragma once

#include "loop_test_util.h"
#include "minic/ir/loop/interpreter.h"
#include "minic/ir/loop/parser.h"
#include "minic/ir/loop/printer.h"
#include "minic/support/error.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <functional>

namespace minic::schedule::test {

// The first function of a module's text.
inline loop::PrimFunc parse_func(const std::string& text) {
  return loop::parse_loop_module(text, "<test>").functions.at(0);
}

// The variable of the first loop named `name` (program order); fails the test if none.
inline loop::Expr loop_named(const loop::PrimFunc& func, const std::string& name) {
  std::function<loop::Expr(const loop::Stmt&)> search = [&](const loop::Stmt& stmt) {
    if (!stmt) return loop::Expr();
    if (const auto* node = stmt.as<loop::For>()) {
      if (node->var.as<loop::Var>()->name == name) return node->var;
      return search(node->body);
    }
    if (const auto* node = stmt.as<loop::Block>()) {
      loop::Expr found = search(node->init);
      return found ? found : search(node->body);
    }
    if (const auto* node = stmt.as<loop::Allocate>()) return search(node->body);
    if (const auto* node = stmt.as<loop::IfThenElse>()) {
      loop::Expr found = search(node->then_case);
      return found ? found : search(node->else_case);
    }
    if (const auto* node = stmt.as<loop::Seq>()) {
      for (const loop::Stmt& child : node->stmts) {
        if (loop::Expr found = search(child)) return found;
      }
    }
    return loop::Expr();
  };
  loop::Expr found = search(func.body);
  if (!found) FAIL("no loop named " << name << " in @" << func.name);
  return found;
}

// Random small-integer tensors, one per parameter (outputs too: their first contents).
inline std::vector<Tensor> random_arguments(const loop::PrimFunc& func, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Tensor> arguments;
  for (const loop::Buffer& param : func.params) {
    arguments.push_back(loop::test::small_int_tensor(param->shape, rng));
  }
  return arguments;
}

// Every parameter's final contents after running `func` on `arguments`.
inline std::vector<Tensor> run_on(const loop::PrimFunc& func, std::vector<Tensor> arguments) {
  std::vector<Tensor*> pointers;
  for (Tensor& argument : arguments) pointers.push_back(&argument);
  loop::run_func(func, pointers);
  return arguments;
}

// True if the tensors agree: bit for bit, or (not exact) within a relative 1e-5.
inline bool same_results(const std::vector<Tensor>& a, const std::vector<Tensor>& b,
                         bool exact) {
  if (a.size() != b.size()) return false;
  for (size_t t = 0; t < a.size(); ++t) {
    if (exact) {
      if (!a[t].identical(b[t])) return false;
      continue;
    }
    for (int64_t e = 0; e < a[t].num_elements(); ++e) {
      double x = a[t].as_double(e);
      double y = b[t].as_double(e);
      if (std::fabs(x - y) > 1e-5 * std::max(1.0, std::fabs(x))) return false;
    }
  }
  return true;
}

// Runs both functions on the same random inputs; every parameter must end the same.
inline void check_same_outputs(const loop::PrimFunc& before, const loop::PrimFunc& after,
                               uint32_t seed = 7, bool exact = true) {
  std::vector<Tensor> arguments = random_arguments(before, seed);
  INFO("after:\n" << loop::print_func(after));
  CHECK(same_results(run_on(before, arguments), run_on(after, arguments), exact));
}

// The message of the Error `action` throws on a copy of `func`, checking that the copy is
// unchanged; "(no error)" if it throws none.
inline std::string refusal(const loop::PrimFunc& func,
                           const std::function<void(loop::PrimFunc&)>& action) {
  loop::PrimFunc copy = func;
  try {
    action(copy);
  } catch (const Error& error) {
    CHECK(loop::print_func(copy) == loop::print_func(func));
    return error.what();
  }
  return "(no error)";
}

}  // namespace minic::schedule::test
