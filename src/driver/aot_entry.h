// The execution plan of a compiled model as C code, for `minic compile`. Private to
// src/driver.
//
// Course module 6 (ahead-of-time compilation). A C program that links a compiled model
// wants one call, not one call per kernel: model.c is the executor's loop written out,
// step by step, with every buffer's address spelled as the plan places it -- an input or
// output of the call, the weights file loaded once, or an offset into the arena of
// intermediates.
//
// Chapter: docs/module6-llvm-cpu.md#5-ahead-of-time-minic-compile
#pragma once

#include "minic/driver/compile.h"

#include <string>

namespace minic {

struct ModelEntry {
  bool complete = false;  // false: some step runs a reference kernel, so C cannot run it
  std::string reason;     // why not, when not complete
  std::string header;     // model.h
  std::string source;     // model.c
  std::string weights;    // weights.bin: every constant, 64-byte aligned, in plan order
};

ModelEntry model_entry(const CompiledModel& model);

}  // namespace minic
