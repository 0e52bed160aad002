"""How many times each loop of the VJP function runs: the cost model's trip counts.

A mixin of :class:`~coarsen_nb.lower.cost._Model`, apart because it reads the plan, not the printed
statements: every ``while True:`` of the forward sweep is an :class:`~coarsen_nb.plan.IterStep`
(found by the tape the sweep creates just before it), and its trip count is the given one (``trips``,
by the step's label), or the distance from its counter's initial value to its bound when the
condition is ``counter < bound`` on ints the model knows at entry; otherwise (a ``break``, a data
condition, an int parameter whose value is not given) it is unknown: 1 is used and the reason is kept
(``Cost.unknown_trips``).  The reverse sweep's ``for`` over that tape runs as many times as the loop
recorded.
"""

from __future__ import annotations

import ast

import sympy as sp

from coarsen_nb import ir
from coarsen_nb.lower.values import SCALAR
from coarsen_nb.plan import CondStep, IterStep, KernelStep


class TripCounts:
    """The trip counts of the :class:`~coarsen_nb.lower.cost._Model`'s loops: it provides ``env`` (the
    abstract values by generated name), ``w`` (the module writer), ``trips_given``, ``unknown`` (loop
    label -> why its count is not known) and ``trip_of`` (tape name -> the count used)."""

    def trip_count(self, step: IterStep | None, tape: str) -> float:
        if step is None:
            return 1.0
        label = step.label
        if label in self.trips_given:
            n = float(self.trips_given[label])
        else:
            n, why = self._bounds(step)
            if n is None:
                self.unknown[label] = why
                n = 1.0
        self.trip_of[tape] = n
        return n

    def reverse_trip_count(self, s: ast.For) -> float:
        """The passes of the reverse sweep's ``for`` over a tape: those of the loop that recorded it."""
        return self.trip_of.get(_tape_label(s), 1.0)

    def _bounds(self, step: IterStep):
        """(trip count, None) from the loop counter and its bound, or (None, why)."""
        cond_expr = None
        for s in step.header:
            if isinstance(s, KernelStep) and step.cond in s.kernel.output_names:
                cond_expr, kern = s.kernel.exprs()[step.cond], s.kernel
        if cond_expr is None:
            return None, "its condition is not a kernel"
        if any("$brk" in n or "$done" in n for n in kern.scalars.values()):
            return None, "break/return: the trip count is data-dependent"
        rels = [r for r in cond_expr.atoms(sp.StrictLessThan)]
        if len(rels) != 1:
            return None, f"while condition `{cond_expr}`"
        lhs, rhs = rels[0].lhs, rels[0].rhs
        names = {**kern.scalars}
        counter = names.get(lhs)
        mu = next((m for m in step.mus if m[0] == counter), None)
        if mu is None:
            return None, f"while condition `{cond_expr}`"
        start = self._int_of_ir(mu[1])
        bound = self._int_of_sym(rhs, names)
        if start is None or bound is None:
            return None, f"bound `{rhs}` not known from the shapes"
        return float(max(0, bound - start)), None

    def _int_of_ir(self, e):
        if isinstance(e, ir.Const) and isinstance(e.value, int):
            return e.value
        if isinstance(e, ir.Name):
            v = self.env.get(self.w.py(e.id), SCALAR)
            return v[1] if v[0] == "int" else None
        return None

    def _int_of_sym(self, e, names):
        sub = {}
        for s in e.free_symbols:
            name = names.get(s)
            v = self.env.get(self.w.py(name), SCALAR) if name else SCALAR
            if v[0] != "int" or v[1] is None:
                return None
            sub[s] = v[1]
        r = sp.sympify(e).xreplace(sub)
        r = sp.sympify(r)
        return int(r) if r.is_Integer else None


def _tape_label(s: ast.For) -> str:
    for n in ast.walk(s.iter):
        if isinstance(n, ast.Name) and n.id.startswith("_tape_"):
            return n.id
    return ""


def iter_steps(steps) -> list[IterStep]:
    """Iterated loops in the order their ``while True:`` appears in the forward sweep."""
    out: list[IterStep] = []
    for s in steps:
        if isinstance(s, IterStep):
            out.append(s)
            out += iter_steps(s.header) + iter_steps(s.body)
        elif isinstance(s, CondStep):
            out += iter_steps(s.then) + iter_steps(s.orelse)
    return out
