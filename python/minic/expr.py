"""Elements as expressions, for compute rules written in Python.

A compute rule (minic.register_op(..., compute=...)) gets one Expr per input, the element
of that input one output element reads, and returns the output element as an Expr: what
minic lowers to loop IR (course module 3), fuses with its neighbours and compiles. Python's
arithmetic (+ - * / and unary -) and comparisons (< <= > >=) work on Exprs, with numbers
as constants of the Expr's type; the functions below are the loop IR's intrinsics.

    def swish(x):
        return x * minic.expr.sigmoid(x)

Chapter: docs/module8-deployment.md#6-custom-operators
"""

from . import _minic

Expr = _minic.Expr


def _intrinsic(name):
    def apply(*args):
        return _minic.expr_call(name, list(args))
    apply.__name__ = name
    apply.__doc__ = f"The loop IR intrinsic {name} of its argument(s), element by element."
    return apply


exp = _intrinsic("exp")
log = _intrinsic("log")
sqrt = _intrinsic("sqrt")
tanh = _intrinsic("tanh")
erf = _intrinsic("erf")
sigmoid = _intrinsic("sigmoid")
abs = _intrinsic("fabs")  # noqa: A001  (the float absolute value, as numpy's abs)
floor = _intrinsic("floor")
ceil = _intrinsic("ceil")
sin = _intrinsic("sin")
cos = _intrinsic("cos")
pow = _intrinsic("pow")  # noqa: A001


def where(condition, yes, no):
    """yes where condition holds, else no (either may be a number)."""
    return _minic.expr_select(condition, yes, no)


def minimum(a, b):
    return _minic.expr_min(a, b)


def maximum(a, b):
    return _minic.expr_max(a, b)
