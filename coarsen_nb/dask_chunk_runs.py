"""A chunk sum run chunk by chunk: each chunk of the records through the function's own compiled module, the
results added by a tree (issue 18's per-core throughput).

:mod:`coarsen_nb.dask_chunk_sums` says when a function is ``F(n) · Σ_k φ(θ, X[k])`` and what the weight
``w_c = F(n) / F(n_c)`` of a chunk of ``n_c`` records is.  Then an entry function (the value, the gradient,
the VJP) is one task per chunk calling the in-memory module's entry on the chunk's NumPy blocks (numba's
compiled loops where the function's backend is numba, the default), scaled by ``w_c``:

* the value and the gradients with respect to numbers and NumPy arrays are one small vector per chunk,
  added up by a tree grouped as Dask's ``sum`` groups (:mod:`coarsen_nb.dask_chunk_graph`): a few numbers
  per task move;
* a gradient with respect to a record array is the chunk's own block of it (scaled), a Dask array with the
  records' chunks.

What each entry returns is what the dask module's would (lazy Dask arrays), so
:class:`coarsen_nb.dask_arrays` shapes it as it shapes the dask module's.  The graph is a few tasks per
chunk; nothing runs until it is computed.  What does not depend on the call's arrays (the decision, the
weights, the task object with the module, the tree's groups) is wired once per chunk structure
(:meth:`ChunkSchedule.wired`); a call builds only its arrays' ``blockwise`` and the tasks named after them.

The module runs in each worker as it runs in memory: :class:`ChunkModule` carries its source and loads it
once per worker process (the numba backend's file cache beside it: a worker on this machine finds Numba's
compiled code of the main process).  A chunking this cannot run is said by :meth:`ChunkSchedule.refusal`
(records not all Dask arrays with one chunking along the first axis only, a weight that is not finite), and
the call then runs the dask module, whose answer is the same.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from coarsen_nb import backends
from coarsen_nb.dask_chunk_graph import ChunkGraph, big_block, tree_levels
from coarsen_nb.dask_chunk_halos import Halos, gather_tasks, run_tasks

if TYPE_CHECKING:       # (a worker unpickling a chunk's task imports this module: no SymPy there)
    from coarsen_nb.dask_chunk_sums import ChunkSum

#: the entry functions a chunk sum runs chunk by chunk, by the runtime's kind
_ENTRY = {"forward": "", "grad": "_grad", "vjp": "_vjp"}


@dataclass(frozen=True)
class ChunkModule:
    """The in-memory module to load in a worker: its backend, parts (:mod:`coarsen_nb.module_parts`; the numba
    module's carry its ``xp`` namespace: ~70 KB for logreg_nll, one key of every call's graph, tokenized once
    per chunk structure), module name and function's name."""

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
        return loaded_functions(self)[name](*args)


