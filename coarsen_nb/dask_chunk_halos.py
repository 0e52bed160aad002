"""A chunk sum whose terms read nearby records (``x[k + 1]``): each chunk runs with a halo (issue 18).

:mod:`coarsen_nb.dask_chunk_sums` takes a sum ``Σ_{k in range(a, n - b)} φ(x[k - a'], …, x[k + b'])`` with
``a' <= a`` and ``b' <= b`` (rosenbrock: ``range(0, n - 1)`` reading ``x[k]`` and ``x[k + 1]``).  Chunk c,
rows ``[s, e)`` of ``n``, runs the module on its rows with ``a`` rows before and ``b`` after appended (its
*halo*; fewer at the array's ends), rows ``[s - a, e + b)``.  On that block of ``m`` rows the module's sum
runs over its own ``range(a, m - b)``, which is the global terms ``k`` in ``[max(s, a), min(e, n - b))``:
exactly the terms of the chunk's own rows.  So the chunks' values add up to the whole sum with nothing
counted twice, and each chunk is one task (its input the few blocks its rows and halo lie in, sliced in
the task), as :mod:`coarsen_nb.dask_chunk_runs` runs any chunk sum.

The gradient with respect to a record is the module's gradient on the extended block: its halo rows' part
belongs to the neighbouring chunks' rows (the term ``k`` in chunk c reads ``x[k + 1]`` in chunk c + 1).  Each
block of the record's gradient adds, from every chunk whose extended rows cover some of its own, those rows
(:func:`gather_tasks`): one task per block, reading its chunk's and its neighbours' results.

Not ``map_overlap``: Dask's overlap needs each chunk at least as long as the depth (it rechunks otherwise)
and pads the array's ends; here the halo crosses empty and short chunks and stops at the ends, and the
gradient's halo rows are added to their owners', which ``map_overlap``'s trimming would drop.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Halos:
    """Where each chunk's extended rows lie: ``spans[c]`` the global rows ``[lo, hi)`` chunk c runs on,
    ``pieces[c]`` the blocks they are cut from, ``(chunk d, first row in d, stop row in d)``."""

    starts: tuple[int, ...]         # each chunk's first global row
    spans: tuple[tuple[int, int], ...]
    pieces: tuple[tuple[tuple[int, int, int], ...], ...]

    @classmethod
    def of(cls, chunks: tuple[int, ...], before: int, after: int) -> Halos:
        starts = tuple(int(s) for s in np.cumsum((0, *chunks[:-1])))
        n = sum(chunks)
        spans = tuple((max(0, s - before), min(n, s + m + after)) for s, m in zip(starts, chunks, strict=True))
        pieces = tuple(tuple((d, max(lo, starts[d]) - starts[d], min(hi, starts[d] + chunks[d]) - starts[d])
                             for d in _near(starts, chunks, lo, hi) or (c,))
                       for c, (lo, hi) in enumerate(spans))
        return cls(starts, spans, pieces)

    def lengths(self) -> tuple[int, ...]:
        """Each chunk's extended number of rows (what the module sees as the number of records)."""
        return tuple(hi - lo for lo, hi in self.spans)


def _near(starts: tuple, chunks: tuple, lo: int, hi: int) -> tuple[int, ...]:
    """The chunks holding some of the rows ``[lo, hi)`` (none where it is empty)."""
    first = max(bisect.bisect_right(starts, lo) - 1, 0)
    return tuple(d for d in range(first, bisect.bisect_left(starts, hi))
                 if max(lo, starts[d]) < min(hi, starts[d] + chunks[d]))


def run_tasks(name: str, halos: Halos, task_key, others, records: list, told: bool = False) -> dict:
    """One task per chunk: the chunk's task (``task_key``, a :class:`~coarsen_nb.dask_chunk_runs._ChunkTask`)
    on each record's extended block, cut from the blocks ``halos`` names (a record's other axes are one
    chunk each: its block ``(name, d, 0, ...)``); ``told``: the task is told the global index of the
    block's first row (:mod:`coarsen_nb.dask_chunk_index`)."""
    tasks = {}
    for c, pieces in enumerate(halos.pieces):
        cuts = tuple((lo, hi) for _, lo, hi in pieces)
        blocks = [[(r.name, d, *(0,) * (r.ndim - 1)) for d, _, _ in pieces] for r in records]
        tasks[(name, c)] = (run_extended, task_key, others, cuts, halos.spans[c][0] if told else 0, *blocks)
    return tasks


def run_extended(task, others, cuts: tuple, start: int, *blocks: list):
    """The chunk task on each record's rows cut from its blocks and joined (the chunk's rows and halo), told
    the global index ``start`` of their first row."""
    joined = [bs[0][cuts[0][0]:cuts[0][1]] if len(bs) == 1 else
              np.concatenate([b[lo:hi] for b, (lo, hi) in zip(bs, cuts, strict=True)], axis=0) for bs in blocks]
    return task(others.values, *joined, start=start)


def gather_tasks(name: str, per_chunk: str, halos: Halos, chunks: tuple[int, ...], k: int, rest: tuple) -> dict:
    """Each block of the ``k``-th record gradient (``rest``: its shape past the first axis): the rows of it
    that every chunk's extended gradient holds, added."""
    tasks = {}
    reach = max((hi - lo for lo, hi in halos.spans), default=0)   # (a chunk's span is at most this far from it)
    for c, (s, m) in enumerate(zip(halos.starts, chunks, strict=True)):
        parts, reads = [], []
        for d in range(bisect.bisect_left(halos.starts, s - reach),
                       bisect.bisect_right(halos.starts, s + m + reach)):
            lo, hi = halos.spans[d]
            a, b = max(lo, s), min(hi, s + m)
            if a < b:
                parts.append((a - lo, b - lo, a - s))
                reads.append((per_chunk, d))
        tasks[(name, c, *(0,) * len(rest))] = (gather_rows, (m, *rest), k, tuple(parts), reads)
    return tasks


def gather_rows(shape: tuple, k: int, parts: tuple, blocks: list):
    """A block of ``shape``: for each chunk's result in ``blocks``, its ``k``-th record gradient's rows
    ``[lo, hi)`` added at row ``at`` (``parts``)."""
    out = np.zeros(shape)
    for block, (lo, hi, at) in zip(blocks, parts, strict=True):
        out[at:at + hi - lo] += block[0][1][k][lo:hi]
    return out
