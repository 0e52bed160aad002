"""The rule table: every registration by name, and the lookups the stages read.

``PRIMITIVES`` maps a canonical name to its :class:`~coarsen_nb.rules.record.Primitive`;
:func:`rule` is the lookup that names a missing primitive in a
:class:`~coarsen_nb.errors.CoarsenError`; :func:`printed` finds the registration a
SymPy node prints as; :func:`callees` gives the cost model the printed names of a
cost class.
"""

from __future__ import annotations

import functools

from coarsen_nb.errors import CoarsenError
from coarsen_nb.rules.arrays import ARRAYS
from coarsen_nb.rules.contractions import CONTRACTIONS
from coarsen_nb.rules.convolutions import CONVOLUTIONS
from coarsen_nb.rules.elementwise import ELEMENTWISE
from coarsen_nb.rules.linalg import LINALG
from coarsen_nb.rules.record import Primitive
from coarsen_nb.rules.reductions import REDUCTIONS
from coarsen_nb.rules.special import SPECIAL
from coarsen_nb.rules.spreads import SPREADS
from coarsen_nb.rules.structural import STRUCTURAL

PRIMITIVES: dict[str, Primitive] = {p.name: p for p in (*ELEMENTWISE, *REDUCTIONS, *SPREADS, *STRUCTURAL, *LINALG,
                                                       *ARRAYS, *CONVOLUTIONS, *SPECIAL,
                                                       *CONTRACTIONS)}

#: Names that ``math.X`` / ``np.X`` spell differently from our canonical name.
ALIASES: dict[str, str] = {a: p.name for p in PRIMITIVES.values() for a in p.aliases}

_BY_FORM: dict[type, Primitive] = {cls: p for p in PRIMITIVES.values() for cls in p.forms}


def spelled(p: Primitive) -> str:
    """How a user writes ``p``: ``np.arcsin``, ``math.erf`` (no NumPy spelling), or the builtin's name."""
    if p.name in ("abs", "min", "max", "len", "float", "int", "round"):
        return p.name
    if p.numpy is None and p.math is None and p.scipy is not None:
        return f"scipy.{p.scipy}"
    if p.numpy is None:
        return f"math.{p.math or p.name}"
    return f"np.{p.numpy}"


def rule(name: str) -> Primitive:
    """The registration of primitive ``name``; a CoarsenError naming it when there is none."""
    p = PRIMITIVES.get(name)
    if p is None:
        raise CoarsenError(f"call of {name}", hint="use a supported math/np function, or write it with loops",
                           message=f"no rule for the function {name!r}")
    return p


def missing(p: Primitive, what: str) -> CoarsenError:
    """The error for a registration without ``what`` (a backend's spelling, a SymPy form)."""
    return CoarsenError(f"{spelled(p)} ({what})", hint="write it with other math/np functions",
                        message=f"{spelled(p)} has no rule for {what}")


def no_derivative(expr) -> CoarsenError:
    """The error for SymPy's unevaluated ``Derivative`` of ``expr``: a form without a derivative rule."""
    p = printed(type(expr))
    name = spelled(p) if p is not None else type(expr).__name__
    return CoarsenError(f"the derivative of {name}", hint="write it with other math/np functions, or leave its "
                        "arguments out of wrt", message=f"{name} has no derivative rule")


@functools.cache
def printed(cls: type) -> Primitive | None:
    """The registration whose SymPy form ``cls`` is (or subclasses), if any."""
    return next((_BY_FORM[c] for c in cls.__mro__ if c in _BY_FORM), None)


@functools.cache
def callees(cost: str) -> frozenset[str]:
    """The names that the array spellings of cost class ``cost`` call (``"math"``: ``exp``, ``asin``, ...)."""
    return frozenset(p.callee for p in PRIMITIVES.values() if p.cost == cost and p.callee is not None)
