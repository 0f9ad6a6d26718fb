"""Schedules of one loop IR function, from Python.

    sch = minic.Schedule(compiled.kernels["matmul"])   # or any .mloop function's text
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    io, ii = sch.split(i, [-1, 32])
    sch.vectorize(ii)
    print(sch.func); print(sch.trace)
    sch.check()                                        # the same results as before?

Every primitive of minic (schedule/primitive_registry.h) is a method: `sch.NAME(args)`
applies it as one line of a trace.

Chapter: docs/module8-deployment.md#5-minic-from-python
"""

import numpy as np

from . import _minic


class Ref:
    """A block or loop of a schedule (a trace variable)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"Ref({self.name!r})"


def _argument(value):
    return _minic.TraceVar(value.name) if isinstance(value, Ref) else value


class Schedule:
    """A schedule of one loop IR function: `func`'s text holds it alone, or `name` picks it."""

    def __init__(self, func, name=""):
        self._native = _minic.Schedule(func, name)
        self._original = self._native.func()  # the function as it was, for check and time

    @property
    def func(self):
        """The function as scheduled so far (loop IR text)."""
        return self._native.func()

    @property
    def trace(self):
        """The primitives applied so far (trace text, replayable)."""
        return self._native.trace()

    def replay(self, trace):
        """Applies every line of a trace."""
        self._native.replay(trace)

    def apply(self, primitive, *args):
        """Applies primitive(args); returns what it made: None, one Ref or a tuple of Refs."""
        results = self._native.apply(primitive, [_argument(a) for a in args])
        refs = tuple(Ref(name) for name in results)
        if not refs:
            return None
        return refs[0] if len(refs) == 1 and primitive != "get_loops" else refs

    def __getattr__(self, primitive):
        if primitive.startswith("_") or _minic.primitive_usage(primitive) is None:
            raise AttributeError(f"minic has no schedule primitive '{primitive}'")
        return lambda *args: self.apply(primitive, *args)

    def default_trace(self, target="llvm"):
        """The trace of minic's default schedule for the original function."""
        return _minic.default_trace(self._original, target)

    def check(self, seed=0, rtol=1e-3, atol=1e-5):
        """Raises minic.Error unless the function computes what it did before the schedule
        (compare_functions on the loop interpreter)."""
        compare_functions(self._original, self.func, seed, rtol, atol)

    def time(self, target="llvm", threads=1):
        """Microseconds of one call before and after, compiled (as the tuner times them)."""
        before, after = _minic.time_functions([self._original, self.func], target, threads)
        return before, after


def compare_functions(before, after, seed=0, rtol=1e-3, atol=1e-5):
    """Runs two loop IR functions with the same parameters on the same random arguments
    (the loop interpreter, GPU code thread block by thread block) and raises minic.Error
    naming the first parameter whose results differ: what `minic schedule --check` does."""
    names = [name for name, _, _ in _minic.loop_params(before)]
    expected = _minic.run_loop(before, _random_arguments(before, seed))
    actual = _minic.run_loop(after, _random_arguments(before, seed))
    for name, a, b in zip(names, actual, expected):
        a = a.reshape(b.shape)
        if not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
            raise _minic.Error(f"{name} differs: max abs difference "
                               f"{float(np.max(np.abs(a.astype(np.float64) - b)))}")


def _random_arguments(func, seed):
    """Random arrays for a function's parameters: floats in [-1, 1), integers in [0, 10)."""
    from .model import ValueInfo, random_inputs
    infos = [ValueInfo(name, dtype, tuple(shape))
             for name, dtype, shape in _minic.loop_params(func)]
    return list(random_inputs(infos, seed).values())


def run_loop_passes(text, passes):
    """Loop passes by name on every function of a loop IR text; returns the new text."""
    return _minic.run_loop_passes(text, list(passes))
