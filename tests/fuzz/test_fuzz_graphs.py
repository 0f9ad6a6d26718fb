#!/usr/bin/env python3
"""The fuzzer's own test: against a stand-in for minic (fake_minic.py) that fails on one op,
or gets one op wrong, the fuzzer must report the failure with its kind and shrink every
failing graph to that one op; against one that is always right, it must pass."""

import os
import subprocess
import sys
import tempfile
import unittest

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
FUZZER = os.path.join(HERE, "fuzz_graphs.py")
FAKE = os.path.join(HERE, "fake_minic.py")
sys.path.insert(0, HERE)

import graph_gen  # noqa: E402


def seed_with_and_without(op):
    """A seed whose graph has `op` and whose next seed's graph does not."""
    def has(seed):
        return any(n.op_type == op for n in graph_gen.random_graph(seed).graph.node)
    return next(s for s in range(1000) if has(s) and not has(s + 1))


def fuzz(out, env, seed=0, count=2):
    command = [sys.executable, FUZZER, "--minic", FAKE, "--count", str(count), "--seed",
               str(seed), "--configs", "llvm", "--out", out]
    return subprocess.run(command, capture_output=True, text=True,
                          env=dict(os.environ, **env))


def reproducers(out):
    return [onnx.load(os.path.join(out, folder, "repro.onnx")) for folder in sorted(os.listdir(out))]


class FuzzerTest(unittest.TestCase):
    def check_shrunk(self, op, env, kind):
        with tempfile.TemporaryDirectory() as out:
            result = fuzz(out, env, seed_with_and_without(op))
            self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
            self.assertIn(f"1 passed, 1 failed (failures: 1 {kind})", result.stdout)
            models = reproducers(out)
            self.assertTrue(models, "no reproducer was written")
            for model in models:
                self.assertEqual([n.op_type for n in model.graph.node], [op])

    def test_an_internal_error_shrinks_to_its_op(self):
        self.check_shrunk("Exp", {"FAKE_MINIC_FAILS_ON": "Exp"}, "internal error")

    def test_a_mismatch_shrinks_to_its_op(self):
        self.check_shrunk("Sin", {"FAKE_MINIC_WRONG_ON": "Sin"}, "mismatch")

    def test_a_right_compiler_passes(self):
        with tempfile.TemporaryDirectory() as out:
            result = fuzz(out, {}, count=3)
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
            self.assertIn("3 passed, 0 failed", result.stdout)


def layer_norm_of(rows):
    """x * 0 + rows, then LayerNormalization over the last axis: the input x does not
    matter, the rows are what the normalisation sees."""
    from onnx import TensorProto, helper, numpy_helper
    import numpy as np
    rows = np.asarray(rows, np.float32)
    width = rows.shape[1]
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "zero"], ["zeros"]),
         helper.make_node("Add", ["zeros", "rows"], ["sum"]),
         helper.make_node("LayerNormalization", ["sum", "scale", "bias"], ["y"], axis=-1)],
        "layer_norm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(rows.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(rows.shape))],
        [numpy_helper.from_array(np.zeros((), np.float32), "zero"),
         numpy_helper.from_array(rows, "rows"),
         numpy_helper.from_array(np.ones(width, np.float32), "scale"),
         numpy_helper.from_array(np.zeros(width, np.float32), "bias")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


class RoundingTest(unittest.TestCase):
    """rounding_decides: which graphs no compiler's float32 answer can be judged on."""

    def decides(self, model):
        import fuzz_graphs
        import numpy as np
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "model.onnx")
            onnx.save(model, path)
            inputs = {"x": np.ones([d.dim_value for d in
                                    model.graph.input[0].type.tensor_type.shape.dim], np.float32)}
            return fuzz_graphs.rounding_decides(path, inputs)

    def test_normalising_constant_rows_is_decided_by_rounding(self):
        # Each row constant: the variance is 0 in exact arithmetic, rounding noise in float.
        self.assertTrue(self.decides(layer_norm_of([[-2.7725887] * 18] * 4)))

    def test_normalising_varied_rows_is_not(self):
        import numpy as np
        rows = np.random.default_rng(1).normal(size=(4, 18))
        self.assertFalse(self.decides(layer_norm_of(rows)))


if __name__ == "__main__":
    unittest.main()
