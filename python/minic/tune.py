"""The autotuner from Python, with a progress bar.

Chapter: docs/module8-deployment.md#5-minic-from-python
"""

from dataclasses import dataclass
import os
import sys

from . import _minic
from .model import Model, load


@dataclass(frozen=True)
class TaskResult:
    """How one task (a kernel workload) ended: what `minic tune` prints in its table."""
    name: str
    workload_key: str
    weight: int
    trials: int
    default_us: float
    best_us: float
    finalists: int
    flops: float

    @property
    def speedup(self):
        return self.default_us / self.best_us if self.default_us > 0 and self.best_us > 0 else 0.0


def _clock(seconds):
    seconds = int(seconds + 0.5)
    return f"{seconds // 60}:{seconds % 60:02d}"


class _ProgressBar:
    """One line redrawn after each round on a terminal; a line per round elsewhere."""

    def __init__(self, trials, stream):
        self.trials = trials
        self.stream = stream
        self.redraw = stream.isatty()

    def __call__(self, round_):
        done = min(round_["trials"], self.trials)
        width = 24
        filled = width * done // self.trials
        line = (f"[{'#' * filled}{'.' * (width - filled)}] {done:>4}/{self.trials} trials  "
                f"task {round_['task_index'] + 1}/{round_['task_count']} {round_['task'][:20]:<20} "
                f"best {round_['best_us']:9.1f} us  {_clock(round_['elapsed_s'])} "
                f"eta {_clock(round_['eta_s'])}")
        self.stream.write(("\r" + line) if self.redraw else line + "\n")
        self.stream.flush()

    def close(self):
        if self.redraw:
            self.stream.write("\n")


def tune(model, records, trials=64, budget_s=None, target="llvm", search="evolutionary",
         cost_model="xgboost", seed=1, threads=1, per_round=8, finalists=3, compile_jobs=0,
         resume=False, progress=True):
    """Searches faster schedules for a model's kernels, as `minic tune` does.

    Every measurement is appended to `records` (JSON Lines) as it is made; compile(model,
    records=records) then uses the best of each kernel. Returns a TaskResult per task.
    `progress` draws a progress bar on stderr (False: none; a callable: called with each
    round's dict instead).
    """
    if not isinstance(model, Model):
        model = load(model)
    options = dict(trials=trials, seed=seed, search=search, cost_model=cost_model,
                   threads=threads, per_round=per_round, finalists=finalists,
                   compile_jobs=compile_jobs, resume=resume)
    if budget_s is not None:
        options["budget_s"] = float(budget_s)
    bar = None
    if callable(progress):
        on_round = progress
    elif progress:
        bar = on_round = _ProgressBar(trials, sys.stderr)
    else:
        on_round = None
    try:
        tasks = _minic.tune(model._graph, os.fspath(records), target, options, on_round)
    finally:
        if bar:
            bar.close()
    return [TaskResult(**task) for task in tasks]
