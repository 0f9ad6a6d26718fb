"""The command half of the docs check: `minic --help`, usage synopses, running commands.

check_docs.py (the entry point) documents what is checked and why. This module reads
`minic --help` and `minic SUB --help` into the subcommands and options they list, checks
synopses and commands named in prose against them, and runs the fenced commands of a
document in scratch directories.
"""

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

from docs_text import Block, Document, Finding

# --- minic --help ------------------------------------------------------------------------


@dataclass
class HelpPage:
    """What `minic [SUB...] --help` lists: each option as the set of its names
    (`{"-o", "--output"}`), and the subcommands."""
    options: List[Set[str]] = field(default_factory=list)
    subcommands: List[str] = field(default_factory=list)

    def has_option(self, name: str) -> bool:
        return any(name in names for names in self.options)


SECTION = re.compile(r"^([A-Za-z][A-Za-z ]*):\s*$")
OPTION_LINE = re.compile(r"^\s{1,8}(-{1,2}[A-Za-z][\w-]*(?:\s*,\s*-{1,2}[A-Za-z][\w-]*)*)")
SUBCOMMAND_LINE = re.compile(r"^\s{1,8}([a-z][\w-]*)(?:\s|$)")


def parse_help(text: str) -> HelpPage:
    """Reads CLI11's help text: the lines of the Options and Subcommands sections."""
    page = HelpPage()
    section = ""
    for line in text.splitlines():
        header = SECTION.match(line)
        if header:
            section = header.group(1).strip().lower()
            continue
        if section == "options":
            match = OPTION_LINE.match(line)
            if match:
                names = {n.strip() for n in match.group(1).split(",")}
                if not names & {"-h", "--help"}:
                    page.options.append(names)
        elif section == "subcommands":
            match = SUBCOMMAND_LINE.match(line)
            if match:
                page.subcommands.append(match.group(1))
    return page


class Cli:
    """The help pages of one minic binary, read once each."""

    def __init__(self, minic: str):
        self.minic = minic
        self.pages: Dict[Tuple[str, ...], HelpPage] = {}

    def page(self, path: Tuple[str, ...]) -> HelpPage:
        if path not in self.pages:
            result = subprocess.run([self.minic, *path, "--help"], capture_output=True,
                                    text=True, timeout=60)
            if result.returncode != 0:
                raise RuntimeError(f"`minic {' '.join(path)} --help` failed: {result.stderr}")
            self.pages[path] = parse_help(result.stdout)
        return self.pages[path]

    def all_paths(self, path: Tuple[str, ...] = ()) -> List[Tuple[str, ...]]:
        """The top level and every subcommand, depth first."""
        paths = [path]
        for sub in self.page(path).subcommands:
            paths += self.all_paths(path + (sub,))
        return paths


# --- synopses ----------------------------------------------------------------------------

MINIC_WORD = re.compile(r"^(?:\./)?(?:build/)?minic$")
OPTION_WORD = re.compile(r"(?:(?<=[\s\[|(])|^)(-{1,2}[A-Za-z][\w-]*)")
# A synopsis rather than a command: an optional part `[-...`, alternatives `a|b` inside a
# word, or a placeholder in capitals (MODEL, OUT_DIR, FILE.dot).
SYNOPSIS = re.compile(r"\[-|\[=|\w\|\w|(?<![\w$-])[A-Z][A-Z0-9_]*[A-Z0-9](?![a-z])")


def is_synopsis(command: str) -> bool:
    return bool(SYNOPSIS.search(command.split(" #")[0]))


def synopsis_paths(cli: Cli, words: List[str]) -> Tuple[List[Tuple[str, ...]], int, str]:
    """The subcommand paths a synopsis names (`compile|run|bench` names three) and how
    many words they took; an error text when a named subcommand does not exist."""
    paths: List[Tuple[str, ...]] = [()]
    used = 0
    while used < len(words) and not words[used].startswith(("-", "[")):
        known = cli.page(paths[0]).subcommands
        if not known:
            break
        choices = words[used].split("|")
        missing = [c for c in choices if c not in known]
        if missing:
            where = " ".join(("minic",) + paths[0])
            return paths, used, f"`{where}` has no subcommand {', '.join(missing)}"
        paths = [p + (c,) for p in paths for c in choices]
        used += 1
    return paths, used, ""


def synopsis_options(cli: Cli, text: str) -> Tuple[List[Tuple[str, ...]], Set[str], List[str]]:
    """Reads one synopsis (`minic SUB ... [--opt X]`): the subcommand paths it names, the
    options it shows, and the problems: a subcommand or an option the help does not list."""
    words = text.split()
    if words and MINIC_WORD.match(words[0]):
        words = words[1:]
    paths, used, problem = synopsis_paths(cli, words)
    if problem:
        return paths, set(), [problem]
    options = set(OPTION_WORD.findall(" ".join(words[used:])))
    problems = []
    for path in paths:
        page = cli.page(path)
        for option in sorted(options):
            if not page.has_option(option):
                where = " ".join(("minic",) + path)
                problems.append(f"`{where}` has no option {option} (see `{where} --help`)")
    return paths, options, problems


