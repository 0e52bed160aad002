"""IR expressions → SymPy, the arithmetic part of lifting.

One function, :func:`to_sympy`, maps a pure IR expression to a SymPy
expression given a way to look names up.  γ and ``IfExp`` become
``Piecewise`` (C2 then lets the derivative distribute into it), calls map
through the rule table (:mod:`coarsen_nb.rules`), numerically fragile patterns become the
guarded forms of :mod:`coarsen_nb.phi.forms`.  What is not arithmetic (array
reductions, ``dot``, constructors, ``len``, writes) raises :class:`NotSymbolic`:
the lifter makes those opaque steps instead.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb import ir
from coarsen_nb.phi import domain, gammas, rounding
from coarsen_nb.phi.gammas import gamma
from coarsen_nb.rules.table import PRIMITIVES


class NotSymbolic(Exception):
    """The expression needs an opaque step (or an iterated loop), not a SymPy form."""


def symbol(name: str, kind: str) -> sp.Symbol:
    """The SymPy symbol for an SSA value of scalar ``kind``."""
    if kind == "int":
        return sp.Symbol(name, integer=True)
    if kind == "bool":
        return sp.Symbol(name)
    return sp.Symbol(name, real=True)


_CMP = {"<": sp.Lt, "<=": sp.Le, ">": sp.Gt, ">=": sp.Ge, "==": sp.Eq, "!=": sp.Ne}


def to_sympy(e: ir.Expr, lookup, index=None) -> sp.Basic:
    """Lift ``e``; ``lookup(name) -> sympy`` resolves names (and may raise NotSymbolic).

    ``index(array_name, index_exprs) -> sympy`` lifts an element read ``x[i]``
    (the kernel makes it a :class:`~coarsen_nb.plan.Read`).
    """
    def rec(x):
        return to_sympy(x, lookup, index)

    if isinstance(e, ir.Index):
        if index is None or not isinstance(e.value, ir.Name):
            raise NotSymbolic("indexing")
        return index(e.value.id, tuple(rec(i) for i in e.index))
    if isinstance(e, ir.Name):
        return lookup(e.id)
    if isinstance(e, ir.Const):
        v = e.value
        if isinstance(v, bool):
            return sp.true if v else sp.false
        return sp.Integer(v) if isinstance(v, int) else sp.Float(v)
    if isinstance(e, ir.Undef):
        raise NotSymbolic("undefined value")
    if isinstance(e, ir.BinOp):
        if e.op == "@":
            raise NotSymbolic("matmul")
        a, b = rec(e.left), rec(e.right)
        if gammas.is_boolean(a) and gammas.is_boolean(b) and e.op in ("+", "-"):
            # True + True is 2 for Python's bools but True (or) for NumPy's, and NumPy refuses -: which one
            # a value is, is not known here
            raise NotSymbolic("adding truth values")
        a, b = as_number(a), as_number(b)
        if e.op == "+":
            return a + b
        if e.op == "-":
            return a - b
        if e.op == "*":
            return a * b
        if e.op == "/":
            return a / b
        if e.op == "**":
            return domain.kept_real("power", [a, b], a ** b)     # 10.0 ** 400.0 raises, as in Python
        if e.op == "//":
            return rounding.floor_div(a, b)
        if e.op == "%":
            return rounding.mod(a, b)
    if isinstance(e, ir.UnaryOp):
        a = rec(e.operand)
        if e.op == "-":
            return -as_number(a)
        if e.op == "+":
            return as_number(a)
        return sp.Not(a)
    if isinstance(e, ir.Compare):
        return compare(e.op, rec(e.left), rec(e.right))
    if isinstance(e, ir.BoolOp):
        vals = [rec(v) for v in e.values]
        return gammas.AndThen(*vals) if e.op == "and" else gammas.OrElse(*vals)
    if isinstance(e, ir.IfExp):
        return gamma(rec(e.test), rec(e.body), rec(e.orelse))
    if isinstance(e, ir.Gamma):
        p = rec(e.pred)
        a = None if isinstance(e.if_true, ir.Undef) else rec(e.if_true)
        b = None if isinstance(e.if_false, ir.Undef) else rec(e.if_false)
        if a is None and b is None:
            raise NotSymbolic("undefined value")
        # F1 with undef: φ(a, undef) = a (the undefined path never reads it).
        if a is None:
            return b
        if b is None:
            return a
        return gamma(p, a, b)
    if isinstance(e, ir.Call):
        return _call(e, rec)
    raise NotSymbolic(type(e).__name__)


def as_number(v):
    """A truth value used as a number, as Python and NumPy use it (``a * (x > 0)``, ``-(x > 0)``): 1 where
    it holds, else 0.  SymPy has no arithmetic on relations, so the truth value becomes the γ that picks
    1 or 0; its derivative is 0, away from where the truth value changes."""
    if gammas.is_boolean(v):
        return gamma(v, sp.Integer(1), sp.Integer(0))
    return v


def compare(op: str, a, b):
    """``a op b`` as SymPy, kept as written: rewriting it (say to ``a - b op 0``) lets SymPy
    cancel terms, and ``b > b - a`` must stay False when ``b - a`` rounds to ``b``."""
    return _CMP[op](a, b, evaluate=False) if not (a.is_Number and b.is_Number) else _CMP[op](a, b)


def _call(e: ir.Call, rec):
    args = [rec(a) for a in e.args]
    return domain.kept_real(e.func, args, _lifted_call(e.func, args))


def _lifted_call(f: str, args: list):
    """The registration's SymPy form of ``f(*args)`` (:mod:`coarsen_nb.rules`); NotSymbolic where it has none."""
    p = PRIMITIVES.get(f)
    if p is not None and p.one_arg is not None and len(args) == 1:
        p = PRIMITIVES[p.one_arg]
    if p is None or p.lift is None:
        raise NotSymbolic(f)
    return p.lift(*args)
