"""A chunk sum whose terms read their own index (``γ ** i``, ``t = i * dt``): each chunk's module told where
its records start (issue 18).

:mod:`coarsen_nb.dask_chunk_sums` takes ``Σ_k φ(k, θ, X[k])`` where the summand reads ``k`` as a number and the
records at ``[k + j]`` only.  A chunk's module numbers its records from 0, so its ``k`` is the chunk's own:
the term of the chunk's first record would read 0, not its global index.  Here the plan of the in-memory
module is changed so that every such sum reads ``k + start`` where it reads ``k`` as a number (never in its
reads of the records, which are the chunk's rows: ``x[k]`` stays the block's row ``k``), ``start`` a new last
parameter (an integer: the global index of the block's first row, the chunk's first row, or its halo's), and
printed by the same module writer for the same backend.  The sums' bounds are left alone: the block's rows
are still ``range(a, m - b)``.

Nothing else changes: the values, the gradients (``start`` is an integer, never differentiated) and the
weights are the module's on the block, as for any chunk sum; the module the function runs in memory is not
this one (a call on NumPy arrays never sees ``start``).
"""

from __future__ import annotations

import dataclasses

import sympy as sp

from coarsen_nb.phi import forms
from coarsen_nb.phi.arg_types import T
from coarsen_nb.plan import Kernel, KernelStep, Plan

#: the word the new parameter is spelled with in the chunks' module (a number appended where a name has it)
START = "chunk_start"


def start_name(plan: Plan) -> str:
    """The new parameter's name: :data:`START`, unless the plan names something so."""
    taken = set(plan.params) | set(plan.types) | {n.split(".")[0] for n in plan.types}
    name, k = START, 1
    while name in taken:
        name, k = f"{START}{k}", k + 1
    return name


def shifted_plan(plan: Plan, indices: tuple) -> Plan:
    """``plan`` with one more parameter (:func:`start_name`), an integer added to each loop index of
    ``indices`` (SymPy symbols: the sums over the records whose terms read their index) wherever the sums'
    terms read it as a number."""
    name = start_name(plan)
    steps = []
    for step in plan.steps:
        if isinstance(step, KernelStep) and any(_reads(e, k) for _, e in step.kernel.body for k in indices):
            step = KernelStep(_shifted_kernel(step.kernel, indices, name))
        steps.append(step)
    types = {**plan.types, name: T("int", 0)}
    return dataclasses.replace(plan, params=(*plan.params, name), steps=tuple(steps), types=types)


def _shifted_kernel(kernel: Kernel, indices: tuple, name: str) -> Kernel:
    start = sp.Symbol(name, integer=True, nonnegative=True)
    body = []
    for sym, e in kernel.body:
        for k in indices:
            e = _shift(e, k, k + start)
        body.append((sym, e))
    return dataclasses.replace(kernel, body=body, scalars={**kernel.scalars, start: name},
                               types={**kernel.types, name: T("int", 0)})


def _reads(e: sp.Basic, k: sp.Symbol) -> bool:
    return e == k or any(_reads(a, k) for a in e.args)


def _shift(e: sp.Basic, k: sp.Symbol, to: sp.Expr) -> sp.Basic:
    """``e`` with ``k`` read as ``to``, except as the index a sum over ``k`` binds (its ``k in range(...)``:
    the block's rows, whose bounds never read ``k``)."""
    if e == k:
        return to
    if not e.args:
        return e
    if isinstance(e, forms.Reduction) and e.args[1] == k:
        return e.func(_shift(e.args[0], k, to), *e.args[1:])
    args = [_shift(a, k, to) for a in e.args]
    return e.func(*args) if any(a is not b for a, b in zip(args, e.args, strict=True)) else e
