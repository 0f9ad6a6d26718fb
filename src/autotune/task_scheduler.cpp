// The task scheduler: every task once, then the largest expected saving. Course module 5.
//
// Chapter: docs/module5-autotuning.md#8-the-task-scheduler-and-the-tuning-loop
#include "minic/autotune/task_scheduler.h"

#include "minic/support/error.h"

#include <algorithm>

namespace minic::autotune {

TaskScheduler::TaskScheduler(std::vector<int> weights)
    : weights_(std::move(weights)),
      rounds_(weights_.size(), 0),
      best_us_(weights_.size(), 0),
      gain_(weights_.size(), 1),
      finished_(weights_.size(), false) {
  if (weights_.empty()) fail("the task scheduler needs at least one task");
}

int TaskScheduler::next() const {
  // A task not yet tried comes first, in order: its default schedule is still unknown.
  for (size_t t = 0; t < weights_.size(); ++t) {
    if (rounds_[t] == 0 && !finished_[t]) return static_cast<int>(t);
  }
  int best_task = -1;
  double best_saving = -1;
  for (size_t t = 0; t < weights_.size(); ++t) {
    if (finished_[t]) continue;
    double floor = 1.0 / (rounds_[t] + 1);
    double saving = weights_[t] * best_us_[t] * std::max(gain_[t], floor);
    if (saving > best_saving) {
      best_saving = saving;
      best_task = static_cast<int>(t);
    }
  }
  return best_task;
}

void TaskScheduler::finish(int task) {
  MINIC_CHECK(task >= 0 && task < static_cast<int>(weights_.size()));
  finished_[task] = true;
}

void TaskScheduler::report(int task, double best_before_us, double best_after_us) {
  MINIC_CHECK(task >= 0 && task < static_cast<int>(weights_.size()));
  ++rounds_[task];
  best_us_[task] = best_after_us;
  // A first round, or one where nothing ran before, tells nothing about the trend yet.
  bool comparable = best_before_us > 0 && best_after_us > 0;
  gain_[task] = comparable ? (best_before_us - best_after_us) / best_before_us : 1;
}

}  // namespace minic::autotune
