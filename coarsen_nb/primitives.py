"""The primitive calls of the subset: how source names them and what a call of one evaluates to.

Each primitive is one registration of the rule table (:mod:`coarsen_nb.rules`):
its names, evaluation, SymPy form, domain facts, spelling per backend and cost
class.  This module is the frontend's and the interpreters' view of it: which
``np.foo`` / ``math.foo`` / builtin names a primitive, and :func:`evaluate`.  A
missing registration is a :class:`~coarsen_nb.errors.CoarsenError` naming the call.

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

import functools
import math
import types

import numpy as np

from coarsen_nb.rules.record import Primitive
from coarsen_nb.rules.table import ALIASES, PRIMITIVES, rule

__all__ = ["ALIASES", "BUILTINS", "CONSTANTS", "MODULES", "OPERATOR_UFUNCS", "PRIMITIVES", "Primitive",
           "evaluate", "lookup", "of_object"]

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


#: Functions of NumPy's submodules (``np.linalg.solve``): a registration whose ``numpy`` attribute is dotted
#: (``"linalg.solve"``), by that dotted name.
SUBMODULE_FUNCTIONS: dict[str, Primitive] = {p.numpy: p for p in PRIMITIVES.values()
                                              if p.numpy is not None and "." in p.numpy}


def lookup(module: str | None, attr: str) -> Primitive | None:
    """The primitive that ``module.attr`` (or the builtin ``attr``) names, if any.

    ``module`` may be a NumPy submodule as written after ``np.``: ``lookup("np.linalg", "solve")``."""
    if module is not None and module.split(".", 1)[0] in ("np", "numpy") and "." in module:
        return SUBMODULE_FUNCTIONS.get(f"{module.split('.', 1)[1]}.{attr}")
    if module is None and attr not in BUILTINS:
        return None
    name = ALIASES.get(attr, attr)
    if name in ("array_literal", "array_literal_2d"):
        return None
    if module in ("np", "numpy") and attr in ("max", "amax"):
        name = "amax"
    if module in ("np", "numpy") and attr in ("min", "amin"):
        name = "amin"
    if module == "math" and (attr in ("max", "min", "sum", "len", "round", "mod", "remainder")
                             or not hasattr(math, attr)):
        return None
    if module in ("np", "numpy") and not hasattr(np, attr):
        return None         # (np.erf, np.expit: not NumPy's; the plain function would fail)
    return PRIMITIVES.get(name)


def of_object(obj) -> Primitive | None:
    """The primitive a Python object is, whatever name the user's code gives it: ``np.sin``, ``math.erf``
    (``from math import erf``), ``np.linalg.solve`` (``from numpy.linalg import solve``, ``la.solve``) or
    ``scipy.special.expit`` (``from scipy.special import expit``, ``sc.expit``)."""
    name = getattr(obj, "__name__", None)
    if not isinstance(name, str):
        return None
    if getattr(math, name, None) is obj:
        return lookup("math", name)
    if getattr(np, name, None) is obj and name not in OPERATOR_UFUNCS:
        return lookup("np", name)
    if isinstance(obj, types.FunctionType) and str(getattr(obj, "__module__", "")).split(".")[0] not in _LIBRARIES:
        # a Python function of the user's own (hookean_spring's ``_spring``, a helper to inline): none of
        # NumPy's or SciPy's, whose identity test below imports SciPy (0.17 s of a cold build)
        return None
    return next((p for known, p in _objects() if known is obj), None)


#: the packages whose Python functions may be primitives (``np.linalg.norm``, ``scipy.special.logsumexp``)
_LIBRARIES = ("numpy", "scipy")


@functools.cache
def _objects() -> tuple[tuple[object, Primitive], ...]:
    """The functions of NumPy's submodules and of SciPy that are primitives, with their registrations
    (SciPy's only where it is installed)."""
    out = [(_attribute(np, p.numpy), p) for p in SUBMODULE_FUNCTIONS.values()]
    scipy_names = [p for p in PRIMITIVES.values() if p.scipy is not None]
    if scipy_names:
        try:
            import scipy.special  # noqa: F401  (the submodule, so that attribute access finds it)
        except ImportError:
            return tuple(out)
        import scipy
        out += [(_attribute(scipy, p.scipy), p) for p in scipy_names]
    return tuple(out)


def evaluate(name: str, args: list, xp=np, static: tuple = ()):
    """Run primitive ``name`` on concrete values: the executable meaning of a call.

    ``static``: the call's compile-time parameters (``ir.Call.static``), passed by keyword."""
    p = rule(name)
    if p.evaluate is not None:
        return p.evaluate(args, xp, **dict(static))
    if static:
        return _attribute(xp, p.numpy)(*args, **dict(static))
    if p.kind == "elementwise" and all(isinstance(a, (int, float)) for a in args) and p.math:
        if p.nan_outside:
            # NumPy semantics (nan/inf with a warning) rather than math's ValueError,
            # so that scalar and array code mean the same thing.
            return float(getattr(xp, p.numpy)(float(args[0])))
        return getattr(math, p.math)(*args)
    return _attribute(xp, p.numpy)(*args)


def _attribute(xp, dotted: str):
    """``xp.linalg.solve`` for ``"linalg.solve"``."""
    value = xp
    for part in dotted.split("."):
        value = getattr(value, part)
    return value
