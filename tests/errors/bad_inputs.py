#!/usr/bin/env python3
"""The table of bad inputs: every row a bad input minic must refuse cleanly. Course module 1.

    tests/errors/bad_inputs.py --minic build/minic [--only TEXT] [--keep DIR] [--verbose]

DESIGN.md's rule 7: bad input gives `error: ...` naming the file, node, op and reason, and a
non-zero exit; never a crash, an abort, an internal error or a silent wrong answer. Each row
(a Case of bad_input_kit.py) writes one bad input into an empty folder, runs minic on it,
and checks three things:
  1. the exit status is the row's (2 for bad input, tools/minic/main.cpp);
  2. the row's regular expression matches minic's stderr (also its stdout for rows that
     must succeed, such as zero-size tensors, or whose --compare must fail);
  3. nothing says "internal error" or shows a signal, an abort or a sanitizer's report.
The rows are in cases_models.py (the file, graph structure, attributes, shapes, opsets and
domains), cases_values.py (sizes, symbolic shapes, external data, values only a kernel finds
bad) and cases_files.py (input files, tuning databases, command-line options). The script prints one line per row and
exits 1 listing the rows that failed.
"""

import argparse
import pathlib
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from bad_input_kit import BAD_INPUT  # noqa: E402
import cases_files  # noqa: E402
import cases_models  # noqa: E402
import cases_values  # noqa: E402

# What a crash or a bug looks like in minic's output, whatever the row expects: an internal
# error, a sanitizer's report, an abort, or the bare what() of a C++ standard-library
# exception (std::bad_alloc, "basic_string::substr", "vector::_M_range_check", "stoi").
CRASH_SIGNS = ["internal error", "AddressSanitizer", "UndefinedBehaviorSanitizer",
               "LeakSanitizer", "runtime error:", "terminate called", "Aborted",
               "Segmentation fault", "bad_alloc", "basic_string", "vector::", "map::at",
               "stoi", "stod"]
TIMEOUT_S = 120


def all_cases():
    return cases_models.cases() + cases_values.cases() + cases_files.cases()


def run_case(case, minic, folder):
    """Runs one row in `folder`; returns (problems, exit status, message shown)."""
    case.write(folder)
    args = [arg.replace("{d}", str(folder)) for arg in case.args]
    try:
        done = subprocess.run([minic] + args, capture_output=True, text=True, errors="replace",
                              timeout=TIMEOUT_S, cwd=folder)
    except subprocess.TimeoutExpired:
        return [f"no answer in {TIMEOUT_S} s"], None, ""
    problems = []
    if done.returncode < 0:
        problems.append(f"killed by signal {-done.returncode}")
    elif done.returncode != case.status:
        problems.append(f"exit status {done.returncode}, expected {case.status}")
    # A bad input is reported on stderr; a row that runs (0) or whose check fails (1)
    # prints its verdict on stdout.
    text = done.stderr if case.status == BAD_INPUT else done.stdout + done.stderr
    if not re.search(case.expect, text, re.DOTALL):
        problems.append(f"the message does not match /{case.expect}/")
    if case.status == BAD_INPUT and not done.stderr.startswith("error: "):
        problems.append("stderr does not start with 'error: '")
    for sign in CRASH_SIGNS:
        if sign in done.stderr or sign in done.stdout:
            problems.append(f"output shows '{sign}'")
    shown = (done.stderr.strip() or done.stdout.strip()).replace(str(folder) + "/", "")
    return problems, done.returncode, shown


def first_line(text, width=110):
    line = text.splitlines()[0] if text else ""
    return line if len(line) <= width else line[: width - 3] + "..."


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minic", required=True, help="the minic executable")
    parser.add_argument("--only", default="", help="run the rows whose name contains TEXT")
    parser.add_argument("--keep", help="write each row's folder under DIR and keep it")
    parser.add_argument("--verbose", action="store_true", help="print every row's whole message")
    options = parser.parse_args()
    minic = str(pathlib.Path(options.minic).resolve())

    cases = [c for c in all_cases() if options.only in f"{c.category}: {c.name}"]
    names = [f"{c.category}: {c.name}" for c in cases]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        sys.exit(f"rows named twice: {', '.join(sorted(duplicates))}")

    start = time.monotonic()
    failed = []
    with tempfile.TemporaryDirectory(prefix="minic-bad-inputs-") as scratch:
        root = pathlib.Path(options.keep or scratch)
        for index, case in enumerate(cases):
            folder = root / f"{index:03d}"
            folder.mkdir(parents=True, exist_ok=True)
            problems, status, shown = run_case(case, minic, folder)
            mark = "ok  " if not problems else "FAIL"
            print(f"{mark} {case.category:<14} {case.name:<42} exit {status}  {first_line(shown)}")
            if options.verbose:
                for line in shown.splitlines():
                    print(f"       {line}")
            if problems:
                failed.append((case, problems, shown))

    elapsed = time.monotonic() - start
    categories = sorted({c.category for c in cases})
    print(f"\n{len(cases)} rows in {len(categories)} categories ({', '.join(categories)}), "
          f"{elapsed:.1f} s")
    if not failed:
        print("every bad input gave its expected status and message")
        return 0
    print(f"\n{len(failed)} rows failed:")
    for case, problems, shown in failed:
        print(f"  {case.category}: {case.name}")
        print(f"    minic {' '.join(case.args)}")
        for problem in problems:
            print(f"    - {problem}")
        print(f"    minic said: {first_line(shown, 300)}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
