// default_schedule: the default rules of the target's kind (include/minic/schedule/rules.h).
// Course module 4.
//
// Chapter: docs/module4-schedules.md#4-the-default-cpu-schedule
#include "minic/schedule/rules.h"

namespace minic::schedule {

loop::PrimFunc default_schedule(loop::PrimFunc func, const Target& target) {
  if (target.is_cuda()) return default_gpu_schedule(std::move(func), target);
  return default_cpu_schedule(std::move(func), target);
}

Trace default_trace(const loop::PrimFunc& func, const Target& target) {
  return target.is_cuda() ? default_gpu_trace(func, target) : default_cpu_trace(func, target);
}

}  // namespace minic::schedule
