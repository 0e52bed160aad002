"""A chunk sum whose terms read their own index (``γ ** i``, ``t = i * dt``) or the number of records
(``x[i] * t ** (n - 1 - i)``, ``i / n``): each chunk's module told where its records start and how many
there are in all (issue 18).

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

**The number of records.**  A chunk's module reads its block's length where the user's code reads ``len(x)``
(``x.shape[0]``, zip's ``min``): in a term (horner's ``t ** (n - 1 - i)``), in a factor (``/ len(x)``) or in
a term beside the sum (``a ** n * v0``), all of which mean the whole array's ``n``.  Where the terms or the
term beside the sum read it, the chunks' module has a second new parameter, ``records`` (the number of
records of the whole call), read in place of those lengths everywhere except in the bounds of the sums over
the records (``range(a, m - b)`` is the block's own rows: the terms the chunk owns).  Such a module
computes ``A(θ, n) + F(n) · Σ_{k in its rows} φ(k, n)`` on its block, the whole function's own terms and
factor: its chunk's weight is 1 (:attr:`~coarsen_nb.dask_chunk_sums.ChunkSum.counted`), and the term beside
the sum is the module on no records told ``n``, as for any chunk sum with one.
"""

from __future__ import annotations

import dataclasses

import sympy as sp

from coarsen_nb.phi import forms
from coarsen_nb.phi.arg_types import T
from coarsen_nb.plan import Kernel, KernelStep, Plan

#: the words the new parameters are spelled with in the chunks' module (a number appended where a name has it)
START = "chunk_start"
RECORDS = "chunk_records"


def start_name(plan: Plan, word: str = START) -> str:
    """A new parameter's name: ``word`` (:data:`START`, :data:`RECORDS`), unless the plan names something so."""
    taken = set(plan.params) | set(plan.types) | {n.split(".")[0] for n in plan.types}
    name, k = word, 1
    while name in taken:
        name, k = f"{word}{k}", k + 1
    return name


def shifted_plan(plan: Plan, indices: tuple, counted: tuple = (), sums: tuple = ()) -> Plan:
    """``plan`` with one more parameter (:func:`start_name`), an integer added to each loop index of
    ``indices`` (SymPy symbols: the sums over the records whose terms read their index) wherever the sums'
    terms read it as a number; and where ``counted`` names the plan's lengths of the records (the module is
    told their number), a second one read in place of those lengths, except in the bounds of the sums over
    the indices ``sums`` (the block's own rows: written out over the lengths, :class:`_Bounds`)."""
    name = start_name(plan)
    told = start_name(plan, RECORDS) if counted else None
    bounds = _Bounds()
    steps = []
    for step in plan.steps:
        if isinstance(step, KernelStep):
            k = step.kernel
            if any(_reads(e, i) for _, e in k.body for i in indices) or told and (
                    set(k.scalars.values()) & set(counted) or _sums(k, set(sums))):
                step = KernelStep(_shifted_kernel(k, indices, name, counted, told, sums, bounds))
            bounds.note(k)
        steps.append(step)
    added = (name, told) if told else (name,)
    types = {**plan.types, **{p: T("int", 0) for p in added}}
    return dataclasses.replace(plan, params=(*plan.params, *added), steps=tuple(steps), types=types)


class _Bounds:
    """The kernels' outputs so far, each as an expression over the plan's own names (the lengths its shape
    reads give, the parameters): a sum's bound read from an earlier kernel (zip's ``min(len(x), len(y))``,
    computed in its own SOI) is written out so, and reads the block's lengths, whatever the told module
    makes of that earlier kernel's output (the told ``n``: its other readers mean the whole call's)."""

    def __init__(self):
        self.values: dict = {}      # kernel output's plan name -> its value over the plan's names
        self.names: dict = {}       # a kernel input's symbol -> its plan name

    def note(self, kernel: Kernel) -> None:
        self.names.update(kernel.scalars)
        inlined = {sym: self.values[n] for sym, n in kernel.scalars.items() if n in self.values}
        self.values.update({out: sp.sympify(e).xreplace(inlined) for out, e in kernel.exprs().items()})

    def written_out(self, bound, kernel: Kernel, local: dict) -> sp.Expr:
        """``bound`` (an expression of ``kernel``'s body) over the plan's names."""
        inlined = {sym: self.values[n] for sym, n in kernel.scalars.items() if n in self.values}
        return sp.sympify(bound).xreplace(local).xreplace(inlined)


