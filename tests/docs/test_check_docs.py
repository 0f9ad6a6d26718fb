#!/usr/bin/env python3
"""Tests of the docs checker (check_docs.py) on the fixture pages in fixtures/: each kind of
defect is found, at its line, and a clean page passes; likewise for the source headers of
fixtures/headers/. Run by ctest as `docs/checker`.

    test_check_docs.py --root REPO --minic build/minic

The fixtures name files of this folder and examples/models/mlp.onnx, so the root is the
repository root, as for the real check.
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from check_docs import check_files  # noqa: E402
from docs_cli import Cli, check_usage_block, is_synopsis, parse_help  # noqa: E402
from docs_text import Block, Marker, expand_braces, read_document  # noqa: E402

ROOT = ""
MINIC = ""


def fixture(name):
    return os.path.join(HERE, "fixtures", name)


def line_of(name, text, occurrence=1):
    """The line of a fixture holding `text` (its n-th occurrence)."""
    with open(fixture(name), encoding="utf-8") as f:
        hits = [n for n, line in enumerate(f, start=1) if text in line]
    return hits[occurrence - 1]


def findings_of(name):
    return check_files(ROOT, [fixture(name)], MINIC, timeout=60, verbose=False)


def where(findings):
    return sorted((f.kind, f.line) for f in findings)


class FixturePages(unittest.TestCase):
    def test_clean_page_passes(self):
        self.assertEqual([str(f) for f in findings_of("clean.md")], [])

    def test_missing_path_link_and_anchor(self):
        found = findings_of("missing_path.md")
        page = "missing_path.md"
        self.assertEqual(where(found), [("path", line_of(page, "no_such_file")),
                                        ("path", line_of(page, "no_such_twin")),
                                        ("path", line_of(page, "#no-such-section"))])
        self.assertIn("tests/docs/no_such_file.py does not exist", found[0].message)
        self.assertEqual(found[0].file, os.path.relpath(fixture(page), ROOT))

    def test_banned_phrases(self):
        found = findings_of("phrases.md")
        page = "phrases.md"
        self.assertEqual(where(found), [("phrase", line_of(page, "issue 12")),
                                        ("phrase", line_of(page, "still")),
                                        ("phrase", line_of(page, "To Come")),
                                        ("phrase", line_of(page, "open issues"))])
        self.assertIn("'still open'", " ".join(f.message for f in found))

    def test_failing_command_names_line_command_and_stderr(self):
        found = findings_of("failing_command.md")
        page = "failing_command.md"
        self.assertEqual(where(found), [("command", line_of(page, "no-such-model")),
                                        ("command", line_of(page, "--version"))])
        first = min(found, key=lambda f: f.line)
        self.assertIn("`build/minic inspect no-such-model.onnx` exited with status 2",
                      first.message)
        self.assertIn("error:", first.message)  # minic's stderr is quoted
        second = max(found, key=lambda f: f.line)
        self.assertIn("exited with status 0 (expected 2)", second.message)

    def test_bad_markers(self):
        found = findings_of("bad_markers.md")
        page = "bad_markers.md"
        self.assertEqual(where(found), [("command", line_of(page, "no-such-model")),
                                        ("marker", line_of(page, "docs-test: skip -->")),
                                        ("marker", line_of(page, "sometimes")),
                                        ("marker", line_of(page, "not before a fence"))])
        messages = " ".join(f.message for f in found)
        self.assertIn("needs a reason", messages)
        self.assertIn("unknown docs-test marker", messages)


class SourceHeaders(unittest.TestCase):
    """The header check on the fixture sources in fixtures/headers/: a good header passes;
    each defect gives one finding, at its line."""

    def finding_of(self, name):
        found = findings_of(os.path.join("headers", name))
        self.assertEqual(len(found), 1, [str(f) for f in found])
        self.assertEqual(found[0].kind, "header")
        return found[0]

    def test_good_header_passes(self):
        self.assertEqual([str(f) for f in findings_of("headers/good.cpp")], [])

    def test_no_header(self):
        found = self.finding_of("no_header.h")
        self.assertEqual(found.line, 1)
        self.assertIn("opens with no header comment", found.message)
        self.assertEqual(found.file, os.path.relpath(fixture("headers/no_header.h"), ROOT))

    def test_no_chapter_line(self):
        found = self.finding_of("no_chapter.cpp")
        self.assertEqual(found.line, 1)
        self.assertIn("names no chapter", found.message)

    def test_two_chapter_lines(self):
        found = self.finding_of("two_chapters.cpp")
        self.assertEqual(found.line, line_of("headers/two_chapters.cpp", "#3-loop-passes"))
        self.assertIn("names 2 chapters", found.message)

    def test_missing_anchor(self):
        found = self.finding_of("missing_anchor.cpp")
        self.assertEqual(found.line, line_of("headers/missing_anchor.cpp", "// Chapter:"))
        self.assertIn("has no heading with the anchor #no-such-section", found.message)

    def test_wrong_module(self):
        found = self.finding_of("wrong_module.cpp")
        self.assertEqual(found.line, line_of("headers/wrong_module.cpp", "// Chapter:"))
        self.assertIn("says course module 3", found.message)
        self.assertIn("is module 4's", found.message)

    def test_no_course_module(self):
        found = self.finding_of("no_module.cpp")
        self.assertIn("names no course module", found.message)


class UsageBlock(unittest.TestCase):
    """A usage block made from the help itself passes; one that drops or invents an option
    does not."""

    def usage_lines(self, cli):
        lines = []
        for path in cli.all_paths():
            page = cli.page(path)
            if page.subcommands and not page.options:
                continue
            options = " ".join(f"[{sorted(names, key=len)[-1]}]" for names in page.options)
            lines.append(" ".join(["build/minic", *path, options]))
        return lines

    def check(self, lines):
        cli = Cli(MINIC)
        block = Block(1, [(n, text) for n, text in enumerate(lines, start=2)],
                      Marker(0, "usage", ""))
        doc, _ = read_document(fixture("clean.md"), ROOT)
        return check_usage_block(cli, doc, block)

    def test_complete_block_passes(self):
        self.assertEqual([str(f) for f in self.check(self.usage_lines(Cli(MINIC)))], [])

    def test_missing_and_unknown_options(self):
        lines = self.usage_lines(Cli(MINIC))
        run = next(i for i, line in enumerate(lines) if line.startswith("build/minic run "))
        self.assertIn("[--seed]", lines[run])
        lines[run] = lines[run].replace("[--seed]", "[--no-such-option]")
        messages = [f.message for f in self.check(lines)]
        self.assertEqual(len(messages), 2, messages)
        self.assertIn("`minic run` has no option --no-such-option", " ".join(messages))
        self.assertIn("`minic run --help` lists --seed", " ".join(messages))

    def test_missing_and_unknown_subcommands(self):
        lines = [line for line in self.usage_lines(Cli(MINIC))
                 if not line.startswith("build/minic viz")]
        lines.append("build/minic frobnicate [--x]")
        messages = " ".join(f.message for f in self.check(lines))
        self.assertIn("`minic viz` (in `minic --help`) is not in the usage block", messages)
        self.assertIn("`minic` has no subcommand frobnicate", messages)


class Pieces(unittest.TestCase):
    def test_expand_braces(self):
        self.assertEqual(expand_braces("a/{b,c}.{h,cpp}"),
                         ["a/b.h", "a/b.cpp", "a/c.h", "a/c.cpp"])

    def test_synopsis_or_command(self):
        self.assertTrue(is_synopsis("minic run MODEL.onnx"))
        self.assertTrue(is_synopsis("minic run m.onnx [--seed N]"))
        self.assertTrue(is_synopsis("minic db show|best"))
        self.assertFalse(is_synopsis("minic run examples/models/mlp.onnx --seed 1 | head"))
        self.assertFalse(is_synopsis("minic inspect x.onnx   # error: ... exit status 2"))

    def test_parse_help(self):
        page = parse_help("Usage: minic [OPTIONS] SUBCOMMAND\n\nOptions:\n"
                          "  -h,--help   Print this help message and exit\n"
                          "  -o,--output TEXT REQUIRED  Where\n"
                          "                 -x is not an option of its own\n"
                          "  --seed INT [1]   Seed\n\nSubcommands:\n  run   Run a model\n")
        self.assertEqual(page.options, [{"-o", "--output"}, {"--seed"}])
        self.assertEqual(page.subcommands, ["run"])


if __name__ == "__main__":
    args = sys.argv[1:]
    ROOT = os.path.abspath(args[args.index("--root") + 1])
    MINIC = os.path.abspath(args[args.index("--minic") + 1])
    unittest.main(argv=[sys.argv[0]], verbosity=2)
