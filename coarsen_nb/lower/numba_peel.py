"""Peeling a fused loop's first iteration where its body branches on being the first.

A loop that walks an array carrying the previous element (``for yi in y: ...; y_prev = yi``) lifts to a body
that reads ``γ(y_prev₀ if k == 0, y[k - 1])``: the first iteration reads the value before the loop, every other
the element before.  Printed as one loop, every iteration tests ``k == 0`` and computes each arm's values
inside its own ``if``, so two arms of the same test that read the same ``y[k - 1]`` (the previous speed,
its derivative) compute it twice: the printer's memo does not reach across two ``if`` blocks.

Loop peeling (Allen and Kennedy, *Optimizing Compilers for Modern Architectures*, 2001, §8.5): the first
iteration runs as it is, in a loop of at most one trip, ``for k in range(a, min(a + 1, b))``; the others run in
``for k in range(a + 1, b)``, where ``k == a`` is false and ``k != a`` true, so each γ on it is its other arm
(:func:`settled`): one straight-line body, whose common values the memo computes once.  The iterations run in
the same order; SymPy rebuilds a settled expression (``√2·a + √2·b`` may print as ``√2·(a + b)``), so a value
equals the unpeeled loop's to rounding (brachistochrone's gradient: 4e-16 of its largest element, and as far
from an extended-precision reference as before).

Taken only for a loop of step 1 over an index (a reduction, a loop's sums and scatters, scatters), never an
elementwise one, and only where a predicate ``index == lower bound`` appears in what its body reads.
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb.lower import lir


def first_iteration(loop, loop_range: tuple) -> tuple | None:
    """``(settle, first, rest)`` for :class:`~coarsen_nb.lower.numba_loops.LoopFunction` ``loop`` whose body
    tests ``index == a`` (``a`` the lower bound): ``settle`` rewrites an expression for the iterations after
    the first, ``first`` and ``rest`` the two loops' ``range`` arguments (printed).  None where it does not."""
    dom = loop.dom
    if loop.kind not in ("reduce", "scatter", "loop") or len(loop_range) != 2 or dom.bounds is None:
        return None
    if loop.kind == "scatter" and any(t.mode != "scatter" for t in loop.targets):
        return None
    lo, step = dom.bounds[0], dom.bounds[2]
    if sp.sympify(step) != 1:
        return None
    exprs = [t.expr for t in loop.targets] + list(loop.body.temps.values())
    firsts = {r for e in exprs if isinstance(e, sp.Basic) for r in e.atoms(sp.Eq, sp.Ne)
              if set(r.args) == {dom.index, sp.sympify(lo)} or (r.args[0] == dom.index and r.args[1] == lo)}
    if not any(isinstance(r, sp.Eq) for r in firsts):
        return None
    decided = {r: sp.false if isinstance(r, sp.Eq) else sp.true for r in firsts}

    def settle(e):
        return settled(e, decided)

    a, b = loop_range
    after = _plus_one(a)
    return settle, (a, lir.Call(lir.Name("min"), (after, b))), (after, b)


def settled(e, decided: dict):
    """``e`` with the predicates of ``decided`` replaced by their truth value, and every branch (a Piecewise or
    γ) whose clauses that decides dropped or taken: a false clause goes, a leading true one is the value."""
    if not isinstance(e, sp.Basic):
        return e
    e = e.xreplace(decided)
    return e.replace(_is_decided, _fold) if e.has(sp.Piecewise) else e


def _is_decided(x) -> bool:
    return isinstance(x, sp.Piecewise) and (x.args[0].cond == sp.true or any(c == sp.false for _, c in x.args))


def _fold(x):
    kept = [(e, c) for e, c in x.args if c != sp.false]
    if kept[0][1] == sp.true:
        return kept[0][0]
    return x.func(*kept)


def _plus_one(a: lir.Expr) -> lir.Expr:
    """``a + 1``, folded where ``a`` is an integer literal."""
    if isinstance(a, lir.Lit) and a.code.lstrip("-").isdigit():
        return lir.Lit(str(int(a.code) + 1))
    return lir.BinOp("+", a if isinstance(a, (lir.Name, lir.Lit)) else lir.Paren(a), lir.Lit("1"))
