#!/usr/bin/env python3
"""Reports the C++ source files over a line budget and the functions over a length budget.

    scripts/size_report.py [--max-file-lines 500] [--max-function-lines 80] [PATH...]

STYLE.md asks that no file grows past what one chapter can cover and that a function reads
on one screen. This script measures both over src/, include/, tools/ and tests/ (or the
paths given) and exits with status 1 when something is over budget, so that a test can
run it. A function is measured from the line of its opening brace to its closing brace.

Tables are exempt: a function or file may say so with a comment `// size: table` on the
line before the function (or anywhere in the first 30 lines of a file), and the report
lists what is exempt so that the exemption stays visible.

The function finder is a small brace matcher, not a C++ parser: it skips comments, string
and character literals, and treats a `{` as a function body when it is opened at namespace
or class scope after a `)` (possibly followed by qualifiers, an initializer list or a
trailing return type). That is how every function in this tree is written.
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_PATHS = ["src", "include", "tools", "tests"]
SUFFIXES = {".cpp", ".h"}
EXEMPT_MARK = "// size: table"
CONTROL = re.compile(r"\b(if|for|while|switch|catch|do|else)\s*(\(|$)")
SCOPE_OPENERS = re.compile(r"\b(namespace|class|struct|union|enum)\b[^()]*$")


def strip_code(text):
    """The text with comments and literals blanked (newlines kept), so braces and parens
    inside them do not count."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator 1'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """(name, first line, last line) of each function body in the file, 1-based lines."""
    code = strip_code(text)
    result = []
    stack = []  # per open brace: "scope" (namespace/class), "function", or "block"
    start = 0   # where the text before the next brace begins
    line_of = lambda pos: code.count("\n", 0, pos) + 1
    for pos, c in enumerate(code):
        if c == ";":
            start = pos + 1
        elif c == "{":
            head = code[start:pos].strip()
            in_scope = all(kind == "scope" for kind in stack)
            if not in_scope:
                kind = "block"
            elif SCOPE_OPENERS.search(head) or head.startswith("extern") or head == "":
                kind = "scope"
            elif ")" in head and not CONTROL.search(head) and "=" not in head.split("(")[0]:
                kind = "function"
                name = re.findall(r"([~\w:]+|operator\s*\S+)\s*\(", head)
                result.append([name[0] if name else "?", line_of(pos), None])
            else:
                kind = "block"  # an initializer or a table at namespace scope
            stack.append(kind)
            start = pos + 1
        elif c == "}":
            if stack:
                kind = stack.pop()
                if kind == "function":
                    open_items = [f for f in result if f[2] is None]
                    open_items[-1][2] = line_of(pos)
            start = pos + 1
    return [(n, a, b) for n, a, b in result if b is not None]


def exempt_before(lines, first_line):
    """True if the function starting at `first_line` is marked as a table: the mark on one
    of the few lines above its signature."""
    for k in range(max(0, first_line - 8), first_line):
        if EXEMPT_MARK in lines[k]:
            return True
    return False


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", default=DEFAULT_PATHS)
    parser.add_argument("--max-file-lines", type=int, default=500)
    parser.add_argument("--max-function-lines", type=int, default=80)
    parser.add_argument("--root", default=str(ROOT),
                        help="the tree to measure (default: the one this script is in)")
    args = parser.parse_args()
    root = pathlib.Path(args.root).resolve()

    files = []
    for p in args.paths:
        path = (root / p) if not pathlib.Path(p).is_absolute() else pathlib.Path(p)
        files += [path] if path.is_file() else sorted(
            f for f in path.rglob("*") if f.suffix in SUFFIXES)
    over, exempt = [], []
    for f in files:
        text = f.read_text(encoding="utf-8", errors="replace")
        lines = text.split("\n")
        rel = f.relative_to(root)
        file_exempt = any(EXEMPT_MARK in l for l in lines[:30])
        n = len(lines) - (1 if text.endswith("\n") else 0)
        if n > args.max_file_lines:
            (exempt if file_exempt else over).append(f"{rel}: {n} lines (file)")
        for name, a, b in functions(text):
            length = b - a + 1
            if length > args.max_function_lines:
                note = f"{rel}:{a}: {name}: {length} lines (function)"
                (exempt if exempt_before(lines, a) else over).append(note)
    for line in exempt:
        print(f"exempt (table): {line}")
    for line in over:
        print(f"over budget: {line}")
    print(f"size_report: {len(files)} files, {len(over)} over budget "
          f"(files > {args.max_file_lines} lines, functions > {args.max_function_lines} lines), "
          f"{len(exempt)} exempt tables")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
