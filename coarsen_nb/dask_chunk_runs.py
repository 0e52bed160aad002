"""A chunk sum run chunk by chunk: each chunk of the records through the function's own compiled module, the
results added by a tree (issue 18's per-core throughput).

:mod:`coarsen_nb.dask_chunk_sums` says when a function is ``F(n) · Σ_k φ(θ, X[k])`` and what the weight
``w_c = F(n) / F(n_c)`` of a chunk of ``n_c`` records is.  Then an entry function (the value, the gradient,
the VJP) is one task per chunk calling the in-memory module's entry on the chunk's NumPy blocks (numba's
compiled loops where the function's backend is numba, the default), scaled by ``w_c``:

* the value and the gradients with respect to numbers and NumPy arrays are one small vector per chunk,
  added up by Dask's tree reduction (``sum(axis=0)`` over a chunk axis): a few numbers per task move;
* a gradient with respect to a record array is the chunk's own block of it (scaled), a Dask array with the
  records' chunks.

What each entry returns is what the dask module's would (lazy Dask arrays), so
:class:`coarsen_nb.dask_arrays` shapes it as it shapes the dask module's.  The graph is a few tasks per
chunk; nothing runs until it is computed.

The module runs in each worker as it runs in memory: :class:`ChunkModule` carries its source and loads it
once per worker process (the numba backend's file cache beside it: a worker on this machine finds Numba's
compiled code of the main process).  A chunking this cannot run is said by :meth:`ChunkSchedule.refusal`
(records not all Dask arrays with one chunking along the first axis only, a weight that is not finite), and
the call then runs the dask module, whose answer is the same.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from coarsen_nb import backends

if TYPE_CHECKING:       # (a worker unpickling a chunk's task imports this module: no SymPy there)
    from coarsen_nb.dask_chunk_sums import ChunkSum

#: the entry functions a chunk sum runs chunk by chunk, by the runtime's kind
_ENTRY = {"forward": "", "grad": "_grad", "vjp": "_vjp"}


@dataclass(frozen=True)
class ChunkModule:
    """The in-memory module to load in a worker: its backend, parts (:mod:`coarsen_nb.module_parts`; the numba
    module's carry its ``xp`` namespace: ~70 KB for logreg_nll, sent once per call as one key of the graph),
    module name and function's name."""

    backend: str
    parts: tuple
    module_name: str
    function: str                   # the user's function: the entries are it, NAME_grad, NAME_vjp, NAME_jvp

    @property
    def entry_points(self) -> tuple[str, ...]:
        return tuple(self.function + suffix for suffix in ("", "_vjp", "_grad", "_jvp"))

    def call(self, name: str, args: list):
        """The entry ``name`` on ``args`` (Dask's threaded scheduler runs chunks in threads of one process: the
        loader compiles one entry at a time, ``numba_loader._COMPILING``)."""
        return _loaded(self)[name](*args)


@functools.lru_cache(maxsize=16)
def _loaded(module: ChunkModule) -> dict:
    """The namespace of ``module``, loaded once per process (a worker's, or this one's)."""
    backend = backends.get(module.backend)
    return backend.load(module.parts, f"<coarsen_nb chunk module {module.module_name}>", module.module_name,
                        module.entry_points, _no_numpy_module)


def _no_numpy_module():
    # a worker has no plan to print the NumPy module from: a numba function that does not compile in a
    # worker (it compiled in memory first: the same source and types) is a bug, reported as one
    raise RuntimeError("the chunk module's compiled code did not load in a Dask worker")


@dataclass(frozen=True)
class ChunkSchedule:
    """A function's chunk sums (``forms``: one per sum that may be over the records; a call's Dask arguments
    say which), its parameters and ``wrt``, and the module each chunk runs."""

    forms: tuple[ChunkSum, ...]
    params: tuple[str, ...]
    wrt: tuple[str, ...]
    module: ChunkModule

    def refusal(self, args: tuple, is_dask) -> str:
        """Why the call with ``args`` cannot run chunk by chunk (empty: it can)."""
        primal, extra = args[:len(self.params)], args[len(self.params):]
        form = self.form_of(args, is_dask)
        if form is None or any(is_dask(a) for a in extra):
            return (f"its Dask arguments are not the records of its sum "
                    f"({' or '.join(', '.join(f.records) for f in self.forms)}), or not only")
        records = [primal[self.params.index(p)] for p in form.records]
        first = records[0].chunks[0]
        if any(math.isnan(m) for m in first):
            return "its records' chunks have sizes not known before they are computed"
        for r in records:
            if r.chunks[0] != first or any(len(c) != 1 for c in r.chunks[1:]):
                return "its records are not cut into the same chunks along their first axis only"
        n = sum(first)
        if any(math.isnan(form.weight(n, m)) for m in set(first) if m):
            return "the factor around its sum is not finite at a chunk's number of records"
        return ""

    def form_of(self, args: tuple, is_dask) -> ChunkSum | None:
        """The chunk sum whose records are the Dask arguments of the call, if one is."""
        chunked = {p for p, a in zip(self.params, args, strict=False) if is_dask(a)}
        return next((f for f in self.forms if set(f.records) == chunked), None)

    def call(self, kind: str, args: tuple):
        """What the dask module's entry ``kind`` returns for ``args``, computed chunk by chunk (lazy)."""
        import dask
        import dask.array as da

        primal = args[:len(self.params)]
        form = self.form_of(args, dask.is_dask_collection)
        records = [primal[self.params.index(p)] for p in form.records]
        chunks = records[0].chunks[0]
        n = sum(chunks)
        weights = {m: form.weight(n, m) for m in set(chunks) if m}
        small = [p for p in self.wrt if p not in form.records] if kind != "forward" else []
        shapes = [np.shape(primal[self.params.index(p)]) for p in small]
        task = _ChunkTask(self.module, self.module.function + _ENTRY[kind], kind,
                          tuple(self.params.index(p) for p in form.records),
                          tuple(a if not dask.is_dask_collection(a) else None for a in args),
                          tuple(self.wrt.index(p) for p in small),
                          tuple(self.wrt.index(p) for p in self.wrt if p in form.records and kind != "forward"),
                          weights, tuple(self.params.index(p) for p in self.wrt))
        letters = iter("abcdefghjklmnopqrstuvwxyz")
        pairs = [(r, "i" + "".join(next(letters) for _ in range(r.ndim - 1))) for r in records]
        # (the task, with the module's source, is one key of the graph that every chunk's task reads)
        per_chunk = da.blockwise(_run, "i", dask.delayed(task, pure=True), None,
                                 *(x for pair in pairs for x in pair), dtype=object,
                                 meta=np.empty((0,), dtype=object), adjust_chunks={"i": 1})
        width = (kind != "grad") + sum(int(np.prod(s)) for s in shapes)
        sums = per_chunk.map_blocks(_small_row, chunks=((1,) * len(chunks), (width,)), new_axis=1,
                                    dtype=float).sum(axis=0)
        if form.offset:        # f = Σ_c w_c f_c + (1 - Σ_c w_c) · f(no records): the term beside the sum
            alone = dask.delayed(_without_records)(dask.delayed(task, pure=True),
                                                   tuple((r.shape[1:], r.dtype) for r in records))
            total = sum(weights[m] for m in chunks if m)
            sums = sums + (1.0 - total) * da.from_delayed(alone, shape=(width,), dtype=float)
        parts, at = [], int(kind != "grad")
        for s in shapes:
            size = int(np.prod(s))
            parts.append(sums[at] if s == () else sums[at:at + size].reshape(s))     # (a number computes to one)
            at += size
        grads = []
        big = [p for p in self.wrt if p in form.records]
        for p in self.wrt if kind != "forward" else ():
            if p in form.records:
                r = records[form.records.index(p)]
                grads.append(per_chunk.map_blocks(_big_block, big.index(p), chunks=r.chunks,
                                                  new_axis=list(range(1, r.ndim)) or None, dtype=float))
            else:
                grads.append(parts[small.index(p)])
        if kind == "forward":
            return sums[0]
        return tuple(grads) if kind == "grad" else (sums[0], tuple(grads))


@dataclass(frozen=True)
class _ChunkTask:
    """One chunk's work: the entry on the chunk's blocks, scaled by the chunk's weight; returns
    ``(small vector, record gradients' blocks)`` in a one-element object array (a block of the task array)."""

    module: ChunkModule
    entry: str
    kind: str
    positions: tuple[int, ...]      # where the records' blocks go among the arguments
    args: tuple                     # the other arguments (None at the records)
    small: tuple[int, ...]          # positions in the gradients of the small ones
    big: tuple[int, ...]            # positions in the gradients of the records'
    weights: dict                   # chunk length -> weight
    wrt_params: tuple[int, ...]     # each gradient's parameter position

    def __call__(self, *blocks, weight: float | None = None):
        args = list(self.args)
        for k, b in zip(self.positions, blocks, strict=True):
            args[k] = np.ascontiguousarray(b)
        m = blocks[0].shape[0]
        out = np.empty(1, dtype=object)
        if m == 0 and weight is None:       # (an empty chunk adds nothing: it has no weight)
            out[0] = self._zeros(blocks, args)
            return out
        w = self.weights[m] if weight is None else weight
        got = self.module.call(self.entry, args)
        value, grads = (got, ()) if self.kind == "forward" else (None, got) if self.kind == "grad" else got
        row = [] if value is None else [float(value) * w]
        for k in self.small:
            row.extend(np.ravel(np.asarray(grads[k], dtype=float)) * w)
        out[0] = (np.asarray(row, dtype=float), tuple(np.asarray(grads[k], dtype=float) * w for k in self.big))
        return out

    def _zeros(self, blocks, args):
        """An empty chunk adds nothing: zeros of the small vector's width and of the blocks' shapes."""
        width = (self.kind != "grad") + sum(int(np.size(args[self.wrt_params[k]])) for k in self.small)
        bigs = tuple(np.zeros(blocks[self.positions.index(self.wrt_params[k])].shape) for k in self.big)
        return np.zeros(width), bigs


def _without_records(task: _ChunkTask, shapes: tuple):
    """The small vector of the entry on no records (weight 1): the term beside the sum, and its gradients."""
    blocks = [np.empty((0, *rest), dtype=dtype) for rest, dtype in shapes]
    return task(*blocks, weight=1.0)[0][0]


def _run(task: _ChunkTask, *blocks):
    # (a record's other axes are one chunk each, which blockwise passes as a list of one block per axis:
    # unwrapped here, where ``concatenate=True`` would copy the block)
    return task(*(_one_block(b) for b in blocks))


def _one_block(b):
    while isinstance(b, list):
        (b,) = b
    return b


def _small_row(block):
    return block[0][0][None, :]


def _big_block(block, k):
    return block[0][1][k]
