// Where a kernel's schedule comes from, in words: shared by `minic explain` (explain.cpp)
// and `minic report` (report.cpp). Course module 1.
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#pragma once

#include "minic/autotune/database.h"
#include "minic/ir/loop/stmt.h"
#include "minic/target/target.h"

#include <string>
#include <vector>

namespace minic::cli {

struct KernelSchedule {
  std::string source;              // "the default rules" or the record it is
  std::vector<std::string> notes;  // each default rule chosen or refused, and why
  std::string trace;               // the trace, as text
};

// How compile_model schedules `func` (lowered, unscheduled) for `target`: the best record
// of its workload in `records` (null: none; read from `records_path`), else the default
// rules, whose decisions are recorded (minic/support/explain.h).
KernelSchedule kernel_schedule(const loop::PrimFunc& func, const autotune::Database* records,
                               const std::string& records_path, const Target& target);

}  // namespace minic::cli
