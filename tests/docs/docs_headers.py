"""The header half of the docs check: every source file names the chapter that covers it.

check_docs.py (the entry point) documents what is checked and why. This module reads the
header comment of a C++ file -- the comment lines it opens with -- and checks the one line
of it that links the chapter section covering the file,

    // Chapter: docs/module4-schedules.md#2-the-primitives

and the file's course module (the first "Course module N" of the header, the file's main
module) against that chapter's module number.
"""

import functools
import os
import re
from typing import List, Optional, Tuple

from docs_text import Finding, heading_anchors

# The files whose headers are checked: minic's sources, public headers, tool and Python
# bindings.
HEADER_ROOTS = ("src", os.path.join("include", "minic"), os.path.join("tools", "minic"),
                os.path.join("python", "src"))
SOURCE_SUFFIXES = (".cpp", ".h")

CHAPTER_LINE = re.compile(r"^//\s*Chapter:\s*(.*?)\s*$")
CHAPTER_PATH = re.compile(r"^docs/module(\d+)-[\w-]+\.md$")
COURSE_MODULE = re.compile(r"\bcourse\s+modules?\s+(\d+)", re.IGNORECASE)


def is_source(path: str) -> bool:
    return path.endswith(SOURCE_SUFFIXES)


def source_files(root: str) -> List[str]:
    """Every .cpp and .h file under the header roots, sorted."""
    files = []
    for top in HEADER_ROOTS:
        for folder, _, names in os.walk(os.path.join(root, top)):
            files += [os.path.join(folder, n) for n in names if is_source(n)]
    return sorted(files)


def header_comment(lines: List[str]) -> List[Tuple[int, str]]:
    """The comment lines a file opens with (number, text), up to the first other line."""
    header = []
    for number, text in enumerate(lines, start=1):
        if not text.startswith("//"):
            break
        header.append((number, text))
    return header


def course_module(header: List[Tuple[int, str]]) -> Optional[int]:
    """The first module number the header names ("Course module 4", "course modules 2
    and 4"), read across line breaks."""
    text = " ".join(line[2:].strip() for _, line in header)
    match = COURSE_MODULE.search(text)
    return int(match.group(1)) if match else None


@functools.lru_cache(maxsize=None)
def chapter_anchors(path: str) -> Tuple[str, ...]:
    return tuple(heading_anchors(path))


def check_chapter_link(root: str, link: str) -> Tuple[Optional[int], Optional[str]]:
    """The module number of the chapter `link` names, or why the link is wrong."""
    path, _, anchor = link.partition("#")
    match = CHAPTER_PATH.match(path)
    if not match or not anchor:
        return None, (f"chapter link '{link}' is not docs/moduleN-NAME.md#section")
    full = os.path.join(root, path)
    if not os.path.isfile(full):
        return None, f"chapter link '{link}': {path} does not exist"
    if anchor not in chapter_anchors(full):
        return None, f"chapter link '{link}': {path} has no heading with the anchor #{anchor}"
    return int(match.group(1)), None


def check_header(root: str, path: str) -> List[Finding]:
    """The findings about one file's header: no header, no chapter line or more than one,
    a link that does not resolve, no course module, or one that is not the chapter's."""
    name = os.path.relpath(path, root)
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    header = header_comment(lines)
    if not header:
        return [Finding(name, 1, "header", "the file opens with no header comment")]
    chapters = [(n, m.group(1)) for n, text in header for m in [CHAPTER_LINE.match(text)] if m]
    if not chapters:
        return [Finding(name, 1, "header",
                        "the header names no chapter (// Chapter: docs/moduleN-NAME.md#section)")]
    if len(chapters) > 1:
        return [Finding(name, chapters[1][0], "header",
                        f"the header names {len(chapters)} chapters; name the main one")]
    line, link = chapters[0]
    chapter_module, problem = check_chapter_link(root, link)
    if problem:
        return [Finding(name, line, "header", problem)]
    module = course_module(header)
    if module is None:
        return [Finding(name, 1, "header", "the header names no course module (Course module N)")]
    if module != chapter_module:
        return [Finding(name, line, "header",
                        f"the header says course module {module}, but its chapter {link} is "
                        f"module {chapter_module}'s")]
    return []


def check_headers(root: str, files: List[str]) -> List[Finding]:
    findings = []
    for path in files:
        findings += check_header(root, path)
    return findings
