"""The graph a chunk sum's call adds above its per-chunk ``blockwise`` (:mod:`coarsen_nb.dask_chunk_runs`).

Each chunk's task gives a one-element object array: ``(small vector, record gradients' blocks)``.  Above
it: the tree sum of the small vectors, grouped as Dask's ``sum`` groups blocks at the configured fan-in
(:func:`tree_levels`, the groups computed once per chunk structure and kept with the call's wiring), each
small gradient (and the value) a one-chunk array cut from the sum, and each record gradient the chunks'
own blocks.  These layers are written here as tasks, not through ``da.reduction`` and ``__getitem__``:
those tokenize their functions and inspect their signatures on every call (most of the ~5 ms a call's
graph took), where here the only per-call work is naming the tasks after the call's token.  The layers keep
Dask's names (``sum-partial``, ``sum-aggregate``), which :mod:`coarsen_nb.dask_chunking` reads.
"""

from __future__ import annotations

import math

import numpy as np


class ChunkGraph:
    """The layers a chunk sum's call adds above its per-chunk ``blockwise`` (each output's graph: the layers it
    reads, so that Dask culls nothing and :mod:`coarsen_nb.dask_chunking` counts what it would run)."""

    def __init__(self, per_chunk):
        g = per_chunk.__dask_graph__()
        self.layers, self.deps = dict(g.layers), {k: set(v) for k, v in g.dependencies.items()}
        self.per_chunk = per_chunk.name

    def add(self, name: str, tasks: dict, reads: list) -> str:
        from dask.highlevelgraph import MaterializedLayer

        self.layers[name] = MaterializedLayer(tasks)
        self.deps[name] = set(reads)
        return name

    def tree(self, levels: tuple, token: str) -> str:
        """The tree sum of the chunks' small vectors, its groups ``levels`` (as Dask's ``sum`` groups them:
        its layers named as Dask's, ``sum-partial`` and ``sum-aggregate``); the name of its one-key top."""
        below, add = self.per_chunk, add_chunks
        for k, groups in enumerate(levels):
            word = "sum-aggregate" if k == len(levels) - 1 else "sum-partial"
            name = f"{word}-{k}-{token}" if word == "sum-partial" else f"{word}-{token}"
            self.add(name, {(name, j): (add, [(below, i) for i in group]) for j, group in enumerate(groups)},
                     [below])
            below, add = name, add_sums
        return below

    def part(self, top: str, alone: str | None, offset, at: int, shape: tuple, name: str):
        """One gradient (or the value): ``shape`` numbers at ``at`` in the summed vector, a one-chunk array."""
        task = (part_of, (top, 0), None if alone is None else (alone, 0), offset, at, shape)
        return self.array(name, {(name, *(0,) * len(shape)): task}, [top] + ([alone] if alone else []),
                          tuple((d,) for d in shape))

    def array(self, name: str, tasks: dict, reads: list, chunks: tuple):
        """A float Dask array of ``chunks`` whose blocks are ``tasks`` (reading the layers ``reads``)."""
        import dask.array as da
        from dask.highlevelgraph import HighLevelGraph

        self.add(name, tasks, reads)
        needed, todo = set(), [name]
        while todo:
            n = todo.pop()
            if n not in needed:
                needed.add(n)
                todo.extend(self.deps.get(n, ()))
        graph = HighLevelGraph({n: self.layers[n] for n in needed}, {n: self.deps[n] for n in needed})
        return da.Array(graph, name, chunks, dtype=float, meta=np.empty((0,) * len(chunks)))


def tree_levels(blocks: int) -> tuple:
    """The groups of Dask's tree sum over ``blocks`` blocks at the configured fan-in (``split_every``), level
    by level: Dask's own depth rule (``ceil(log(blocks, fan_in))`` levels, the last one the aggregate)."""
    import dask

    fan_in = dask.config.get("split_every", None) or 4
    fan_in = max(int(fan_in.get(0, 2) if isinstance(fan_in, dict) else fan_in), 2)
    depth = max(1, math.ceil(math.log(blocks, fan_in)))
    levels, count = [], blocks
    for k in range(depth):
        size = fan_in if k < depth - 1 else count
        groups = tuple(tuple(range(j, min(j + size, count))) for j in range(0, count, size))
        levels.append(groups)
        count = len(groups)
    return tuple(levels)


def add_chunks(blocks: list):
    """The sum of the chunks' small vectors (each chunk's block: a one-element object array)."""
    return add_sums([b[0][0] for b in blocks])


def add_sums(vectors: list):
    """The sum of a tree level's vectors (a new array: the ones added may be kept by Dask)."""
    total = vectors[0].copy()
    for v in vectors[1:]:
        total += v
    return total


def part_of(vector, alone, offset, at: int, shape: tuple):
    """``shape`` numbers at ``at`` of the summed ``vector`` (plus ``offset`` times the term on no records,
    ``alone``, where the function has one)."""
    if alone is not None:
        vector = vector + offset * alone
    return vector[at] if shape == () else vector[at:at + math.prod(shape)].reshape(shape)


def big_block(block, k):
    """Chunk ``block``'s ``k``-th record gradient (its task's block: a one-element object array)."""
    return block[0][1][k]