@functools.lru_cache(maxsize=16)
def loaded_functions(module: ChunkModule) -> dict:
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
    say which), its parameters and ``wrt``, and the module each chunk runs.

    What a call builds is cached per chunk structure (:meth:`wired`: the entry, which arguments are Dask
    arrays, their chunks and dtypes, the other arguments' shapes): the decision (:meth:`refusal`), the
    chunks' weights, the per-chunk task with the module (one key of every call's graph, tokenized once) and
    where each gradient lies in the summed vector.  A later call with that structure, on new lazy arrays,
    only wires them in: the per-chunk ``blockwise`` over them and the tree sum of its rows, named without
    tokenizing anything but the inputs' names and the small arguments."""

    forms: tuple[ChunkSum, ...]
    params: tuple[str, ...]
    wrt: tuple[str, ...]
    module: ChunkModule
    told: tuple = ()        # per form: the module told its block's first index (dask_chunk_index), or None
    _wired: dict = field(default_factory=dict, compare=False, repr=False)
    _counts: dict = field(default_factory=lambda: {"hits": 0, "builds": 0}, compare=False, repr=False)

    def cache_info(self) -> WiringInfo:
        """How many calls found their chunk structure wired (``hits``) and how many wired one (``builds``)."""
        return WiringInfo(self._counts["hits"], self._counts["builds"], len(self._wired))

    def refusal(self, args: tuple, is_dask, kind: str = "grad") -> str:
        """Why the call of entry ``kind`` with ``args`` cannot run chunk by chunk (empty: it can)."""
        return self.wired(kind, args, is_dask).refusal

    def wired(self, kind: str, args: tuple, is_dask) -> _Wiring:
        """What a call of entry ``kind`` on ``args``'s chunk structure builds once (see the class docstring)."""
        import dask

        fan_in = dask.config.get("split_every", None)          # (the tree's groups; a dict is Dask's per axis)
        key = (kind, tuple(sorted(fan_in.items())) if isinstance(fan_in, dict) else fan_in,
               tuple((k, a.chunks, str(a.dtype)) if is_dask(a) else np.shape(a) for k, a in enumerate(args)))
        hit = self._wired.get(key)
        if hit is not None:
            self._counts["hits"] += 1
            return hit
        self._counts["builds"] += 1
        hit = self._wire(kind, args, is_dask)
        if len(self._wired) >= _WIRINGS:             # (the oldest first: chunk structures seldom alternate)
            del self._wired[next(iter(self._wired))]
        self._wired[key] = hit
        return hit

    def _wire(self, kind: str, args: tuple, is_dask) -> _Wiring:
        refusal = self._decide(args, is_dask)
        if refusal:
            return _Wiring(refusal)
        import dask

        primal = args[:len(self.params)]
        form = self.form_of(args, is_dask)
        records = [primal[self.params.index(p)] for p in form.records]
        chunks = records[0].chunks[0]
        n = sum(chunks)
        told = self.told[self.forms.index(form)] if self.told else None
        # (a module told its first index runs on tasks of its own, as a halo's: no halo, its own rows)
        halos = Halos.of(chunks, *form.halo) if form.halo != (0, 0) or told else None
        runs = [m for m in (halos.lengths() if halos else chunks) if m > sum(form.halo)]    # (chunks with terms)
        weights = {m: form.weight(n, m) for m in set(runs)}
        small = [p for p in self.wrt if p not in form.records] if kind != "forward" else []
        shapes = [np.shape(primal[self.params.index(p)]) for p in small]
        big = [p for p in self.wrt if p in form.records] if kind != "forward" else []
        module = told or self.module
        task = _ChunkTask(module, module.function + _ENTRY[kind], kind,
                          tuple(self.params.index(p) for p in form.records),
                          tuple(self.wrt.index(p) for p in small), tuple(self.wrt.index(p) for p in big),
                          weights, tuple(self.params.index(p) for p in self.wrt), sum(form.halo),
                          len(self.params) if told else None, n if told and form.counted else None)
        # (the task, with the module's source, is one key of the graph that every chunk's task reads: its
        # name tokenized here, once per chunk structure)
        token = dask.base.tokenize(task)
        delayed_task = dask.delayed(task, name=f"chunk-task-{token}", traverse=False)
        width = (kind != "grad") + sum(int(np.prod(s)) for s in shapes)
        where, at = [], int(kind != "grad")
        for p in self.wrt if kind != "forward" else ():
            if p in form.records:
                where.append(("big", big.index(p), form.records.index(p)))
            else:
                s = shapes[small.index(p)]
                where.append(("small", at, s))
                at += int(np.prod(s))
        total = sum(weights[m] for m in runs)
        return _Wiring("", form, delayed_task, width, tuple(where), 1.0 - total if form.offset else None,
                       tuple((r.shape[1:], r.dtype) for r in records), token, tree_levels(len(chunks)), halos,
                       told is not None)

    def _decide(self, args: tuple, is_dask) -> str:
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
        if form.whole and len({r.shape for r in records}) > 1:     # (np.sum(x * y) would broadcast them)
            return "its records, summed elementwise, have different shapes"
        n = sum(first)
        lengths = Halos.of(first, *form.halo).lengths() if form.halo != (0, 0) else first
        if any(math.isnan(form.weight(n, m)) for m in set(lengths) if m > sum(form.halo)):
            return "the factor around its sum is not finite at a chunk's number of records"
        return ""

    def form_of(self, args: tuple, is_dask) -> ChunkSum | None:
        """The chunk sum whose records are the Dask arguments of the call, if one is."""
        chunked = {p for p, a in zip(self.params, args, strict=False) if is_dask(a)}
        return next((f for f in self.forms if set(f.records) == chunked), None)

    def call(self, kind: str, args: tuple):
        """What the dask module's entry ``kind`` returns for ``args``, computed chunk by chunk (lazy): the
        per-chunk ``blockwise`` over the records, then the tasks of the cached tree and parts, named by a token
        of the inputs' names and the small arguments."""
        import dask
        import dask.array as da
        from dask.base import tokenize

        w = self.wired(kind, args, dask.is_dask_collection)
        primal = args[:len(self.params)]
        records = [primal[self.params.index(p)] for p in w.form.records]
        others = _Others(tuple(None if dask.is_dask_collection(a) else a for a in args))
        token = tokenize(w.token, *(r.name for r in records), *others.values)
        name = f"{self.module.function}-chunk-{token}"
        if w.halos is not None:         # (each chunk's rows with the halo's: dask_chunk_halos)
            from dask.highlevelgraph import HighLevelGraph

            layer = run_tasks(name, w.halos, w.task.key, others, records, told=w.told)
            per_chunk = da.Array(HighLevelGraph.from_collections(name, layer, dependencies=[*records, w.task]),
                                 name, ((1,) * len(w.halos.spans),), dtype=object, meta=np.empty((0,), dtype=object))
        else:
            letters = iter("abcdefghjklmnopqrstuvwxyz")
            pairs = [(r, "i" + "".join(next(letters) for _ in range(r.ndim - 1))) for r in records]
            per_chunk = da.blockwise(_run, "i", w.task, None, others, None, *(x for pair in pairs for x in pair),
                                     name=name, dtype=object, meta=np.empty((0,), dtype=object),
                                     adjust_chunks={"i": 1})
        graph = ChunkGraph(per_chunk)
        if w.width:
            top = graph.tree(w.levels, token)
            alone = None
            if w.offset is not None:  # f = Σ_c w_c f_c + (1 - Σ_c w_c) · f(no records): the term beside the sum
                alone = graph.add(f"chunk-alone-{token}", {(f"chunk-alone-{token}", 0): (
                    _without_records, w.task.key, others, w.record_types)}, [w.task.key])
            value = graph.part(top, alone, w.offset, 0, (), f"chunk-value-{token}") if kind != "grad" else None
        grads = []
        for k, (how, at, s) in enumerate(w.where):
            name = f"chunk-grad{k}-{token}"
            if how == "big":
                r = records[s]
                rest = (0,) * (r.ndim - 1)
                # (a chunk told its first index but with no halo owns its block's rows: nothing to gather)
                if w.halos and w.form.halo != (0, 0):
                    tasks = gather_tasks(name, per_chunk.name, w.halos, r.chunks[0], at, r.shape[1:])
                else:
                    tasks = {(name, i, *rest): (big_block, (per_chunk.name, i), at)
                             for i in range(per_chunk.numblocks[0])}
                grads.append(graph.array(name, tasks, [per_chunk.name], r.chunks))
            else:
                grads.append(graph.part(top, alone, w.offset, at, s, name))
        if kind == "forward":
            return value
        return tuple(grads) if kind == "grad" else (value, tuple(grads))


