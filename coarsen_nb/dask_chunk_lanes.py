"""Loops whose state is elementwise over the lanes: a chunk of lanes runs the whole loop alone (issue 18).

:mod:`coarsen_nb.dask_chunk_sums` runs a function chunk by chunk where its result is a sum over its records.
A loop run iteration by iteration between the SOIs would stop that, unless every value it carries is one of

* *lane-wise*: an array computed from the records elementwise only (``theta = theta0.copy()``, then
  ``theta + dt * omega`` each step: pendulum_batch's ensemble), never reduced or read at an index across
  the lanes: lane b's value at every step is a function of lane b's records and of the other arguments, so a
  chunk of lanes computes exactly its lanes' values;
* *free* of the records: computed from the other arguments alone (a step counter, a scalar the loop updates
  from ``dt``), the same in every chunk.

A value that reads the records otherwise (``np.sum(theta)`` fed back into the next step, ``theta[0]``, a loop
condition on the lanes) is *crossed*: each chunk would see only its own lanes.  :class:`Lanes` follows the
plan, step by step, and says which parameters each name is lane-wise in and which it crosses; a loop that
carries a crossed value is refused in words (:meth:`Lanes.refusal`), and the arrays it ends with, lane-wise
in the records, may be summed elementwise as the records themselves are (``np.sum(0.5 * omega ** 2 ...)``).
"""

from __future__ import annotations

import sympy as sp

from coarsen_nb import ir
from coarsen_nb.phi import forms
from coarsen_nb.plan import IterStep, KernelStep, PrimStep

#: primitives whose result is an array of the lanes elementwise in their (first) argument
_LANE_PRIMS = {"copy", "zeros_like", "ones_like", "empty_like", "full_like", "array", "asarray"}


class Lanes:
    """Per plan name: the parameters it is lane-wise in (``lane``) and those it reads across lanes
    (``crossed``); a name in neither is free of the parameters' data.  ``loops`` keeps each loop's crossed
    carried values, to refuse the loop where one of them crosses the records of the call."""

    def __init__(self, params):
        self.params = tuple(params)
        self.lane: dict[str, frozenset] = {}
        self.crossed: dict[str, frozenset] = {}
        self.loops: list = []       # (line, carried name, the parameters it crosses)

    # -- the statuses of names

    def _of(self, name: str) -> tuple[frozenset, frozenset]:
        if name in self.params:
            return frozenset({name}), frozenset()
        return self.lane.get(name, frozenset()), self.crossed.get(name, frozenset())

    def _set(self, name: str, lane, crossed) -> bool:
        """Set ``name``'s status (joined with what it was); whether it changed."""
        old = (self.lane.get(name, frozenset()), self.crossed.get(name, frozenset()))
        new = (old[0] | frozenset(lane), old[1] | frozenset(crossed))
        self.lane[name], self.crossed[name] = new
        return new != old

    def crosses(self, name: str) -> frozenset:
        return self._of(name)[1]

    def lanes_of(self, name: str) -> frozenset:
        """The parameters ``name`` is lane-wise in, where it crosses none of them (else empty)."""
        lane, crossed = self._of(name)
        return frozenset() if crossed & lane else lane

    def lane_wise(self, name: str, records) -> bool:
        """Whether ``name`` is an array lane-wise in some of ``records`` and crosses none of them: a chunk of
        the records' lanes computes its own part of it."""
        lane, crossed = self._of(name)
        return bool(lane & set(records)) and not crossed & set(records)

    # -- the steps

    def note(self, step) -> bool:
        """Follow one step of the plan; whether any name's status changed."""
        if isinstance(step, PrimStep):
            return self._prim(step)
        if isinstance(step, KernelStep):
            return self._kernel(step.kernel)
        if isinstance(step, IterStep):
            return self._loop(step)
        return False        # (a branch: refused by the caller)

    def _prim(self, step: PrimStep) -> bool:
        e = step.expr
        used = ir.names_used(e)
        if isinstance(e, ir.Call) and e.func in _LANE_PRIMS and e.args and isinstance(e.args[0], ir.Name):
            lane, crossed = self._of(e.args[0].id)
            rest = [self._of(u) for u in used if u != e.args[0].id]
            return self._set(step.name, lane, crossed.union(*(a | c for a, c in rest)))
        # (any other primitive, a shape read included, reads its arguments across the lanes)
        statuses = [self._of(u) for u in used]
        return self._set(step.name, (), frozenset().union(*(a | c for a, c in statuses)))

    def _kernel(self, k) -> bool:
        whole = {sym: self._of(name) for sym, name in k.arrays.items()}
        scalar = {sym: self._of(name) for sym, name in k.scalars.items()}
        indexed = {r.symbol: self._of(r.array) for r in k.reads}
        changed = False
        for out, e in k.exprs().items():
            e = sp.sympify(e)
            syms = e.free_symbols
            reduced = any(isinstance(n, (forms.Inert,)) for n in sp.preorder_traversal(e))
            crossed = frozenset().union(*(c for s, (_, c) in {**whole, **scalar, **indexed}.items() if s in syms))
            # (an element read at an index, or a reduction, reads the lanes across: x[0], np.sum(x))
            crossed |= frozenset().union(*(a for s, (a, _) in indexed.items() if s in syms))
            crossed |= frozenset().union(*(a for s, (a, _) in scalar.items() if s in syms))
            lane = frozenset().union(*(a for s, (a, _) in whole.items() if s in syms))
            if reduced or not syms & set(whole):
                crossed, lane = crossed | lane, frozenset()
            changed |= self._set(out, lane, crossed)
        return changed

    def _loop(self, step: IterStep) -> bool:
        """The loop's carried values to their fixed point: each starts as its initial value and takes in
        what the body gives it, until nothing changes (the statuses only grow)."""
        changed = False
        for _ in range(64):
            moved = False
            for name, init, nxt in step.mus:
                for e in (init, nxt):
                    if isinstance(e, ir.Name):
                        moved |= self._set(name, *self._of(e.id))
            for s in (*step.header, *step.body):
                if not isinstance(s, (PrimStep, KernelStep)):
                    moved |= self._crossing_all(s)
                else:
                    moved |= self.note(s)
            changed |= moved
            if not moved:
                break
        cond = self.crosses(step.cond) | self._of(step.cond)[0]
        for name, _, _ in step.mus:         # (a condition on the lanes ends every lane's loop at once)
            crossed = self.crosses(name) | cond
            if crossed:
                self.loops.append((step.line, name, crossed))
                self._set(name, (), crossed)
        for out, mu in step.etas:
            changed |= self._set(out, *self._of(mu))
        return changed

    def _crossing_all(self, step) -> bool:
        """A step nested in a loop other than a primitive or an SOI: every name it writes crosses what the
        loop reads (judged no further)."""
        every = frozenset(self.params)
        names = [n for ln in step.lines() for n in [ln.strip().split(" ")[0]] if n]
        return any(self._set(n, (), every) for n in names)

    def read_by_lanes(self) -> frozenset:
        """The parameters some name is lane-wise in: those read as whole arrays, the records a call may chunk
        (a loop's counter crossing ``n_steps`` is no refusal's matter)."""
        return frozenset().union(*self.lane.values())

    def refusal(self, records, say) -> str:
        """Why a loop's carried value crosses the lanes of ``records`` (empty: none does)."""
        for line, name, crossed in self.loops:
            if crossed & set(records):
                return (f"a loop run iteration by iteration (line {line}) carries {say(name)}, which reads "
                        f"{', '.join(sorted(crossed & set(records)))} across its lanes (a reduction, an index "
                        "or a condition on them), not lane by lane")
        return ""
