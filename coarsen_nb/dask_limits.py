"""What cannot run chunk by chunk: loops run iteration by iteration along a chunked axis (issue 18's limit).

A loop whose carried state has a closed form (a sum, a product, a linear scan, a maximum) is lowered to
array code and runs over chunks: a tree reduction, a cumulative scan across chunks.  A loop that runs
iteration by iteration (an ``IterStep``: a nonlinear recurrence, a ``break`` on the data, every loop at
``max_soi=1``) reads one element per iteration.  Where it indexes a Dask array along an axis split into
several chunks, that is a task per element, and its carried state cannot be split at the chunks: refused,
before anything runs, with the loop's line, the array, the axis and what to do.  Along an axis in one chunk
(a Monte Carlo option's time axis, its paths chunked) the loop runs as it is, a few graph operations per
iteration.

The array read may be a parameter (``x[i]``), or an array computed from parameters (``y[i]`` with
``y = 2 * x``): each value's *sources* (the parameters it is computed from) are found by a pass over the
plan to a fixpoint (loops feed their state back).  A value computed elementwise keeps its sources' axes, so
a source of the same rank is checked along the same axis; a source of another rank (a reduction, an outer
product made it) along every axis, which may refuse a loop that would run.  What is examined is the reads
of the loop's SOIs (``Read``: an array indexed by loop values); an opaque primitive inside the loop (a
gather by an index array) is not.
"""

from __future__ import annotations

from dataclasses import dataclass

from coarsen_nb import ir
from coarsen_nb.errors import CoarsenError
from coarsen_nb.plan import CondStep, IterStep, KernelStep, PrimStep, walk_steps


@dataclass(frozen=True)
class IteratedRead:
    """A loop run iteration by iteration (at ``line``) whose counter or state indexes ``array`` along ``axis``;
    ``array`` is computed from the parameter ``param`` (or is it), and ``same_rank``: they have one rank."""

    line: int
    array: str
    param: str
    axis: int
    same_rank: bool


def _flows(plan):
    """``(defined name, names read)`` for every definition of the plan, loops' state and exits included."""
    for s in walk_steps(plan.steps):
        if isinstance(s, KernelStep):
            for out in s.kernel.output_names:
                yield out, tuple(s.kernel.inputs)
        elif isinstance(s, PrimStep):
            yield s.name, tuple(ir.names_used(s.expr))
        elif isinstance(s, CondStep):
            for name, a, b in s.gammas:
                yield name, tuple(ir.names_used(a)) + tuple(ir.names_used(b))
        elif isinstance(s, IterStep):
            for name, init, nxt in s.mus:
                yield name, tuple(ir.names_used(init)) + tuple(ir.names_used(nxt))
            for out, mu in s.etas:
                yield out, (mu,)


def sources(plan, params: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """Each name of the plan -> the parameters its value is computed from (to a fixpoint: loops feed back)."""
    src: dict[str, frozenset[str]] = {p: frozenset({p}) for p in params}
    flows = list(_flows(plan))
    changed = True
    while changed:
        changed = False
        for name, reads in flows:
            new = src.get(name, frozenset()).union(*(src.get(r, frozenset()) for r in reads))
            if new != src.get(name, frozenset()):
                src[name], changed = new, True
    return src


def iterated_reads(plan, params: tuple[str, ...]) -> tuple[IteratedRead, ...]:
    """Where a loop run iteration by iteration indexes an array computed from a parameter (or the parameter)
    by its counter or any of its state: the loop's line, the array, the parameter, the axis."""
    src = sources(plan, params)
    out: list[IteratedRead] = []
    for loop in walk_steps(plan.steps):
        if not isinstance(loop, IterStep):
            continue
        state = {name for name, _, _ in loop.mus}
        for step in walk_steps(loop.header + loop.body):
            if not isinstance(step, KernelStep):
                continue
            k = step.kernel
            for read in k.reads:
                for axis, index in enumerate(read.index):
                    if not any(k.scalars.get(s, str(s)) in state for s in getattr(index, "free_symbols", ())):
                        continue
                    rank = getattr(plan.types.get(read.array), "ndim", None)
                    for p in sorted(src.get(read.array, ())):
                        same = rank is not None and rank == getattr(plan.types.get(p), "ndim", None)
                        out.append(IteratedRead(loop.line, read.array, p, axis, same))
    return tuple(dict.fromkeys(out))


def check_chunks(f, reads: tuple[IteratedRead, ...], args: tuple) -> None:
    """Raise a CoarsenError where a loop of ``reads`` would index a Dask argument (one with ``chunks``) along an
    axis split into several chunks (see the module docstring).  ``f``: the compiled function (its ``params``,
    ``front_source`` for the line shown, ``plan``-free)."""
    for r in reads:
        chunks = getattr(args[f.params.index(r.param)], "chunks", None)
        if chunks is None:
            continue
        axes = [r.axis] if r.same_rank else range(len(chunks))
        split = [ax for ax in axes if ax < len(chunks) and len(chunks[ax]) > 1]
        if not split:
            continue
        ax = split[0]
        word = r.array.split(".")[0]
        what = f"{r.param!r}" if word == r.param else f"{word!r} (computed from {r.param!r})"
        src = f.front_source
        lines = (src.text or "").splitlines()
        k = r.line - src.first_line
        raise CoarsenError(
            f"for loop over {word}", line=r.line, source_line=lines[k] if 0 <= k < len(lines) else None,
            filename=src.filename,
            message=f"the loop at line {r.line} runs iteration by iteration (its carried state has no closed "
                    f"form: not a sum, product or linear scan), indexing {what} along axis {r.axis}, while "
                    f"axis {ax} of {r.param!r} is split into {len(chunks[ax])} chunks: it cannot run chunk by chunk",
            hint=f"keep axis {ax} of {r.param} in one chunk ({r.param}.rechunk({{{ax}: -1}}), chunking "
                 f"another axis), or pass {r.param} as a NumPy array")