def check_usage_block(cli: Cli, doc: Document, block: Block) -> List[Finding]:
    """A usage block lists every subcommand and option of `minic --help`, and nothing
    the help does not list."""
    findings = []
    shown: Dict[Tuple[str, ...], Set[str]] = {}
    for line, command in block_commands(block):
        paths, options, problems = synopsis_options(cli, command)
        findings += [Finding(doc.name, line, "usage", p) for p in problems]
        for path in paths:
            for depth in range(len(path) + 1):
                shown.setdefault(path[:depth], set())
            shown[path] |= options
    for path in cli.all_paths():
        page = cli.page(path)
        where = " ".join(("minic",) + path)
        if path not in shown:
            findings.append(Finding(doc.name, block.line, "usage",
                                    f"`{where}` (in `minic --help`) is not in the usage block"))
            continue
        for names in page.options:
            if not names & shown[path]:
                name = sorted(names, key=len)[-1]
                findings.append(Finding(doc.name, block.line, "usage",
                                        f"`{where} --help` lists {name}; the usage block "
                                        f"does not show it"))
    return findings


INLINE_CODE = re.compile(r"`([^`]+)`")


def check_inline_commands(cli: Cli, doc: Document) -> List[Finding]:
    """A code span in prose that starts with `minic` names subcommands and options the
    help lists (`minic opt --passes=NAME`)."""
    findings = []
    text = "\n".join(doc.prose)
    for match in INLINE_CODE.finditer(text):
        span = " ".join(match.group(1).split())
        words = span.split()
        if not words or not MINIC_WORD.match(words[0]):
            continue
        line = text.count("\n", 0, match.start()) + 1
        _, _, problems = synopsis_options(cli, span)
        findings += [Finding(doc.name, line, "usage", f"`{span}`: {p}") for p in problems]
    return findings


# --- running commands --------------------------------------------------------------------

COMMAND_LINE = re.compile(r"^\s*(?:\$\s+)?((?:\./)?(?:build/)?minic(?:\s.*)?)$")
EXPECTED_STATUS = re.compile(r"\s#.*\bexit status (\d+)\b")


def block_commands(block: Block) -> List[Tuple[int, str]]:
    """The minic command lines of a block, each with its first line number; a line that
    ends in a backslash goes on on the next."""
    commands = []
    lines = block.lines
    i = 0
    while i < len(lines):
        number, text = lines[i]
        match = COMMAND_LINE.match(text)
        i += 1
        if not match:
            continue
        command = match.group(1)
        while command.endswith("\\") and i < len(lines):
            command = command[:-1].rstrip() + " " + lines[i][1].strip()
            i += 1
        if block.marker is not None and block.marker.kind == "usage":
            while i < len(lines) and lines[i][1][:1].isspace():  # a wrapped synopsis
                command += " " + lines[i][1].strip()
                i += 1
        commands.append((number, command))
    return commands


class Sandbox:
    """Scratch directories that look like the repository root: every top-level entry of
    the repository is a link, `build/minic` is the binary under test, `build/onnx-data`
    the ONNX test data beside it and `build/examples` the examples built beside it (the
    custom op plugin). What a command writes stays in the scratch directory."""

    def __init__(self, root: str, minic: str):
        self.root = os.path.abspath(root)
        self.base = tempfile.mkdtemp(prefix="minic-docs-")
        self.bin = os.path.join(self.base, "bin")
        os.mkdir(self.bin)
        os.symlink(os.path.abspath(minic), os.path.join(self.bin, "minic"))
        for beside in ("onnx-data", "examples"):
            path = os.path.join(os.path.dirname(os.path.abspath(minic)), beside)
            if os.path.exists(path):
                os.symlink(os.path.realpath(path), os.path.join(self.bin, beside))
        self.count = 0

    def new_directory(self) -> str:
        self.count += 1
        outer = os.path.join(self.base, f"block{self.count}")
        work = os.path.join(outer, "repo")
        os.makedirs(work)
        for entry in os.listdir(self.root):
            if entry == ".git" or entry.startswith("build"):
                continue
            os.symlink(os.path.join(self.root, entry), os.path.join(work, entry))
        os.symlink(self.bin, os.path.join(work, "build"))
        return work

    def remove(self):
        shutil.rmtree(self.base, ignore_errors=True)


def tail(text: str, lines: int = 15) -> str:
    kept = text.strip().splitlines()[-lines:]
    return "\n".join("    " + line for line in kept)


def run_block(sandbox: Sandbox, doc: Document, block: Block, timeout: float,
              log) -> List[Finding]:
    """Runs a block's commands in order in one fresh scratch directory. A command exits
    0, or with N when its comment says `exit status N`."""
    commands = [(line, c) for line, c in block_commands(block) if not is_synopsis(c)]
    if not commands:
        return []
    work = sandbox.new_directory()
    env = dict(os.environ, PATH=sandbox.bin + os.pathsep + os.environ.get("PATH", ""))
    findings = []
    for line, command in commands:
        expected_match = EXPECTED_STATUS.search(command)
        expected = int(expected_match.group(1)) if expected_match else 0
        log(f"{doc.name}:{line}: {command}")
        try:
            result = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=work,
                                    env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, text=True, timeout=timeout)
            status: Optional[int] = result.returncode
            stderr = result.stderr
        except subprocess.TimeoutExpired as e:
            status = None
            raw = e.stderr or b""  # bytes, whatever `text` says
            stderr = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
        if status == expected:
            continue
        what = f"ran past {timeout:.0f} s" if status is None else f"exited with status {status}"
        findings.append(Finding(doc.name, line, "command",
                                f"`{command}` {what} (expected {expected}); stderr:\n"
                                f"{tail(stderr)}"))
    return findings
