#!/usr/bin/env python3
"""Seed corpora for minic's libFuzzer targets, from the test inputs of the tree.

Course module 2. scripts/libfuzz.sh runs this before fuzzing. For each target it copies
into OUT/TARGET/ (named by content hash, so a second run adds nothing twice):

  onnx_importer  the .onnx files under tests/ and examples/, and every STRIDE-th model of
                 ONNX's node tests (ONNX_DATA/node/*/model.onnx) up to MAX_BYTES each
  graph_text     the .mgraph files under tests/, examples/ and docs/
  loop_text      the .mloop files, and the `#--- NAME.mloop` parts of lit's split files
  trace_text     the `#--- NAME.trace` parts of lit's split files, and seeds/trace_text/

    make_corpus.py --root . --onnx-data build/onnx-data --out build-libfuzz/corpus
"""

import argparse
import hashlib
import pathlib
import re

SPLIT_MARK = re.compile(r"^#--- (\S+)\s*$")
SEARCHED = ("tests", "examples", "docs")


def split_parts(path):
    """The parts of a lit split file (split-file's `#--- NAME` sections): (name, text)."""
    name, lines = None, []
    for line in path.read_text(errors="replace").splitlines(keepends=True):
        match = SPLIT_MARK.match(line)
        if match:
            if name:
                yield name, "".join(lines)
            name, lines = match.group(1), []
        elif name:
            lines.append(line)
    if name:
        yield name, "".join(lines)


def files_with_suffix(root, suffix):
    for top in SEARCHED:
        yield from sorted((root / top).rglob("*" + suffix))


def add(out_dir, data):
    """Writes `data` (bytes) to out_dir under its hash; returns True if it was new."""
    path = out_dir / hashlib.sha1(data).hexdigest()
    if path.exists():
        return False
    path.write_bytes(data)
    return True


def text_corpus(root, suffix, extra_dir):
    """The contents of every file ending with `suffix`, and of every split part so named."""
    for path in files_with_suffix(root, suffix):
        yield path.read_bytes()
    for path in files_with_suffix(root, ".test"):
        for name, text in split_parts(path):
            if name.endswith(suffix):
                yield text.encode()
    if extra_dir and extra_dir.is_dir():
        for path in sorted(extra_dir.iterdir()):
            yield path.read_bytes()


def onnx_corpus(root, onnx_data, stride, max_bytes):
    for path in files_with_suffix(root, ".onnx"):
        yield path.read_bytes()
    node_dir = onnx_data / "node"
    if node_dir.is_dir():
        models = sorted(node_dir.glob("*/model.onnx"))
        for path in models[::stride]:
            if path.stat().st_size <= max_bytes:
                yield path.read_bytes()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=pathlib.Path, default=pathlib.Path("."))
    parser.add_argument("--onnx-data", type=pathlib.Path, default=pathlib.Path("build/onnx-data"))
    parser.add_argument("--out", type=pathlib.Path, required=True)
    parser.add_argument("--stride", type=int, default=8, help="take every STRIDE-th node test")
    parser.add_argument("--max-bytes", type=int, default=65536)
    args = parser.parse_args()
    seeds = args.root / "tests" / "fuzz" / "libfuzzer" / "seeds"
    corpora = {
        "onnx_importer": onnx_corpus(args.root, args.onnx_data, args.stride, args.max_bytes),
        "graph_text": text_corpus(args.root, ".mgraph", seeds / "graph_text"),
        "loop_text": text_corpus(args.root, ".mloop", seeds / "loop_text"),
        "trace_text": text_corpus(args.root, ".trace", seeds / "trace_text"),
    }
    for target, inputs in corpora.items():
        out_dir = args.out / target
        out_dir.mkdir(parents=True, exist_ok=True)
        added = sum(add(out_dir, data) for data in inputs)
        total = sum(1 for _ in out_dir.iterdir())
        print(f"{target}: {total} seeds in {out_dir} ({added} new)")


if __name__ == "__main__":
    main()
