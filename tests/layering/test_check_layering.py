#!/usr/bin/env python3
"""Shows that check_layering.py fails when it should: a small tree of three areas, first as
declared (no violation), then with each kind of violation added one at a time."""
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import check_layering  # noqa: E402

CMAKE = """
minic_area(NAME base  SOURCES src/base)
minic_area(NAME mid   SOURCES src/mid   DEPS base)
minic_area(NAME top   SOURCES src/top   DEPS mid)
"""


def make_tree(root):
    files = {
        "CMakeLists.txt": CMAKE,
        "include/minic/base/base.h": "#pragma once\n",
        "include/minic/mid/mid.h": '#pragma once\n#include "minic/base/base.h"\n',
        "include/minic/top/top.h": '#pragma once\n#include "minic/mid/mid.h"\n',
        "src/base/base.cpp": '#include "minic/base/base.h"\n',
        "src/mid/mid.cpp": '#include "minic/mid/mid.h"\n#include "helper.h"\n',
        "src/mid/helper.h": "#pragma once\n",
        "src/top/top.cpp": '#include "minic/top/top.h"\n#include "minic/base/base.h"\n',
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def errors_after(edit):
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        make_tree(root)
        edit(root)
        return check_layering.check(root)[0]


def append(path, text):
    return lambda root: (root / path).open("a").write(text)


def main():
    cases = [
        ("a clean tree", lambda root: None, None),
        ("an include running down", append("src/base/base.cpp", '#include "minic/top/top.h"\n'),
         "area base includes minic/top/top.h of area top"),
        ("a public header running down", append("include/minic/mid/mid.h", '#include "minic/top/top.h"\n'),
         "area mid includes minic/top/top.h of area top"),
        ("a private header of another area", append("src/top/top.cpp", '#include "../mid/helper.h"\n'),
         "includes the private header src/mid/helper.h"),
        ("an unknown public header", append("src/top/top.cpp", '#include "minic/nowhere.h"\n'),
         "minic/nowhere.h is not a public header of any area"),
        ("a source outside every area", lambda root: (root / "src/stray").mkdir() or
         (root / "src/stray/x.cpp").write_text(""), "src/stray/x.cpp: belongs to no area"),
        ("a dependency declared below", lambda root: (root / "CMakeLists.txt").write_text(
            CMAKE.replace("DEPS base)", "DEPS top)", 1)), "uses top, which is not declared above it"),
    ]
    failed = 0
    for title, edit, expected in cases:
        errors = errors_after(edit)
        ok = (not errors) if expected is None else any(expected in e for e in errors)
        print(f"{'ok  ' if ok else 'FAIL'} {title}: {errors or 'no violations'}")
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
