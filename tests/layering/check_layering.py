#!/usr/bin/env python3
"""Checks that every include of minic's sources follows the pipeline's layering.

    tests/layering/check_layering.py [--root DIR] [--list]

The areas, their folders and the areas each may use are declared once, in pipeline order,
by the minic_area(...) calls of the top-level CMakeLists.txt. This script reads them and
checks, for every .cpp and .h of every area (its src/ folders and its public headers):

  1. each `#include "minic/..."` names a header of the area itself or of an area it may
     use (its DEPS, followed transitively): an include that runs down the pipeline, or
     sideways into an area it does not depend on, fails;
  2. each other quoted include (a private header, `"conv.h"`, `"../loop_tree.h"`) resolves
     to a file in one of the area's own source folders: no area reads another's private
     headers;
  3. every DEPS entry is an area declared above (the CMake function checks this too);
  4. every .cpp under src/ and every header under include/minic/ belongs to an area.

With --list it prints each area and the areas its includes reach, which is the layering
as it is rather than as declared. Exit status 1 on any violation, each one printed as
`file:line: message`. The build enforces rule 1 as well (each area compiles against a
view of include/ holding only the headers it may see); this test also covers headers that
are never compiled on their own and gives one readable list.
"""
import argparse
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
RAW_STRING = re.compile(r'R"([^(\s]*)\((.*?)\)\1"', re.S)


def without_raw_strings(text):
    """The text with the contents of C++ raw string literals blanked (newlines kept): code
    that writes C, like src/driver/aot_entry.cpp, holds #include lines that are not its own."""
    return RAW_STRING.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
AREA_CALL = re.compile(r"^\s*minic_area\((.*?)\)", re.S | re.M)
KEYWORDS = ("NAME", "SOURCES", "HEADERS", "DEPS")
FLAGS = ("OBJECT",)


class Area:
    def __init__(self, name, sources, headers, deps):
        self.name = name
        self.sources = sources  # folders relative to the root, e.g. "src/ops"
        self.headers = headers  # folders or files relative to include/, e.g. "minic/ops"
        self.deps = deps
        self.visible = set()    # this area and every area it may use


def parse_areas(cmake_text):
    """The minic_area calls of CMakeLists.txt, in order."""
    areas = []
    for match in AREA_CALL.finditer(cmake_text):
        words = match.group(1).split()
        if words and words[0] not in KEYWORDS:
            continue  # the function's definition, or its usage comment
        fields = {key: [] for key in KEYWORDS}
        key = None
        for word in words:
            if word in FLAGS:
                continue
            if word in KEYWORDS:
                key = word
            elif key:
                fields[key].append(word)
        if not fields["NAME"]:
            continue
        sources = fields["SOURCES"]
        headers = fields["HEADERS"] or [re.sub(r"^src/", "minic/", sources[0])]
        areas.append(Area(fields["NAME"][0], sources, headers, fields["DEPS"]))
    return areas


def header_owner(areas, root):
    """Maps each public header (as included: "minic/ops/op.h") to its area's name."""
    owner = {}
    for area in areas:
        for entry in area.headers:
            path = root / "include" / entry
            files = sorted(path.glob("*.h")) if path.is_dir() else [path] if path.exists() else []
            for f in files:
                owner[str(f.relative_to(root / "include"))] = area.name
    return owner


def area_files(area, root):
    """The area's own files: sources (non-recursive per folder) and public headers."""
    files = []
    for folder in area.sources:
        files += sorted(f for f in (root / folder).glob("*") if f.suffix in (".cpp", ".h"))
    for entry in area.headers:
        path = root / "include" / entry
        files += sorted(path.glob("*.h")) if path.is_dir() else [path] if path.exists() else []
    return files


def check(root):
    """Every violation, as `file:line: message`, and the includes each area reaches."""
    errors = []
    areas = parse_areas((root / "CMakeLists.txt").read_text())
    if not areas:
        return ["CMakeLists.txt: no minic_area(...) declarations found"], {}
    by_name = {}
    for area in areas:
        for dep in area.deps:
            if dep not in by_name:
                errors.append(f"CMakeLists.txt: area {area.name} uses {dep}, "
                              "which is not declared above it")
                continue
            area.visible |= by_name[dep].visible
        area.visible.add(area.name)
        by_name[area.name] = area
    owner = header_owner(areas, root)
    reached = {area.name: set() for area in areas}

    for area in areas:
        own_folders = [(root / folder).resolve() for folder in area.sources]
        for f in area_files(area, root):
            rel = f.relative_to(root)
            text = without_raw_strings(f.read_text(errors="replace"))
            for number, line in enumerate(text.splitlines(), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                name = m.group(1)
                where = f"{rel}:{number}"
                if name.startswith("minic/"):
                    target = owner.get(name)
                    if target is None:
                        errors.append(f"{where}: {name} is not a public header of any area")
                        continue
                    reached[area.name].add(target)
                    if target not in area.visible:
                        errors.append(f"{where}: area {area.name} includes {name} of area "
                                      f"{target}, which it may not use "
                                      f"(it may use: {', '.join(sorted(area.visible - {area.name})) or 'none'})")
                    continue
                resolved = (f.parent / name).resolve()
                if not resolved.exists():
                    errors.append(f"{where}: \"{name}\" does not resolve from {f.parent.relative_to(root)}")
                elif not any(resolved.parent == folder for folder in own_folders):
                    errors.append(f"{where}: area {area.name} includes the private header "
                                  f"{resolved.relative_to(root)} of another folder")

    # Rule 4: nothing outside the areas.
    owned_sources = set()
    for area in areas:
        for folder in area.sources:
            owned_sources |= {p.resolve() for p in (root / folder).glob("*.cpp")}
    for f in sorted((root / "src").rglob("*.cpp")):
        if f.resolve() not in owned_sources:
            errors.append(f"{f.relative_to(root)}: belongs to no area of CMakeLists.txt")
    for f in sorted((root / "include" / "minic").rglob("*.h")):
        if str(f.relative_to(root / "include")) not in owner:
            errors.append(f"{f.relative_to(root)}: a public header of no area")
    return errors, reached


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parents[2]))
    parser.add_argument("--list", action="store_true", help="print what each area includes")
    args = parser.parse_args()
    root = pathlib.Path(args.root).resolve()
    errors, reached = check(root)
    if args.list:
        for name, targets in reached.items():
            print(f"{name}: {', '.join(sorted(targets - {name})) or '-'}")
    for error in errors:
        print(error)
    print(f"check_layering: {len(reached)} areas, {len(errors)} violations")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
