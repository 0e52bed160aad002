"""The table of primitive calls: one row per function the subset allows.

Every stage looks a call up here and nowhere else: the frontend to accept or
reject ``np.foo(...)``, the interpreters to run it, the lifter to map it to
SymPy, the printers to spell it for NumPy, CuPy or ``math``.  A missing row is
a :class:`~coarsen_nb.errors.CoarsenError` naming the call.

Kinds
-----
``elementwise``  maps each element (or a scalar) to one value; SymPy sees into it.
``reduction``    array → scalar (``sum``, ``mean``, ``prod``, ``min``/``max`` of one array).
``shape``        integer-valued, derivative zero (``len``, ``floor``, ...).
``constructor``  makes a fresh array (``zeros``, ``ones``, ``empty``, ...).
``opaque``       SymPy cannot see into it; it ends a segment (``dot``, ``@``).
``reshape``      the same values in another shape (``atleast_2d``); an opaque step whose rules
                 reshape the cotangent and the tangent (:mod:`coarsen_nb.lower.reshapes`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Primitive:
    name: str
    kind: str
    nargs: tuple[int, ...]      # accepted argument counts
    numpy: str | None           # attribute of the array namespace (np / cupy)
    math: str | None = None     # attribute of ``math`` for scalar-only code, if any
    sympy: str | None = None    # attribute of ``sympy``, if SymPy knows it


def _row(name, kind, nargs, numpy=None, math_=None, sympy=None):
    return Primitive(name, kind, nargs if isinstance(nargs, tuple) else (nargs,),
                     numpy if numpy is not None else name, math_, sympy)


PRIMITIVES: dict[str, Primitive] = {p.name: p for p in [
    _row("sin", "elementwise", 1, math_="sin", sympy="sin"),
    _row("cos", "elementwise", 1, math_="cos", sympy="cos"),
    _row("tan", "elementwise", 1, math_="tan", sympy="tan"),
    _row("arcsin", "elementwise", 1, math_="asin", sympy="asin"),
    _row("arccos", "elementwise", 1, math_="acos", sympy="acos"),
    _row("arctan", "elementwise", 1, math_="atan", sympy="atan"),
    _row("arctan2", "elementwise", 2, math_="atan2", sympy="atan2"),
    _row("sinh", "elementwise", 1, math_="sinh", sympy="sinh"),
    _row("cosh", "elementwise", 1, math_="cosh", sympy="cosh"),
    _row("tanh", "elementwise", 1, math_="tanh", sympy="tanh"),
    _row("exp", "elementwise", 1, math_="exp", sympy="exp"),
    _row("expm1", "elementwise", 1, math_="expm1", sympy=None),
    _row("log", "elementwise", 1, math_="log", sympy="log"),
    _row("log1p", "elementwise", 1, math_="log1p", sympy=None),
    _row("log2", "elementwise", 1, math_="log2", sympy=None),
    _row("log10", "elementwise", 1, math_="log10", sympy=None),
    _row("sqrt", "elementwise", 1, math_="sqrt", sympy="sqrt"),
    _row("abs", "elementwise", 1, numpy="abs", math_="fabs", sympy="Abs"),
    _row("hypot", "elementwise", 2, math_="hypot", sympy=None),
    _row("erf", "elementwise", 1, numpy=None, math_="erf", sympy="erf"),
    _row("maximum", "elementwise", 2, math_=None, sympy="Max"),
    _row("minimum", "elementwise", 2, math_=None, sympy="Min"),
    _row("power", "elementwise", 2, math_="pow", sympy="Pow"),
    _row("square", "elementwise", 1, sympy=None),
    _row("logaddexp", "elementwise", 2, sympy=None),
    # integer-valued or piecewise constant: derivative zero
    _row("sign", "shape", 1, math_=None, sympy="sign"),
    _row("floor", "shape", 1, math_="floor", sympy="floor"),
    _row("ceil", "shape", 1, math_="ceil", sympy="ceiling"),
    # Python's rounding arithmetic (derivative 0, or 1 and -(a // b) for %): see phi/rounding.py
    _row("round", "elementwise", 1, numpy="round"),
    _row("mod", "elementwise", 2, numpy="remainder"),
    _row("floor_divide", "elementwise", 2),
    _row("len", "shape", 1, numpy=None),
    _row("float", "elementwise", 1, numpy=None),
    _row("int", "shape", 1, numpy=None),
    # builtin min/max: of two or more scalars (elementwise) or of one array (reduction)
    _row("min", "elementwise", (1, 2, 3, 4), numpy="min", sympy="Min"),
    _row("max", "elementwise", (1, 2, 3, 4), numpy="max", sympy="Max"),
    # reductions
    _row("sum", "reduction", 1),
    _row("mean", "reduction", 1),
    _row("prod", "reduction", 1),
    _row("amax", "reduction", 1, numpy="max"),
    _row("amin", "reduction", 1, numpy="min"),
    # fresh arrays
    _row("zeros", "constructor", 1),
    _row("ones", "constructor", 1),
    _row("empty", "constructor", 1),
    _row("full", "constructor", 2),
    _row("zeros_like", "constructor", 1),
    _row("ones_like", "constructor", 1),
    _row("empty_like", "constructor", 1),
    _row("copy", "constructor", 1),
    # the same values, shaped as NumPy's rule says for the operand's rank
    _row("atleast_1d", "reshape", 1),
    _row("atleast_2d", "reshape", 1),
    _row("atleast_3d", "reshape", 1),
    # SymPy cannot see into these: they end a segment
    _row("dot", "opaque", 2),
    # a list or tuple literal of numbers, as the 1-D array NumPy makes of it (frontend/literals.py);
    # no function of np or math is spelled so: the frontend makes it, lookup() never finds it
    _row("array_literal", "opaque", (), numpy="asarray"),
    _row("array_literal_2d", "opaque", (), numpy="asarray"),     # (ncols, entries row by row...)
    _row("matmul", "opaque", 2),
]}

#: Names that ``math.X`` / ``np.X`` spell differently from our canonical name.
ALIASES: dict[str, str] = {
    "asin": "arcsin", "acos": "arccos", "atan": "arctan", "atan2": "arctan2",
    "fabs": "abs", "absolute": "abs", "pow": "power", "fmax": "maximum", "fmin": "minimum",
    "max": "max", "min": "min", "array": "copy", "remainder": "mod", "around": "round",
}

#: NumPy's named ufuncs for the arithmetic operators, as the operator expression they mean (``a``, ``b``:
#: the arguments).  The frontend translates the expression instead of the call, so SymPy lifting and the
#: broadcasting adjoints are the operators' own.
OPERATOR_UFUNCS: dict[str, str] = {
    "add": "a + b", "subtract": "a - b", "multiply": "a * b", "divide": "a / b", "true_divide": "a / b",
    "power": "a ** b", "negative": "-a", "positive": "+a", "square": "a ** 2", "reciprocal": "1.0 / a",
}

#: Constants the frontend folds: ``math.pi``, ``np.e``, ...
CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "inf": math.inf, "tau": math.tau}

#: Module names whose attributes are primitives.
MODULES = ("math", "np", "numpy")

#: Builtins usable without a module prefix.
BUILTINS = ("abs", "min", "max", "len", "float", "int", "sum", "round")


def lookup(module: str | None, attr: str) -> Primitive | None:
    """The primitive that ``module.attr`` (or the builtin ``attr``) names, if any."""
    if module is None and attr not in BUILTINS:
        return None
    name = ALIASES.get(attr, attr)
    if name in ("array_literal", "array_literal_2d"):
        return None
    if module in ("np", "numpy") and attr in ("max", "amax"):
        name = "amax"
    if module in ("np", "numpy") and attr in ("min", "amin"):
        name = "amin"
    if module == "math" and attr in ("max", "min", "sum", "len", "round", "mod", "remainder"):
        return None
    return PRIMITIVES.get(name)


def evaluate(name: str, args: list, xp=np):
    """Run primitive ``name`` on concrete values: the executable meaning of a call."""
    p = PRIMITIVES[name]
    if name == "len":
        return len(args[0])
    if name == "float":
        return float(args[0])
    if name == "int":
        return int(args[0])
    if name == "round" and isinstance(args[0], (int, float)):
        return round(args[0])       # Python's: an int, half to even (np.round gives a float)
    if name in ("min", "max"):
        if len(args) == 1:
            return getattr(xp, "amin" if name == "min" else "amax")(args[0])
        f = min if name == "min" else max
        return f(*args)
    if name == "abs":
        x = args[0]
        return abs(x) if isinstance(x, (int, float)) else xp.abs(x)
    if name == "erf":
        x = args[0]
        if isinstance(x, (int, float)):
            return math.erf(x)
        return np.vectorize(math.erf, otypes=[float])(x)
    if name == "copy":
        return xp.array(args[0], dtype=float, copy=True)
    if name == "array_literal":
        return xp.asarray(args) if all(isinstance(a, int) for a in args) else xp.asarray(args, dtype=float)
    if name == "array_literal_2d":
        return xp.reshape(evaluate("array_literal", args[1:], xp), (-1, args[0]))
    if name in ("zeros", "ones", "empty", "full"):
        return getattr(xp, name)(*args)
    if p.kind == "elementwise" and all(isinstance(a, (int, float)) for a in args) and p.math:
        if name in ("log", "sqrt", "arcsin", "arccos", "log1p", "log2", "log10"):
            # NumPy semantics (nan/inf with a warning) rather than math's ValueError,
            # so that scalar and array code mean the same thing.
            return float(getattr(xp, p.numpy)(float(args[0])))
        return getattr(math, p.math)(*args)
    return getattr(xp, p.numpy)(*args)
