// Decisions in words, for `minic explain`. Course module 1.
//
// Code that chooses (a default schedule rule, CPU or GPU, that fits a block or refuses
// it; a graph pass that leaves a node as it is) says what it chose and why with
// explain::note. Nothing is kept unless a Recorder is alive on the thread: then every note
// goes to it, in order, and costs a formatted string; otherwise a note costs a test of one
// thread-local pointer. `minic explain` prints a graph pass's notes under the pass.
//
//   explain::Recorder recorder;
//   loop::PrimFunc scheduled = schedule::default_schedule(func, target);
//   for (const std::string& line : recorder.take()) fmt::print("  {}\n", line);
//
// Chapter: docs/module1-overview.md#support-code-srcsupport
#pragma once

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

namespace minic::explain {

// True while a Recorder is alive on this thread.
bool recording();

// Appends `line` to the innermost Recorder of this thread, if any.
void note_line(std::string line);

// A formatted note; the message is only formatted while recording.
template <typename... Args>
void note(fmt::format_string<Args...> format, Args&&... args) {
  if (recording()) note_line(fmt::format(format, std::forward<Args>(args)...));
}

// Collects the notes made on this thread while it lives (Recorders nest: the innermost
// collects).
class Recorder {
 public:
  Recorder();
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  void add(std::string line) { lines_.push_back(std::move(line)); }
  // The notes so far, leaving none.
  std::vector<std::string> take();

 private:
  std::vector<std::string> lines_;
  Recorder* outer_ = nullptr;
};

}  // namespace minic::explain
