"""γ as SymPy, and the test for truth values it needs: the bottom of lifting, shared by the lifter
(:mod:`coarsen_nb.phi.symbols`), the rule table (``min``/``max`` lift to a γ chain) and the printers."""

from __future__ import annotations

import sympy as sp

from coarsen_nb.phi import forms


def is_boolean(x) -> bool:
    """Whether a lifted value is a truth value (a predicate, a flag, a bool-typed SSA value)."""
    if isinstance(x, sp.logic.boolalg.BooleanAtom):
        return True
    if isinstance(x, sp.Symbol):
        return x.is_real is None and x.is_integer is None
    if isinstance(x, sp.Piecewise):
        return all(is_boolean(e) for e, _ in x.args)
    return isinstance(x, sp.logic.boolalg.Boolean) and not isinstance(x, sp.Expr)


def gamma(p, a, b):
    """γ(p, a, b) as SymPy: F1 (equal operands collapse), truth values as ITE, else a Gamma.

    Truth values never go into a Piecewise: SymPy's rewrites of a Piecewise of
    booleans (``~Piecewise`` → ITE) assume conditions it has canonicalized, and
    γ keeps its predicate as written.
    """
    if a == b:
        return a
    if p == sp.true:
        return a
    if p == sp.false:
        return b
    if is_boolean(a) or is_boolean(b):
        return sp.ITE(p, a, b)   # lowered like a γ: only the selected operand is evaluated
    return forms.Gamma((a, p), (b, True))

