"""Which adjoints of a reverse sweep something reached: an SOI's adjoint skipped where nothing reached its outputs'.

A number the user computes before a loop that never runs (``e = math.exp(-w)``, then ``acc += x[i] * e``
for no i) gets no contribution to its adjoint: the user's loop never reads it, so ``∂/∂w`` is 0 (what
``jax.grad`` gives: its cotangent is a symbolic zero).  The reverse sweep adds the loop's adjoint, a sum over
no points, 0, into ``b_e``, and the adjoint of the line that computes ``e`` multiplies it by ``exp(-w)``: NaN
where ``w = -inf``.  No float says "nothing reached me", so the sweep keeps it beside the adjoints, at
compile time, as conditions on the loops' bounds (:class:`Reached`):

* a contribution that is a sum over a loop (``RSum``: the chain rule's per-iteration terms) reaches its
  adjoint only where the loop has points, ``start < stop`` (``>`` for a negative step).  The bounds must be
  the contributing SOI's inputs (SSA values: they hold the same number wherever the test reads them) or
  literals; a count that is a positive literal is no condition;
* any other contribution (a seed, an opaque step's, a branch's, an iterated loop's, a scatter) always does.

Where every output of an SOI whose adjoint it reads was reached only under such conditions, its adjoint runs
under ``if c1 or c2 ...:`` (one test of counts per SOI, none where no condition is left), and what it adds
into its own inputs' adjoints is reached only under that test in turn.  Only a sum whose *own* loop is empty
counts: ``b_r * s`` of a sum ``s`` the user computed before reading ``e`` after the loop is reached (the
user's line reads ``e``: 0 × inf is NaN there too, as in JAX).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import sympy as sp

from coarsen_nb.lower import lir
from coarsen_nb.phi import forms

#: The conditions (any one true) under which something reached an adjoint; None: reached in any case.
Conditions = tuple[lir.Expr, ...] | None


class Reached:
    """For each adjoint (by SSA name) of a reverse sweep's top level, the conditions under which a contribution
    reached it so far (the sweep runs the steps backwards: every contribution to an output's adjoint is in
    before that output's SOI is reversed).  A name with no entry has had no contribution."""

    def __init__(self) -> None:
        self._conditions: dict[str, Conditions] = {}

    def always(self, names: Iterable[str]) -> None:
        """Contributions to ``names`` that reach them whatever the counts (a seed, an opaque step's)."""
        for name in names:
            self._conditions[name] = None

    def add(self, name: str, conditions: Conditions) -> None:
        """A contribution to ``name``'s adjoint that reaches it where one of ``conditions`` holds."""
        if conditions is None or self._conditions.get(name, ()) is None:
            self._conditions[name] = None
            return
        known = self._conditions.get(name, ())
        self._conditions[name] = known + tuple(c for c in conditions if str(c) not in {str(k) for k in known})

    def guard(self, names: Iterable[str]) -> lir.Expr | None:
        """The test under which an SOI whose outputs' adjoints are ``names`` has anything to reverse, or None
        where one of them may have been reached in any case (or was never: its adjoint is left as it is)."""
        conditions: list[lir.Expr] = []
        for name in names:
            held = self._conditions.get(name)
            if held is None or not held:
                return None
            conditions += [c for c in held if str(c) not in {str(k) for k in conditions}]
        return conditions[0] if len(conditions) == 1 else lir.BoolOp("or", tuple(conditions))


def reached_where(e, temps: dict, bound: Callable[[sp.Expr], lir.Expr | None]) -> Conditions:
    """The conditions under which the adjoint contribution ``e`` (a VJP's expression; ``temps`` its named
    parts) is one at all: ``start < stop`` of a sum's own loop (a numeric multiple of one, or terms that
    each are one), else None.  ``bound`` prints a loop bound where the guard is (None: it cannot)."""
    while isinstance(e, sp.Symbol) and e in temps:
        e = temps[e]
    if isinstance(e, sp.Mul) and len(e.args) == 2 and e.args[0].is_Number:
        return reached_where(e.args[1], temps, bound)
    if isinstance(e, sp.Add):
        out: tuple[lir.Expr, ...] = ()
        for term in e.args:
            more = reached_where(term, temps, bound)
            if more is None:
                return None
            out += more
        return out
    if not isinstance(e, forms.RSum):
        return None
    start, stop, step = e.args[2:5]
    if not (step.is_Integer and step != 0):
        return None
    if start.is_Integer and stop.is_Integer:
        return None         # (a literal count: a positive one is no condition, an empty loop left alone)
    lo, hi = bound(start), bound(stop)
    if lo is None or hi is None:
        return None
    return (lir.Compare("<", lo, hi) if step > 0 else lir.Compare(">", lo, hi)),
