#!/usr/bin/env python3
"""A stand-in for `minic` in the fuzzer's own test (test_fuzz_graphs.py): `run` computes the
outputs with ONNX Runtime and writes them as minic does, but fails as an internal error
when the model has the op FAKE_MINIC_FAILS_ON, and adds 1 to every output when it has the
op FAKE_MINIC_WRONG_ON; `opt` does nothing."""

import os
import sys

import numpy as np
import onnx
import onnxruntime as ort


def main(argv):
    if argv[0] != "run":
        return 0
    model_path = argv[1]
    ops = {node.op_type for node in onnx.load(model_path).graph.node}
    if os.environ.get("FAKE_MINIC_FAILS_ON") in ops:
        print("error: internal error (a bug in minic): the fake fails here", file=sys.stderr)
        return 3
    feeds, out_dir = {}, None
    for flag, value in zip(argv, argv[1:]):
        if flag == "--input":
            name, path = value.split("=", 1)
            feeds[name] = np.load(path)
        if flag == "--output-dir":
            out_dir = value
    session = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    wrong = os.environ.get("FAKE_MINIC_WRONG_ON") in ops
    for index, output in enumerate(session.run(None, feeds)):
        np.save(os.path.join(out_dir, f"output_{index}.npy"), output + 1 if wrong else output)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
