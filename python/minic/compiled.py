"""Compiling a model and running it.

Chapter: docs/module8-deployment.md#5-minic-from-python
"""

from dataclasses import dataclass, field
import os

from . import _minic
from .model import Model, _value_infos, bind_inputs, load, random_inputs


@dataclass(frozen=True)
class Step:
    """One step of a profiled run: the kernel, its op, whether it ran compiled code, and
    the external back end that ran it (empty: minic)."""
    kernel: str
    op: str
    compiled: bool
    ms: float
    backend: str = ""


@dataclass(frozen=True)
class BenchResult:
    """What `minic bench` reports, in milliseconds (include/minic/runtime/latency.h)."""
    median_ms: float
    mean_ms: float
    min_ms: float
    max_ms: float
    p90_ms: float
    p99_ms: float
    peak_rss_mb: float
    warmup: int
    repeat: int
    samples_ms: list = field(repr=False)

    def __str__(self):
        return (f"median {self.median_ms:.3f} ms, mean {self.mean_ms:.3f}, "
                f"min {self.min_ms:.3f}, p90 {self.p90_ms:.3f}, p99 {self.p99_ms:.3f} "
                f"({self.repeat} runs after {self.warmup} warm-up)")


class CompiledModel:
    """A model compiled by minic, ready to run on numpy arrays.

    compiled(x) or compiled(input=x) gives the output (a tuple if several);
    compiled.run({"input": x}) gives {output name: array}, as ONNX Runtime's run does.
    Arrays that are C-contiguous and of the input's type are read in place; outputs are
    numpy arrays over minic's own result buffers (no copy either way).
    """

    def __init__(self, native, model):
        self._native = native
        self.model = model
        graph = native.graph()  # a copy: read once, not on every call
        self._inputs = _value_infos(graph.inputs())
        self._outputs = _value_infos(graph.outputs())

    @property
    def inputs(self):
        return list(self._inputs)

    @property
    def outputs(self):
        return list(self._outputs)

    @property
    def target(self):
        return self._native.target()

    @property
    def stats(self):
        """How the compile went: kernels, compiled kernels, compile_ms, arena bytes, ..."""
        return dict(self._native.stats())

    @property
    def graph(self):
        """The model after the graph passes (fused nodes are the kernels)."""
        return Model(self._native.graph(), self.model.path)

    @property
    def backend_reports(self):
        """What each external back end's runs have cost so far (the toy NPU's cycles)."""
        return list(self._native.backend_reports())

    @property
    def loop_ir(self):
        """Every compiled kernel's loop IR, scheduled (`minic opt --emit loops`)."""
        return self._native.loop_ir()

    @property
    def kernels(self):
        """{kernel name: its loop IR}."""
        return dict(self._native.kernels())

    @property
    def llvm_ir(self):
        return self._native.llvm_ir()

    @property
    def assembly(self):
        return self._native.assembly()

    @property
    def cuda_source(self):
        return self._native.cuda_source()

    def _bind(self, arrays, named):
        return bind_inputs(self._inputs, arrays, named, "the model")

    def __call__(self, *arrays, **named):
        outputs = self._native.run(self._bind(arrays, named))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def run(self, feeds):
        """{output name: array} for {input name: array}."""
        outputs = self._native.run(self._bind((), dict(feeds)))
        return {info.name: array for info, array in zip(self._outputs, outputs)}

    def profile(self, *arrays, **named):
        """The outputs of one run and each step's time: (outputs, [Step, ...])."""
        outputs, steps = self._native.run_profiled(self._bind(arrays, named))
        outputs = outputs[0] if len(outputs) == 1 else tuple(outputs)
        return outputs, [Step(s["kernel"], s["op"], s["compiled"], s["ms"], s["backend"])
                         for s in steps]

    def bench(self, *arrays, warmup=2, repeat=10, seed=0, **named):
        """Times the model as `minic bench` does; inputs not given are random (from `seed`)."""
        feeds = random_inputs(self.inputs, seed)
        names = [info.name for info in self.inputs]
        feeds.update(zip(names, arrays))
        feeds.update(named)
        result = self._native.bench(self._bind((), feeds), warmup, repeat)
        return BenchResult(warmup=warmup, repeat=repeat, **result)

    def __repr__(self):
        s = self.stats
        reference = s["kernels"] - s["compiled_kernels"]
        what = f", {reference} reference: {', '.join(s['reference_ops'])}" if reference else ""
        return (f"<minic.CompiledModel {self.target}: {s['kernels']} kernels "
                f"({s['compiled_kernels']} compiled{what}), compiled in {s['compile_ms']:.0f} ms>")


def compile(model, target="llvm", passes=None, records=None, threads=0, emulate=False,
            schedule=True, loop_passes=None, backends=()):
    """Compiles a Model (or the model file at a path) for `target`.

    target   "llvm" (this machine's CPU), "llvm -mcpu=NAME", "cuda", "cuda -arch=sm_90"
    passes   graph passes by name (default: the default pipeline; [] for none)
    records  a tuning database (tune()'s records file): tuned kernels use its schedules
    threads  threads of the model's pool (0: every core)
    emulate  for a CUDA target: run the GPU schedules on the loop interpreter
    schedule False leaves kernels as lowered (naive loop nests)
    loop_passes  loop passes by name, run on every kernel after its schedule (default: the
             default loop pipeline; [] for none, which keeps kernels as scheduled)
    backends external back ends by name (minic.backends()), offered every kernel first
    """
    if not isinstance(model, Model):
        model = load(model)
    native = _minic.compile(model._graph, target, None if passes is None else list(passes),
                            schedule, None if loop_passes is None else list(loop_passes),
                            "" if records is None else os.fspath(records), threads, emulate,
                            list(backends))
    return CompiledModel(native, model)
