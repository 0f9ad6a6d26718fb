// A target from its text form: what `--target` and a compiled model's manifest give.
//
// Course module 6, docs/module6-llvm-cpu.md#the-target. The text is read by
// parse_target_spec (include/minic/target/target.h) and resolved by the part of minic
// that knows what its words mean:
//
//   llvm                          the host (codegen::host_target), as does its own text
//   llvm -mcpu=NAME [-mattr=...]  a CPU LLVM knows (codegen::cpu_target)
//   cuda -arch=sm_XX              a GPU of the CUDA table (cuda_target)
//
//   Target avx2 = parse_target("llvm -mcpu=x86-64-v3");
//   avx2.vector_lanes(DType::f32)   // 8
//   avx2.str()                      // "llvm -mcpu=x86-64-v3"
//
// Chapter: docs/module6-llvm-cpu.md#the-target
#pragma once

#include "minic/target/target.h"

#include <string_view>

namespace minic {

// The target `text` names; Error naming the text and the word LLVM or the table does not
// know. parse_target(t.str()) == t: the host's own text gives the host (with the features
// it reports), any other CPU's its features from LLVM's tables.
Target parse_target(std::string_view text);

}  // namespace minic