#: how many chunk structures a schedule keeps wired
_WIRINGS = 16


class WiringInfo(NamedTuple):
    """:meth:`ChunkSchedule.cache_info`: calls that found their chunk structure wired, that wired one, and how
    many are kept."""

    hits: int
    builds: int
    size: int


@dataclass(frozen=True)
class _Wiring:
    """What a call on one chunk structure builds once: the decision (``refusal``, empty where it runs chunk
    by chunk) and then the chunk sum's form, the per-chunk task (a Delayed), the summed vector's width, where
    each gradient lies (``("small", offset, shape)`` in the vector or ``("big", k, record)``: the chunks'
    k-th record gradient), the factor of the term beside the sum (None: none), and the records' shapes
    past the first axis and dtypes (for that term)."""

    refusal: str
    form: ChunkSum | None = None
    task: object = None
    width: int = 0
    where: tuple = ()
    offset: float | None = None
    record_types: tuple = ()
    token: str = ""
    levels: tuple = ()              # the tree sum's groups, level by level (dask_chunk_graph.tree_levels)
    halos: Halos | None = None      # each chunk's rows and halo (dask_chunk_halos): sums that read x[k + 1]
    told: bool = False              # each chunk's task is told its block's first index (dask_chunk_index)


class _Others:
    """The call's arguments that are not Dask arrays (None at those that are), one literal of the graph: a
    class of its own, so that Dask neither traverses nor tokenizes it."""

    __slots__ = ("values",)

    def __init__(self, values: tuple):
        self.values = values