def _sums(kernel: Kernel, sums: set) -> bool:
    """Whether ``kernel`` computes one of the sums over the records (their indices ``sums``)."""
    return any(isinstance(n, forms.Reduction) and n.args[1] in sums
               for _, e in kernel.body for n in sp.preorder_traversal(e))


def _shifted_kernel(kernel: Kernel, indices: tuple, name: str, counted: tuple, told: str | None,
                    sums: tuple, bounds: _Bounds) -> Kernel:
    start = sp.Symbol(name, integer=True, nonnegative=True)
    lengths = {s for s, n in kernel.scalars.items() if n in counted}
    records = sp.Symbol(told, integer=True, positive=True) if told else None
    body, local, ends = [], {}, set()
    for sym, e in kernel.body:
        local[sym] = e.xreplace(local)      # (its value over the kernel's inputs: a bound read as the block's)
        for k in indices:
            e = _shift(e, k, k + start)
        if records is not None:
            e = _told_length(e, lengths, records, set(sums), lambda b: _noted(bounds.written_out(b, kernel, local),
                                                                              ends))
        body.append((sym, e))
    if records is not None:
        body = _read(body, {o.symbol for o in kernel.outputs})
    scalars, types = dict(kernel.scalars), dict(kernel.types)
    if any(_reads(e, k) for _, e in kernel.body for k in indices):
        scalars[start], types[name] = name, T("int", 0)
    if records is not None and any(_reads(e, records) for _, e in body):
        scalars[records], types[told] = told, T("int", 0)
    # (a bound written out reads the lengths an earlier kernel read: inputs of this one too)
    scalars.update({sym: bounds.names[sym] for sym in ends if sym not in scalars and sym in bounds.names})
    return dataclasses.replace(kernel, body=body, scalars=scalars, types=types)


def _noted(bound: sp.Expr, ends: set) -> sp.Expr:
    ends |= bound.free_symbols
    return bound


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


def _told_length(e: sp.Basic, lengths: set, records: sp.Symbol, sums: set, written_out) -> sp.Basic:
    """``e`` with each symbol of ``lengths`` read as ``records`` (the whole call's number of records), except
    in the bounds of a sum over an index of ``sums`` (a sum over the records: the block's own rows), which
    are ``written_out`` over the plan's lengths (``range(0, n - 1)``'s bound is a body symbol ``stop = n -
    1`` that the terms may read too, as the told ``n - 1``; zip's bound an earlier kernel's output)."""
    if e in lengths:
        return records
    if not e.args:
        return e
    if isinstance(e, forms.Reduction) and e.args[1] in sums:
        summand, k, *ends = e.args
        return e.func(_told_length(summand, lengths, records, sums, written_out), k,
                      *(written_out(b) for b in ends))
    args = [_told_length(a, lengths, records, sums, written_out) for a in e.args]
    return e.func(*args) if any(a is not b for a, b in zip(args, e.args, strict=True)) else e


def _read(body: list, outputs: set) -> list:
    """The assignments of ``body`` that the ``outputs`` read, directly or through others (a bound's symbol
    written out in its sum is read no more: it is not printed)."""
    wanted, kept = set(outputs), []
    for sym, e in reversed(body):
        if sym in wanted:
            kept.append((sym, e))
            wanted |= e.free_symbols
    return kept[::-1]
