"""The text half of the docs check: reading markdown, markers, source paths, banned phrases.

check_docs.py (the entry point) documents what is checked and why; this module reads a
document into fenced blocks and prose, and finds the paths that do not exist and the
phrases that speak of the project's history instead of the code.
"""

import glob
import os
import re
import subprocess
from dataclasses import dataclass, field
from typing import List, Optional, Tuple


@dataclass
class Finding:
    """One thing wrong, at a file and line."""
    file: str
    line: int
    kind: str  # command, usage, path, phrase, marker
    message: str

    def __str__(self):
        return f"{self.file}:{self.line}: [{self.kind}] {self.message}"


@dataclass
class Marker:
    """`<!-- docs-test: KIND (REASON) -->` on the line before a fence."""
    line: int
    kind: str  # "skip" or "usage"
    reason: str


@dataclass
class Block:
    """A fenced block: its opening line, its lines (number, text) and its marker."""
    line: int
    lines: List[Tuple[int, str]] = field(default_factory=list)
    marker: Optional[Marker] = None


@dataclass
class Document:
    """A file to check: its name relative to the root, its lines, its fenced blocks."""
    path: str
    name: str
    lines: List[str]
    blocks: List[Block]
    prose: List[str]  # the lines, with the inside of fenced blocks blanked
    is_markdown: bool


FENCE = re.compile(r"^\s{0,3}(```|~~~)")
MARKER = re.compile(r"<!--\s*docs-test:(.*?)-->")
MARKER_BODY = re.compile(r"^\s*(skip|usage)\s*(?:\((.*)\))?\s*$")


