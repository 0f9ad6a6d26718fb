// The table of primitives a trace may name: for each, how its arguments are read and
// which function of primitives.h it calls. Private to src/schedule.
//
// Course module 4. This table is the one place where a trace line meets a primitive:
// Schedule::apply looks the primitive up here, so recording and replaying are written
// once for every primitive. Adding a primitive to traces is one entry; one defined
// outside src/schedule registers itself instead (include/minic/schedule/primitive_registry.h).
//
// Chapter: docs/module4-schedules.md#1-schedules-are-traces
#pragma once

#include "minic/schedule/primitive_registry.h"
#include "minic/schedule/schedule.h"

namespace minic::schedule {

// Every built-in primitive, in the order of primitives.h.
const std::vector<PrimitiveEntry>& primitive_table();
// The primitives registered with MINIC_REGISTER_PRIMITIVE, in the order they were.
const std::vector<PrimitiveEntry>& registered_primitives();

}  // namespace minic::schedule
