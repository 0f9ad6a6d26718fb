#!/usr/bin/env python3
"""Draws the tuning curve of a minic tuning database (course module 5).

    python3 scripts/plot_tuning.py DB.jsonl OUT.png

One line per task: the best latency measured so far against the task's trial number,
relative to the task's default schedule (its first, untuned record), so tasks of every
size share one axis. `minic tune --plot OUT.png` runs this script.
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def curves(path):
    """task name -> (trials, best latency so far / default latency)."""
    by_task = {}
    with open(path) as db:
        for line in db:
            if line.strip():
                record = json.loads(line)
                if record.get("remeasured"):
                    continue  # a finalist timed again at the end: the curve is the search's
                by_task.setdefault((record["workload"], record["task"]), []).append(record)
    names = [task for _, task in by_task]
    result = {}
    for (workload, task), records in by_task.items():
        # Two workloads with one task name (two models' "matmul") get their keys' start.
        label = task if names.count(task) == 1 else f"{task} ({workload[:8]})"
        records.sort(key=lambda r: r["trial"])
        default = next((r["median_us"] for r in records
                        if not r["decisions"] and r["median_us"] > 0), None)
        best, xs, ys = None, [], []
        for record in records:
            if record["median_us"] > 0 and (best is None or record["median_us"] < best):
                best = record["median_us"]
            if best is not None:
                xs.append(record["trial"] + 1)
                ys.append(best / (default or best))
        if xs:
            result[label] = (xs, ys)
    return result


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot_tuning.py DB.jsonl OUT.png")
    data = curves(sys.argv[1])
    if not data:
        sys.exit(f"error: {sys.argv[1]} has no successful records to draw")
    fig, ax = plt.subplots(figsize=(8, 5))
    for task, (xs, ys) in sorted(data.items()):
        ax.step(xs, ys, where="post", label=task)
    ax.set_xlabel("trials of the task")
    ax.set_ylabel("best latency / default schedule's")
    ax.set_title(f"tuning curve: {os.path.basename(sys.argv[1])}")
    ax.grid(True, alpha=0.3)
    if len(data) <= 12:
        ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=100)


if __name__ == "__main__":
    main()