def read_document(path: str, root: str) -> Tuple[Document, List[Finding]]:
    """Splits a file into fenced blocks and prose; a markdown file's markers go with the
    block that follows them. Returns the document and the findings about its markers."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    name = os.path.relpath(path, root)
    markdown = path.endswith(".md")
    doc = Document(path, name, lines, [], list(lines), markdown)
    if not markdown:
        return doc, []
    findings: List[Finding] = []
    pending: Optional[Marker] = None
    block: Optional[Block] = None
    for number, text in enumerate(lines, start=1):
        if block is not None:
            if FENCE.match(text):
                block = None
            else:
                block.lines.append((number, text))
                doc.prose[number - 1] = ""
            continue
        if FENCE.match(text):
            block = Block(number, marker=pending)
            doc.blocks.append(block)
            pending = None
            continue
        if pending is not None:
            findings.append(Finding(name, pending.line, "marker",
                                    "a docs-test marker must be on the line just before a fence"))
            pending = None
        match = MARKER.search(text)
        if match:
            pending, problem = parse_marker(match.group(1), number)
            if problem:
                findings.append(Finding(name, number, "marker", problem))
    if pending is not None:
        findings.append(Finding(name, pending.line, "marker",
                                "a docs-test marker must be on the line just before a fence"))
    return doc, findings


def parse_marker(body: str, line: int) -> Tuple[Optional[Marker], Optional[str]]:
    """Reads `skip (reason)` or `usage`. A skip without a reason is refused: the reader
    of the docs must learn why the block is not run."""
    match = MARKER_BODY.match(body)
    if not match:
        return None, f"unknown docs-test marker '{body.strip()}' (known: skip (REASON), usage)"
    kind, reason = match.group(1), (match.group(2) or "").strip()
    if kind == "skip" and not reason:
        return None, "a skip marker needs a reason: <!-- docs-test: skip (why) -->"
    return Marker(line, kind, reason), None


# --- banned phrases ----------------------------------------------------------------------

# Text that speaks of the project's history or its tracker rather than of the code. Words
# may be split over a line break, so the words of a phrase are joined by any whitespace.
BANNED_PHRASES = [
    ("issue N", r"\bissues?\s+#?\d+\b"),
    ("still open", r"\bstill\s+open\b"),
    ("to come", r"\bto\s+come\b"),
    ("the open issues", r"\bopen\s+issues?\b"),
]


def check_phrases(doc: Document) -> List[Finding]:
    text = "\n".join(doc.lines)
    findings = []
    for label, pattern in BANNED_PHRASES:
        for match in re.finditer(pattern, text, re.IGNORECASE):
            line = text.count("\n", 0, match.start()) + 1
            quoted = " ".join(match.group(0).split())
            findings.append(Finding(doc.name, line, "phrase",
                                    f"'{quoted}' (docs say what the code is, not '{label}')"))
    return findings


# --- source paths ------------------------------------------------------------------------

SOURCE_ROOTS = ("src", "include", "tools", "tests", "scripts", "examples", "benchmarks", "docs",
                "exercises", "python")
# A path from the repository root: a source folder, then names; `{a,b}` lists
# alternatives, `<name>` and `*` stand for any name. Not preceded by a name character or
# a slash, so `../examples/x` (a link relative to the file) is left to the link check.
PATH = re.compile(r"(?<![\w./~$@-])((?:%s)/(?:\{[^}\s`]*\}|[\w.<>*/+-])*(?:#[\w.-]*)?)"
                  % "|".join(SOURCE_ROOTS))
LINK = re.compile(r"\]\(([^)\s]+)\)")


def expand_braces(pattern: str) -> List[str]:
    match = re.search(r"\{([^{}]*)\}", pattern)
    if not match:
        return [pattern]
    head, tail = pattern[:match.start()], pattern[match.end():]
    return [p for choice in match.group(1).split(",") for p in expand_braces(head + choice + tail)]


def heading_anchors(path: str) -> List[str]:
    """GitHub's anchors of a markdown file's headings: lower case, punctuation dropped,
    spaces as hyphens."""
    anchors = []
    with open(path, encoding="utf-8") as f:
        inside_fence = False
        for line in f:
            if FENCE.match(line):
                inside_fence = not inside_fence
            elif not inside_fence and line.startswith("#"):
                title = line.lstrip("#").strip().lower().replace("`", "")
                anchors.append(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


def missing_target(base: str, target: str) -> Optional[str]:
    """Why `target` (a path with an optional #anchor, relative to `base`) does not
    resolve, or None when it does."""
    target, _, anchor = target.partition("#")
    if not target:
        return None
    for pattern in expand_braces(re.sub(r"<[^>]*>", "*", target)):
        full = os.path.normpath(os.path.join(base, pattern))
        matches = glob.glob(full)
        if not matches:
            return f"{pattern} does not exist"
        if anchor and anchor != "..." and full.endswith(".md") and os.path.isfile(full):
            if anchor not in heading_anchors(full):
                return f"{pattern} has no heading with the anchor #{anchor}"
    return None


def git_ignored(root: str, path: str) -> bool:
    """A path git ignores is a generated output (benchmarks/out/...), not a source file."""
    result = subprocess.run(["git", "-C", root, "check-ignore", "-q", path],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return result.returncode == 0


def check_paths(doc: Document, root: str) -> List[Finding]:
    """Every path from the root that the text names (prose, code spans, fenced blocks)
    exists, and every relative link of a markdown file resolves from the file's folder."""
    findings = []
    seen = set()

    def report(line, message):
        if (line, message) not in seen:
            seen.add((line, message))
            findings.append(Finding(doc.name, line, "path", message))

    for number, text in enumerate(doc.lines, start=1):
        for match in PATH.finditer(text):
            name = match.group(1).rstrip(".:;,")
            problem = missing_target(root, name)
            if problem and not git_ignored(root, name.partition("#")[0]):
                report(number, problem)
    if not doc.is_markdown:
        return findings
    own_anchors = heading_anchors(doc.path)
    base = os.path.dirname(doc.path)
    for number, text in enumerate(doc.prose, start=1):
        for match in LINK.finditer(text):
            target = match.group(1)
            if re.match(r"^[a-z]+:", target):
                continue  # http:, https:, mailto:
            if target.startswith("#"):
                if target[1:] not in own_anchors:
                    report(number, f"no heading with the anchor {target}")
                continue
            problem = missing_target(base, target)
            if problem:
                report(number, f"link ({target}): {problem}")
    return findings
