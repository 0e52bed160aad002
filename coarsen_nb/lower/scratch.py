"""Scratch arrays a loop function is handed by its caller, allocated once before the caller's loop.

A ``scan`` adjoint (:mod:`coarsen_nb.lower.numba_scans`) stores each step's states in rows of one array.
It runs once per path of a Monte Carlo loop run iteration by iteration (asian_option: 10⁴ paths of 50
steps), where allocating those rows at every call cost about a quarter of the gradient.  So the function
takes the array as a parameter (it allocates its own only where the one handed over is too short), its
caller allocates it just before the call (``scratch = xp.empty((2, max(0, n_steps)))``), and the reverse
sweep around the call (:mod:`coarsen_nb.lower.iterated`) moves that allocation before its loop with
:func:`hoist_scratch` where the shape is the same at every iteration: the calls then share one array.
Sharing is safe because the function reads only what it wrote into the rows during the same call, and
returns none of them.
"""

from __future__ import annotations

from coarsen_nb.lower import lir
from coarsen_nb.lower.lir_exprs import names_in


def scratch_allocation(name: str, rows: int, count: lir.Expr) -> lir.Stmt:
    """``name = xp.empty((rows, count))``: a scratch array of ``rows`` rows of ``count`` floats."""
    shape = lir.Tuple((lir.Lit(str(rows)), count))
    return lir.Assign(lir.Name(name), lir.Call(lir.Attr(lir.Name("xp"), "empty"), (shape,)))


def hoist_scratch(body: list[lir.Stmt], scratch: set[str], index: str) -> tuple[list[lir.Stmt], list[lir.Stmt]]:
    """The allocations of the scratch arrays ``scratch`` at the top level of a loop's ``body`` (loop index
    ``index``) whose shape reads no name the loop binds, then the body without them: what runs once before
    the loop, and the loop's body.  An allocation inside a branch, or of a shape that varies over the
    iterations, stays where it is."""
    bound = {index} | {n for s in lir.statements(body) for n in s.targets()}
    assigned = [n for s in lir.statements(body) for n in s.targets()]
    before, rest = [], []
    for s in body:
        if (isinstance(s, lir.Assign) and isinstance(s.target, lir.Name) and s.target.id in scratch
                and assigned.count(s.target.id) == 1 and not set(names_in(s.value)) & bound):
            before.append(s)
        else:
            rest.append(s)
    return before, rest
