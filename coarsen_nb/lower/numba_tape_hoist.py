"""An inner loop's tape arrays allocated once, before the loops around it, instead of once per iteration.

A loop run iteration by iteration inside another (barrier_option: 50 steps of a price inside a loop over
10⁴ paths) has its tape (:mod:`coarsen_nb.lower.numba_tape`) allocated where the inner loop starts: in the
replay of every outer iteration, ``_tape_line38_float64 = xp.empty((2, max(0, n - t0)), dtype=xp.float64)``
and its rows, one ``malloc`` and ``free`` (Numba's NRT: a meminfo, a reference count) per path for an array
of a few hundred bytes.  Measured on barrier_option's gradient at 10⁴ paths: 11 % of its time.  The
capacity reads nothing the outer loop binds, so every iteration allocates the same shape: one array,
allocated before the outer loop, serves them all.

Why this is the same program: each iteration's tape is written and read within that iteration (the inner
forward sweep stores entries 0..count-1, its reverse sweep reads them back, both in the one replay); the
name is rebound at every iteration, so no iteration could read another's array anyway, and a fresh array's
other slots are uninitialised, never read.  The arrays are the tape's own (``_tape_`` names), never passed
to a call nor returned, and their rows (``_tape_L_s_x = _tape_L_float64[1]``, :func:`numba_tape_finish.packed`) are
their only aliases, hoisted with them.  An allocation inside a branch of the loop, one whose shape reads a
name the loop binds, or a name bound twice in it stays where it is.  Loops nested deeper move theirs out
level by level (inner loops first).
"""

from __future__ import annotations

from collections import Counter

from coarsen_nb.lower import lir
from coarsen_nb.lower.lir_exprs import names_in


def hoisted(body: tuple) -> tuple:
    """``body`` with the tape allocations at the top of each loop's body moved before the loop, where
    their shape reads no name the loop binds (see the module's docstring)."""
    out: list[lir.Stmt] = []
    for s in body:
        if isinstance(s, lir.For):
            before, inner = _split(hoisted(s.body), set(s.targets()))
            out += before
            out.append(lir.For(s.target, s.iter, inner))
        elif isinstance(s, lir.While):
            before, inner = _split(hoisted(s.body), set())
            out += before
            out.append(lir.While(s.test, inner))
        elif isinstance(s, lir.If):
            out.append(lir.If(s.test, hoisted(s.body), hoisted(s.orelse), s.exceptional))
        else:
            out.append(s)
    return tuple(out)


def _split(body: tuple, loop_targets: set[str]) -> tuple[list[lir.Stmt], tuple]:
    """The tape allocations of a loop's ``body`` that can run once before it, and the body without them."""
    assigned = Counter(n for s in lir.statements(body) for n in s.targets())
    bound = set(assigned) | loop_targets
    before: list[lir.Stmt] = []
    rest: list[lir.Stmt] = []
    for s in body:
        if _tape_allocation(s, {b.target.id for b in before}) and assigned[s.target.id] == 1 \
                and not (set(names_in(s.value)) & (bound - {b.target.id for b in before})):
            before.append(s)
        else:
            rest.append(s)
    return before, tuple(rest)


def _tape_allocation(s: lir.Stmt, hoisted_names: set[str]) -> bool:
    """Whether ``s`` binds a tape array: ``_tape_… = xp.empty(…)``, or a row of one already hoisted
    (``_tape_L_s_x = _tape_L_float64[j]``)."""
    if not (isinstance(s, lir.Assign) and isinstance(s.target, lir.Name) and s.target.id.startswith("_tape_")):
        return False
    value = s.value
    if isinstance(value, lir.Call):
        return str(value.func) == "xp.empty"
    return (isinstance(value, lir.Index) and isinstance(value.value, lir.Name) and value.value.id in hoisted_names
            and all(isinstance(i, lir.Lit) for i in value.items))
