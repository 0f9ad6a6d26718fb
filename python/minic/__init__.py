"""minic from Python: load a model, compile it, run it on numpy arrays, time it, tune it.

    import minic
    model = minic.load("resnet18.onnx")            # the graph IR, imported
    compiled = minic.compile(model)                 # graph passes, schedules, LLVM
    y = compiled(x)                                 # numpy arrays in and out
    print(compiled.bench())                         # `minic bench`'s statistics

Every call goes to minic's C++ library through the native module minic._minic
(python/src/); errors arrive as minic.Error with minic's message.

Chapter: docs/module8-deployment.md#5-minic-from-python
"""

from . import _minic, expr
from .compiled import BenchResult, CompiledModel, Step, compile
from .custom_op import TensorType, custom_ops, load_custom_ops, register_op
from .model import Model, ValueInfo, load, parse
from .schedule import Ref, Schedule, compare_functions, run_loop_passes
from .tune import TaskResult, tune

Error = _minic.Error


def passes(kind="graph"):
    """The registered passes of a kind ("graph" or "loop"): {name: summary}."""
    return dict(_minic.passes(kind))


def backends():
    """The registered external back ends: {name: summary} (include/minic/backends/backend.h)."""
    return dict(_minic.backends())


def default_pipeline():
    """The graph passes compile() runs when not told otherwise, in order."""
    return list(_minic.default_pipeline())


__all__ = [
    "BenchResult", "CompiledModel", "Error", "Model", "Ref", "Schedule", "Step",
    "TaskResult", "TensorType", "ValueInfo", "backends", "compare_functions", "compile",
    "custom_ops",
    "default_pipeline", "expr", "load", "load_custom_ops", "parse", "passes", "register_op",
    "run_loop_passes", "tune",
]
