#!/usr/bin/env python3
"""Every pass the source tree registers is in the `minic` executable's registry. Course
modules 2 and 4.

Each pass registers itself with MINIC_REGISTER_GRAPH_PASS("name", ...) or
MINIC_REGISTER_LOOP_PASS("name", ...) in its own file under src/passes/graph/ or
src/passes/loop/ (include/minic/passes/pass_registry.h): a static object that a linker
drops unless the library is linked whole. This test reads the names from the sources and
requires `minic opt --list-passes` to list each under its kind. ctest runs it as
passes/registered (label `unit`); tests/unit/pass_registry_test.cpp checks the same for
the unit-test binary.

    passes_registered.py --minic BUILD/minic --source SOURCE_DIR
"""

import argparse
import os
import re
import subprocess
import sys

KINDS = {"graph": "MINIC_REGISTER_GRAPH_PASS", "loop": "MINIC_REGISTER_LOOP_PASS"}


def passes_in_sources(source, kind):
    folder = os.path.join(source, "src", "passes", kind)
    pattern = re.compile(KINDS[kind] + r'\(\s*"([^"]+)"')
    names = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".cpp"):
            with open(os.path.join(folder, name), encoding="utf-8") as file:
                names += pattern.findall(file.read())
    return names


def listed_passes(minic):
    """kind -> names, from the sections of `minic opt --list-passes`."""
    text = subprocess.run([minic, "opt", "--list-passes"], check=True, capture_output=True,
                          text=True).stdout
    listed = {}
    kind = None
    for line in text.splitlines():
        heading = re.match(r"(graph|loop) passes \(default pipeline: ", line)
        if heading:
            kind = heading.group(1)
            listed[kind] = []
        elif line.startswith("  ") and kind:
            listed[kind].append(line.split()[0])
    return listed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minic", required=True)
    parser.add_argument("--source", required=True)
    args = parser.parse_args()
    listed = listed_passes(args.minic)
    failures = []
    for kind in KINDS:
        in_sources = passes_in_sources(args.source, kind)
        if not in_sources:
            failures.append(f"no {kind} pass registration found under src/passes/{kind}/")
        for name in in_sources:
            if name not in listed.get(kind, []):
                failures.append(f"{kind} pass '{name}' is registered in the sources but "
                                f"`minic opt --list-passes` does not list it")
        print(f"{kind} passes: {len(in_sources)} in the sources, "
              f"{len(listed.get(kind, []))} listed by minic")
    if failures:
        sys.exit("FAIL: " + "\nFAIL: ".join(failures))


if __name__ == "__main__":
    main()
