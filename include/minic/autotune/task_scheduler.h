// The task scheduler: which task gets the next round of measurements.
//
// Course module 5. A model's tasks matter unequally: a convolution that runs 3 times for
// 2 ms each is worth more tuning than a ReLU that runs once for 20 us. The scheduler
// gives every task one round first (which also times its default schedule), then always
// picks the task whose next round promises the largest saving of the model's latency:
//
//   expected saving of task t  =  weight(t) * best(t) * gain(t)
//
// where best(t) is its best latency so far and gain(t) what the next round may bring: the
// relative improvement its last round brought, but at least 1 / (rounds(t) + 1), the share
// a best-of-n search still gains from one more try on average. So a task that stopped
// improving cools down slowly rather than at once, a heavy task gets more rounds than a
// light one, and no task starves. This is Ansor's gradient-based scheduler without its
// look-ahead terms: enough to move trials from tasks that converged to tasks that still
// improve.
//
// Chapter: docs/module5-autotuning.md#8-the-task-scheduler-and-the-tuning-loop
#pragma once

#include <vector>

namespace minic::autotune {

class TaskScheduler {
 public:
  // One entry per task: how many kernels of the model it stands for.
  explicit TaskScheduler(std::vector<int> weights);

  // The task for the next round; -1 when every task is finished.
  int next() const;
  // Takes a task out: its space has nothing left to measure.
  void finish(int task);
  // Reports a finished round of task `task`: its best latency before and after it (before
  // is 0 on its first round).
  void report(int task, double best_before_us, double best_after_us);

  int rounds(int task) const { return rounds_[task]; }

 private:
  std::vector<int> weights_;
  std::vector<int> rounds_;
  std::vector<double> best_us_;
  std::vector<double> gain_;
  std::vector<bool> finished_;
};

}  // namespace minic::autotune
