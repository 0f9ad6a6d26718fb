// Targets given explicitly, for tests whose expectations depend on vector sizes: the same
// lowering and schedules on every machine these tests run on. Course module 6.
#pragma once

#include "minic/codegen/llvm.h"
#include "minic/target/target.h"

namespace minic::testing {

// An AVX-512 CPU (skylake-avx512: 16 f32 lanes, 32 vector registers): the sizes the
// schedule tests were written for. Code for it compiles anywhere; run only host_target's.
inline const Target& avx512() {
  static const Target target = codegen::cpu_target("skylake-avx512");
  return target;
}

// An AVX2 CPU (x86-64-v3: 8 f32 lanes, 16 vector registers).
inline const Target& avx2() {
  static const Target target = codegen::cpu_target("x86-64-v3");
  return target;
}

// A baseline x86-64 CPU (SSE2: 4 f32 lanes, no fused multiply-add).
inline const Target& x86_64() {
  static const Target target = codegen::cpu_target("x86-64");
  return target;
}

}  // namespace minic::testing
