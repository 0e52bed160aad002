"""How a call on Dask arrays was cut into chunks: the record ``f.chunking`` returns (issue 18).

A call on Dask arrays runs one of two ways (:mod:`coarsen_nb.dask_arrays`): chunk by chunk through the
function's in-memory module, the small results added by Dask's tree sum (a sum over the records:
:mod:`coarsen_nb.dask_chunk_runs`), or the dask module's array statements, with the reason the first did not
apply.  Which one ran, over how many chunks of how many bytes, in a graph of how many tasks, and what was
added across chunks by which trees is what a user needs to judge a chunking; :class:`Chunking` says it.

Everything here is read from what the call already holds: the arguments' ``chunks`` and ``dtype``, and the
layers of the graph it built (:meth:`dask.highlevelgraph.HighLevelGraph.layers`, their lengths and
dependencies, which Dask gives without materializing a task).  Nothing runs on the cluster, and the record
keeps plain numbers and words only (no reference to a graph, which would hold the workers' data).

A tree reduction is read from Dask's own layers: Dask names each of its reductions' layers
``<name>-partial`` (one per level of the tree below the top) and ``<name>-aggregate`` (the top), and
:func:`dask.utils.key_split` gives that name back; its depth is the number of those levels, its fan-in
the most blocks one of its tasks adds.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from coarsen_nb.dask_whole_blocks import WholeBlock, whole_blocks

#: what a kind of entry computes, in words
_ENTRY = {"forward": "the value", "grad": "the gradient", "vjp": "the value and gradient", "jvp": "a JVP"}


@dataclass(frozen=True)
class ArgumentChunks:
    """One Dask argument's chunking: its blocks, and its largest block's shape and bytes."""

    name: str
    blocks: int
    largest: tuple[int, ...]
    largest_bytes: int
    dtype: str

    def __str__(self) -> str:
        shape = " x ".join("?" if math.isnan(m) else str(m) for m in self.largest) or "one value"
        return (f"{self.name}: {self.blocks} chunk{'s' if self.blocks != 1 else ''}, the largest "
                f"{shape} {self.dtype} ({fmt_bytes(self.largest_bytes)})")


@dataclass(frozen=True)
class TreeReduction:
    """One of Dask's tree reductions across chunks: what it is (``sum``, ``max``), how many blocks it
    reduces, its depth (levels of tasks) and fan-in (the most blocks one task combines)."""

    name: str
    blocks: int
    depth: int
    fan_in: int

    def __str__(self) -> str:
        return (f"{self.name} over {self.blocks} block{'s' if self.blocks != 1 else ''} "
                f"(depth {self.depth}, fan-in {self.fan_in})")


@dataclass(frozen=True)
class Chunking:
    """How the last call on Dask arrays ran (``f.chunking``).

    ``chunkwise`` is True where each chunk ran through the in-memory ``module`` (numba's or NumPy's) and
    ``reason`` is then empty; else the dask module's array statements ran, and ``reason`` says why the
    chunkwise run did not apply.  ``chunks``: the records' chunks (one task each) where it ran chunkwise,
    else the most blocks of an argument; ``tasks``: the tasks of the graph the call built (before Dask's
    optimization fuses some); ``added``: what the chunkwise run's tree sum adds (the value, the gradients
    with respect to the arguments that are not records); ``reductions``: every tree reduction in the graph;
    ``gathered``: the operands a form gathered into one block, what for and why (:mod:`.dask_whole_blocks`);
    ``computed_early``: what the call computed while building its graph (the lanes a branch selects, counted
    where a shape needs their number: ``lower/dask_xp.lane_counts``).
    """

    entry: str
    chunkwise: bool
    module: str
    reason: str
    arguments: tuple[ArgumentChunks, ...]
    chunks: int
    tasks: int
    added: tuple[str, ...]
    reductions: tuple[TreeReduction, ...]
    told: bool = False      # each chunk's module told its first record's index (terms read it: dask_chunk_index)
    counted: bool = False   # ... and the call's number of records (terms or the term beside the sum read it)
    gathered: tuple[WholeBlock, ...] = ()   # operands gathered into one block along some axes (dask_whole_blocks)
    computed_early: tuple[str, ...] = ()   # what the call computed while building its graph (dask_xp.lane_counts)
    loops: tuple[int, ...] = ()   # the lines of the loops each chunk ran whole, lane by lane (dask_chunk_lanes)

    def lines(self) -> list[str]:
        """What it says, a headline (which way it ran, and why) and then one line per figure."""
        if self.chunkwise:
            told = " (told " + " and ".join(w for w, t in (("each chunk's first record's index", self.told),
                                                            ("the number of records", self.counted)) if t) + ")" \
                if self.told or self.counted else ""
            how = f"chunk by chunk through its {self.module} module{told}, {self.chunks} chunk tasks"
        else:
            how = f"as the dask module's array statements, because {self.reason}"
        lines = [f"{self.entry} on Dask arrays ran {how}; the graph has {self.tasks} tasks",
                 *map(str, self.arguments)]
        if self.added:
            lines.append(f"added across chunks by Dask's tree sum: {', '.join(self.added)}")
        for r, count in Counter(self.reductions).items():
            lines.append(f"reduction across chunks: {r}" + (f", {count} of them" if count > 1 else ""))
        if not self.reductions:
            lines.append("no reduction across chunks")
        lines.extend(f"each chunk ran the loop at line {line} whole, its state lane by lane (or free of the records)"
                     for line in self.loops)
        lines.extend(map(str, self.gathered))
        lines.extend(f"computed while the graph was built: {what}" for what in dict.fromkeys(self.computed_early))
        return lines

    def __str__(self) -> str:
        first, *rest = self.lines()
        return "\n".join([first, *("  " + line for line in rest)])


def describe(kind: str, params: tuple[str, ...], args: tuple, outputs: list, schedule, reason: str,
             is_dask, computed_early: tuple[str, ...] = ()) -> Chunking:
    """The :class:`Chunking` of a call of entry ``kind`` with ``args`` whose lazy results are ``outputs``
    (the Dask collections it built, before any is computed); ``schedule`` the function's
    :class:`~coarsen_nb.dask_chunk_runs.ChunkSchedule` (or None), ``reason`` why it did not run (empty: it
    did)."""
    arguments = tuple(_argument(p, a) for p, a in zip(params, args, strict=False) if is_dask(a))
    layers, deps = {}, {}
    for out in outputs:
        graph = out.__dask_graph__()
        layers.update(graph.layers)
        deps.update(graph.dependencies)
    chunkwise = not reason
    added: tuple[str, ...] = ()
    chunks = max((a.blocks for a in arguments), default=0)
    told = counted = False
    loops: tuple[int, ...] = ()
    if chunkwise:
        form = schedule.form_of(args, is_dask)
        records = [args[params.index(p)] for p in form.records]
        chunks = len(records[0].chunks[0])
        told, counted = bool(form.indices), bool(form.counted)
        loops = form.loops
        small = [p for p in schedule.wrt if p not in form.records] if kind in ("grad", "vjp") else []
        added = (("the value",) if kind != "grad" else ()) + tuple(f"the gradient with respect to {p}"
                                                                    for p in small)
    return Chunking(_ENTRY.get(kind, kind), chunkwise, schedule.module.backend if chunkwise else "dask",
                    reason, arguments, chunks, sum(len(v) for v in layers.values()), added,
                    _reductions(layers, deps), told, counted,
                    whole_blocks(layers, deps, {a.name: p for p, a in zip(params, args, strict=False) if is_dask(a)}),
                    computed_early, loops)


def _argument(name: str, a) -> ArgumentChunks:
    largest = tuple(max(c, default=0) for c in a.chunks)
    size = math.prod(largest) * a.dtype.itemsize if all(not math.isnan(m) for m in largest) else -1
    return ArgumentChunks(name, a.npartitions, largest, size, str(a.dtype))


def _reductions(layers: dict, deps: dict) -> tuple[TreeReduction, ...]:
    """Dask's tree reductions among ``layers`` (name -> layer; ``deps``: name -> the names it reads)."""
    from dask.utils import key_split

    out = []
    for name in layers:
        word = key_split(name)
        if not word.endswith("-aggregate"):
            continue
        levels, fan_in, top = 1, 1, name
        below = _only_input(top, layers, deps)
        while below is not None:        # down the tree: its partial levels, then the blocks it reduces
            fan_in = max(fan_in, math.ceil(len(layers[below]) / max(len(layers[top]), 1)))
            if not key_split(below).endswith("-partial"):
                break
            levels, top = levels + 1, below
            below = _only_input(top, layers, deps)
        if below is not None:
            out.append(TreeReduction(word.removesuffix("-aggregate"), len(layers[below]), levels, fan_in))
    return tuple(out)


def _only_input(name: str, layers: dict, deps: dict) -> str | None:
    """The one layer the layer ``name`` reads (None where it reads none or several)."""
    inputs = [d for d in deps.get(name, ()) if d in layers]
    return inputs[0] if len(inputs) == 1 else None


def fmt_bytes(n: float) -> str:
    """Bytes in the unit that keeps 3 significant digits readable (unknown chunk sizes: "unknown size")."""
    if n < 0:
        return "unknown size"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{int(n)} B"
