"""Measuring: child processes, peak memory, statistics and the machine. Course module 8.

Every timed thing runs in a child process of `benchmarks/run`, so that each one's compile
or session time and peak memory are its own. Peak memory is the child's own VmHWM (the
high-water mark of its resident set, from /proc/self/status), reported by the child:
getrusage's ru_maxrss would not do, because exec carries the parent's peak over into the
child, so every child would seem to need at least as much memory as this harness.
"""

import json
import os
import platform
import statistics
import subprocess
import time


class ChildFailed(Exception):
    """A child process exited with an error, timed out, or wrote no result."""


def run_child(command, log_path, timeout, env=None):
    """Runs `command` with its output in log_path; returns the wall time in ms.

    Raises ChildFailed with the end of the log if it fails or runs past `timeout` seconds.
    """
    with open(log_path, "w") as log:
        log.write("$ " + " ".join(command) + "\n")
        log.flush()
        start = time.perf_counter()
        try:
            result = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env,
                                    timeout=timeout)
        except subprocess.TimeoutExpired:
            raise ChildFailed(f"timed out after {timeout:g} s: {' '.join(command)}")
        wall_ms = (time.perf_counter() - start) * 1e3
    if result.returncode != 0:
        raise ChildFailed(f"exit status {result.returncode}: {log_tail(log_path)}")
    return wall_ms


def run_child_json(command, json_path, log_path, timeout, env=None):
    """Runs a child that writes its results to json_path; returns them, with wall_ms."""
    if os.path.exists(json_path):
        os.remove(json_path)
    wall_ms = run_child(command, log_path, timeout, env)
    if not os.path.exists(json_path):
        raise ChildFailed(f"wrote no {json_path}: {log_tail(log_path)}")
    with open(json_path) as f:
        result = json.load(f)
    result["wall_ms"] = wall_ms
    return result


def log_tail(path, lines=6):
    """The last lines of a log, on one line, for an error message."""
    with open(path) as f:
        text = f.read().strip().splitlines()
    return " | ".join(text[-lines:])


def peak_rss_mb():
    """This process's peak resident memory in MiB (VmHWM; see the module docstring)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def latency_stats(samples_ms):
    """Median, mean, min, max, p90 and p99 of a list of times (numpy's percentiles)."""
    ordered = sorted(samples_ms)

    def percentile(p):
        rank = p / 100.0 * (len(ordered) - 1)
        below = int(rank)
        above = min(below + 1, len(ordered) - 1)
        return ordered[below] + (ordered[above] - ordered[below]) * (rank - below)

    return {
        "median_ms": percentile(50),
        "mean_ms": statistics.fmean(ordered),
        "min_ms": ordered[0],
        "max_ms": ordered[-1],
        "p90_ms": percentile(90),
        "p99_ms": percentile(99),
    }


def spread(values):
    """max / min of positive values: 1.0 means every round gave the same time."""
    return max(values) / min(values) if values and min(values) > 0 else float("nan")


def cpu_model():
    """The CPU's name from /proc/cpuinfo (platform.processor() elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def cpu_flags():
    """The vector extensions the CPU reports, of those that matter for FMA throughput."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return [x for x in ("avx2", "fma", "avx512f") if x in flags]
    except OSError:
        pass
    return []


def core_count():
    """Cores this process may run on (the affinity mask, which containers narrow)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def load_average():
    try:
        return list(os.getloadavg())
    except OSError:
        return None

