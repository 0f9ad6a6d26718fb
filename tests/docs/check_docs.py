#!/usr/bin/env python3
"""Checks that the docs say what the code does. Run by ctest as `docs/check` (label docs).

    check_docs.py --root REPO --minic build/minic [FILE...]
    check_docs.py --root REPO --no-commands [FILE...]

With no FILE it checks README.md, docs/*.md and the exercises' README.md files (every
check), examples/tutorials/*.sh (paths and phrases; the tutorials run as tests of their
own) and the headers of the sources (check 5). A FILE ending in .cpp or .h gets the header check. `--no-commands`
leaves out checks 1 and 4, which run the binary: the rest needs no build. It fails,
naming file:line, on:

1. **a command that fails.** Every line of a fenced block that starts with `minic ` or
   `build/minic ` (or `$ minic `; a trailing backslash continues it) runs with bash and
   must exit 0, or N when its comment says so (`minic inspect nothing.onnx  # exit
   status 2`). The commands of one block run in order in one scratch directory, so a
   block can compile into `out/` and then run `out/`. The scratch directory looks like
   the repository root: each top-level entry of the repository is linked into it, so
   `examples/models/mlp.onnx` and `tests/lit/...` resolve as they do for a reader at the
   root; `build/minic` (and `minic` on the PATH) is the binary under test,
   `build/onnx-data` the ONNX test data beside it and `build/examples` the examples built
   beside it (the custom op plugin). Files the commands write stay in scratch.
   A line with a placeholder (`MODEL.onnx`, `[--option]`, `a|b`) is a synopsis, not a
   command: its subcommand and options are checked against `minic --help` instead.
2. **a source path that does not exist.** Every path from the root that starts with
   src/, include/, tools/, tests/, scripts/, examples/, benchmarks/, docs/, exercises/ or
   python/
   (in prose, code spans or fenced blocks; `{a,b}` and `<name>` are expanded) names
   something in the tree, or something git ignores (a generated output such as
   benchmarks/out/).
   Relative links resolve from the file's folder, and `#anchors` name a heading.
3. **a phrase about history**: "issue N", "still open", "to come", "the open issues".
   The docs describe the code as it is.
4. **a usage block that disagrees with `minic --help`.** The block marked
   `<!-- docs-test: usage -->` (README's "Using the minic tool") shows every subcommand
   and option that `minic --help` and `minic SUB --help` list, and none they do not.
   The block is checked rather than generated because it is written for reading: one
   synopsis a subcommand, wrapped and grouped by hand, which CLI11's help is not. Code
   spans in prose that start with `minic` are checked the same way, one direction: what
   they name exists.
5. **a source file that does not name its chapter.** Every .cpp and .h file under src/,
   include/minic/, tools/minic/ and python/src/ opens with a header comment holding one line
   `// Chapter: docs/moduleN-NAME.md#section`: the chapter file exists, the section is one
   of its headings, and the first "Course module M" of the header (the file's main
   module) is N. docs/README.md states the convention.

Markers, each on the line just before a fence:
    <!-- docs-test: skip (REASON) -->   the block is not run; the reason is required
    <!-- docs-test: usage -->           the block is the synopsis checked against --help

Exit status: 0 when nothing is found, 1 otherwise (every finding is printed).
"""

import argparse
import glob
import os
import sys
import time
from typing import List, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from docs_cli import (Cli, Sandbox, block_commands, check_inline_commands,  # noqa: E402
                      check_usage_block, is_synopsis, run_block, synopsis_options)
from docs_headers import check_header, is_source, source_files  # noqa: E402
from docs_text import (Document, Finding, check_paths, check_phrases,  # noqa: E402
                       read_document)


def default_files(root: str) -> List[str]:
    files = [os.path.join(root, "README.md")]
    files += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    files += sorted(glob.glob(os.path.join(root, "examples", "tutorials", "*.sh")))
    files += sorted(glob.glob(os.path.join(root, "exercises", "*.md")))
    files += sorted(glob.glob(os.path.join(root, "exercises", "*", "README.md")))
    return files + source_files(root)


def check_commands(doc: Document, cli: Cli, sandbox: Sandbox, timeout: float,
                   log) -> List[Finding]:
    """Runs the blocks' commands; checks their synopses and usage blocks against --help."""
    findings = check_inline_commands(cli, doc)
    for block in doc.blocks:
        kind = block.marker.kind if block.marker else None
        if kind == "usage":
            findings += check_usage_block(cli, doc, block)
            continue
        for line, command in block_commands(block):
            if is_synopsis(command):
                _, _, problems = synopsis_options(cli, command)
                findings += [Finding(doc.name, line, "usage", f"`{command}`: {p}")
                             for p in problems]
        if kind == "skip":
            log(f"{doc.name}:{block.line}: skipped ({block.marker.reason})")
            continue
        findings += run_block(sandbox, doc, block, timeout, log)
    return findings


def check_files(root: str, files: List[str], minic: Optional[str], timeout: float,
                verbose: bool) -> List[Finding]:
    """Every check of each file; with `minic` None, none that runs the binary."""
    def log(message):
        if verbose:
            print(message, flush=True)

    cli = Cli(minic) if minic else None
    sandbox = Sandbox(root, minic) if minic else None
    findings: List[Finding] = []
    try:
        for path in files:
            if is_source(path):
                findings += check_header(root, path)
                continue
            doc, marker_findings = read_document(path, root)
            findings += marker_findings
            findings += check_phrases(doc)
            findings += check_paths(doc, root)
            if doc.is_markdown and cli and sandbox:
                findings += check_commands(doc, cli, sandbox, timeout, log)
    finally:
        if sandbox:
            sandbox.remove()
    return findings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--root", required=True, help="the repository root")
    parser.add_argument("--minic", help="the minic binary to run")
    parser.add_argument("--no-commands", action="store_true",
                        help="skip the checks that run minic (commands, usage): "
                             "paths, phrases, markers and headers need no build")
    parser.add_argument("--timeout", type=float, default=120,
                        help="seconds one command may run (default 120)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="print each command before it runs")
    parser.add_argument("files", nargs="*", help="files to check (default: the docs)")
    args = parser.parse_args()
    if not args.minic and not args.no_commands:
        parser.error("--minic is required, unless --no-commands")
    minic = None if args.no_commands else args.minic
    root = os.path.abspath(args.root)
    files = [os.path.abspath(f) for f in args.files] or default_files(root)
    start = time.monotonic()
    findings = check_files(root, files, minic, args.timeout, args.verbose)
    for finding in findings:
        print(finding)
    kinds = sorted({f.kind for f in findings})
    summary = ", ".join(f"{sum(f.kind == k for f in findings)} {k}" for k in kinds)
    print(f"checked {len(files)} files in {time.monotonic() - start:.0f} s: "
          f"{len(findings)} findings" + (f" ({summary})" if findings else ""))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
