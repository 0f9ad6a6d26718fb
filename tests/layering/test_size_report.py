#!/usr/bin/env python3
"""Shows that scripts/size_report.py fails when it should: a file over the line budget, a
function over the function budget, and a table marked as one (exempt, but listed)."""
import pathlib
import subprocess
import sys
import tempfile

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "size_report.py"


def function(name, lines, mark=False):
    body = "".join(f"  x += {i};\n" for i in range(lines - 3))
    return ("// size: table\n" if mark else "") + f"int {name}(int x) {{\n{body}  return x;\n}}\n"


def report(files):
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        for name, text in files.items():
            (root / "src").mkdir(exist_ok=True)
            (root / "src" / name).write_text(text)
        done = subprocess.run([sys.executable, str(SCRIPT), "--root", str(root), "src"],
                              capture_output=True, text=True)
        return done.returncode, done.stdout


def main():
    cases = [
        ("within budget", {"a.cpp": function("small", 80)}, 0, "0 over budget"),
        ("a long function", {"a.cpp": function("long_one", 81)}, 1,
         "src/a.cpp:1: long_one: 81 lines (function)"),
        ("a long file", {"b.h": "// x\n" * 501}, 1, "src/b.h: 501 lines (file)"),
        ("a marked table", {"c.cpp": function("table", 120, mark=True)}, 0,
         "exempt (table): src/c.cpp:2: table: 120 lines (function)"),
        ("braces in strings and comments", {"d.cpp": 'const char* s = "{{{";\n// }\n' +
         function("after", 10)}, 0, "0 over budget"),
    ]
    failed = 0
    for title, files, status, expected in cases:
        code, out = report(files)
        ok = code == status and expected in out
        print(f"{'ok  ' if ok else 'FAIL'} {title}: exit {code}; {out.strip().splitlines()}")
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
