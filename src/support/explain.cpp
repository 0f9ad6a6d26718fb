// Decisions in words, for `minic explain` (include/minic/support/explain.h). Course
// module 1.
//
// Chapter: docs/module1-overview.md#support-code-srcsupport
#include "minic/support/explain.h"

namespace minic::explain {
namespace {

thread_local Recorder* current = nullptr;

}  // namespace

bool recording() { return current != nullptr; }

Recorder::Recorder() : outer_(current) { current = this; }

Recorder::~Recorder() { current = outer_; }

std::vector<std::string> Recorder::take() { return std::exchange(lines_, {}); }

void note_line(std::string line) {
  if (current) current->add(std::move(line));
}

}  // namespace minic::explain