@dataclass(frozen=True)
class _ChunkTask:
    """One chunk's work: the entry on the chunk's blocks, scaled by the chunk's weight; returns
    ``(small vector, record gradients' blocks)`` in a one-element object array (a block of the task array)."""

    module: ChunkModule
    entry: str
    kind: str
    positions: tuple[int, ...]      # where the records' blocks go among the arguments
    small: tuple[int, ...]          # positions in the gradients of the small ones
    big: tuple[int, ...]            # positions in the gradients of the records'
    weights: dict                   # chunk length -> weight
    wrt_params: tuple[int, ...]     # each gradient's parameter position
    halo: int = 0                   # the rows of a block beside its chunk's own (x[k + 1]'s): fewer hold no term
    start_at: int | None = None     # where the block's first global index goes among the arguments (or none)
    records: int | None = None      # the call's number of records, told after it (dask_chunk_index), or none

    def __call__(self, others: tuple, *blocks, weight: float | None = None, start: int = 0):
        args = list(others)     # (the call's other arguments, None at the records)
        for k, b in zip(self.positions, blocks, strict=True):
            args[k] = np.ascontiguousarray(b)
        if self.start_at is not None:       # (the module's own last parameters: dask_chunk_index)
            args.insert(self.start_at, start)
            if self.records is not None:
                args.insert(self.start_at + 1, self.records)
        m = blocks[0].shape[0]
        out = np.empty(1, dtype=object)
        if m <= self.halo and weight is None:       # (a chunk with no terms adds nothing: it has no weight)
            out[0] = self._zeros(blocks, args)
            return out
        w = self.weights[m] if weight is None else weight
        got = self.module.call(self.entry, args)
        value, grads = (got, ()) if self.kind == "forward" else (None, got) if self.kind == "grad" else got
        row = [] if value is None else [float(value) * w]
        for k in self.small:
            row.extend(np.ravel(np.asarray(grads[k], dtype=float)) * w)
        # (a weight of 1, F = 1, copies no block of a record's gradient)
        out[0] = (np.asarray(row, dtype=float),
                  tuple(np.asarray(grads[k], dtype=float) * w if w != 1.0 else np.asarray(grads[k], dtype=float)
                        for k in self.big))
        return out

    def _zeros(self, blocks, args):
        """An empty chunk adds nothing: zeros of the small vector's width and of the blocks' shapes."""
        width = (self.kind != "grad") + sum(int(np.size(args[self.wrt_params[k]])) for k in self.small)
        # (wrt_params are positions among the user's parameters: before the inserted start, if any)
        bigs = tuple(np.zeros(blocks[self.positions.index(self.wrt_params[k])].shape) for k in self.big)
        return np.zeros(width), bigs


def _without_records(task: _ChunkTask, others: _Others, shapes: tuple):
    """The small vector of the entry on no records (weight 1): the term beside the sum, and its gradients."""
    blocks = [np.empty((0, *rest), dtype=dtype) for rest, dtype in shapes]
    return task(others.values, *blocks, weight=1.0)[0][0]


def _run(task: _ChunkTask, others: _Others, *blocks):
    # (a record's other axes are one chunk each, which blockwise passes as a list of one block per axis:
    # unwrapped here, where ``concatenate=True`` would copy the block)
    return task(others.values, *(_one_block(b) for b in blocks))


def _one_block(b):
    while isinstance(b, list):
        (b,) = b
    return b
