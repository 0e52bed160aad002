"""Gradients over Dask arrays: the runtime's path for an argument that is a ``dask.array.Array``.

A Dask argument selects the dask backend whatever ``backend=`` says (as a CuPy array would need CuPy's
module): the user's data decides where the work runs, and one compiled function serves NumPy arrays in
a notebook and Dask arrays on a cluster.  ``backend="dask"`` asks for it with NumPy arguments too (each
is then one chunk).  The dask module is compiled once per signature (the argument types; the chunks do
not change the code) and kept in the function's specialization cache beside the NumPy one.

The module (``backends.DASK``: the NumPy printer's statements, ``xp`` a namespace over ``dask.array``,
:mod:`coarsen_nb.lower.dask_xp`) builds a lazy graph; this module runs it and shapes what comes back:

* a gradient with respect to a chunked (Dask) argument is a Dask array with that argument's chunks,
  still lazy;
* a gradient with respect to a number or a NumPy array, and a scalar value, are computed when the call
  returns: all of them in one ``dask.compute``, so the graph they share runs once, on the
  ``dask.distributed`` client where there is one (Dask's default), else on Dask's local scheduler;
* an array value (a function that returns an array) is a lazy Dask array.

**A sum over records runs chunk by chunk through the in-memory module.** Where the plan says the function is
``F(n) · Σ_k φ(θ, X[k])`` over the records of its Dask arguments (:mod:`coarsen_nb.dask_chunk_sums`:
logreg_nll, piecewise_sum, black_scholes, hmc, horner_fit, gmm; rosenbrock, whose terms read ``x[k + 1]``,
with a halo of the next chunk's first row; several such sums, or ``np.sum`` of an elementwise value of the
records, combined linearly; terms reading their index ``k`` as a number, ``g ** k``, or the number of records,
``t ** (n - 1 - k)``, through a variant of the module told each block's first index and the call's number of
records, :mod:`coarsen_nb.dask_chunk_index`), an entry (value, gradient, VJP) is
one task per chunk calling the function's own NumPy or numba module (numba's under the default backend) on the
chunk's blocks, weighted, and a tree sum of the small results (:mod:`coarsen_nb.dask_chunk_runs`): the
per-chunk work is compiled code, not a graph of array statements. Where the plan is not of that form, or the
call's chunks do not fit it (``_Run.chunk_refusal`` says why, in words), the dask module below runs, with the
same answer.

What cannot be chunked is refused before anything runs, with a :class:`CoarsenError` naming the loop
(:mod:`coarsen_nb.dask_limits`): a loop run iteration by iteration along an axis split into chunks.  A form
that needs an operand whole along some axes (a determinant, a convolution's kernel, Dask's LU on chunks that
are not square) gathers it into one block, lazily, and ``f.chunking`` says which, for what and why
(:mod:`coarsen_nb.dask_whole_blocks`).

**Lazy until the result is computed.**  Scalar glue between SOIs on a reduced value stays a graph: the
dask namespace's ``math`` and ``float`` (``math.log(total)``, ``math.tanh(s)``, ``float(s)`` in an array
literal give 0-d Dask arrays, :mod:`coarsen_nb.lower.dask_xp`), and the helpers that branch on data are
``where`` of both arms (``_softplus``, ``_sigmoid``, ``_ieee_div``, ``_erfc``; ``_lin_scan`` keeps a number a
number: :mod:`coarsen_nb.lower.dask_helpers`), and a scalar choice between two names or numbers, which the
NumPy printer writes ``if t2: choice = m_1 else: choice = t``, is ``choice = xp.where(t2, m_1, t)`` in the
dask module (``Backend.where_choices``, ``lower/branches.py``: logsumexp, max_of_generator, running_max).

Not refused, and not lazy (the answer is the same; the cost is the graph up to that point computed where the
Python code runs, again at each evaluation).  These stay eager because Python code decides on the value:

* a Python ``if`` on an element of a loop run iteration by iteration (running_max_if, helper_in_loop: in
  one chunk; chunked, such loops are refused);
* a ``while`` loop whose exit the data decides (bgd_hyperopt's ``if abs(w) > 1e6: break``), or
  ``_lin_scan``'s doubling loop on a coefficient that is itself a Dask array: a trip count that is a value;
* a NumPy argument indexed by an index array the graph builds (NumPy's indexing computes the Dask index;
  gmm's ``mu[k]`` did, until gmm ran chunk by chunk);
* ``int()`` of a reduced value;
* the number of lanes a branch selects, where a shape needs it (an ``arange`` of it: hmc_like_potential's sum
  over ``j`` inside a branch on ``y[i]``): the mask's count per block, computed once (``lower/dask_xp.py``,
  ``lane_counts``), and ``f.chunking`` says so.  Where no shape needs it, the size stays unknown and lazy:
  ``full`` and ``zeros`` of it are the lanes' own (``LaneCount``).

The lists are exact: ``tests/dask/test_dask_corpus.py`` (``EAGER``) and ``test_dask_kernels.py`` fail if an
entry starts or stops computing while its graph is built; ``test_dask_lazy.py`` runs the entries made lazy
under a scheduler that fails at the first such compute.  The kernels whose loops run over records
(piecewise_sum, logreg_nll, black_scholes, the options, hmc) never had any.
"""

from __future__ import annotations

import dataclasses
import sys

from coarsen_nb.backends import DASK
from coarsen_nb.errors import CoarsenError
from coarsen_nb.specialize import Compiled, OnBackend, Request, compile_signature


def is_dask(value) -> bool:
    """Whether ``value`` is a Dask array (imports nothing: no Dask array exists before dask.array is imported)."""
    da = sys.modules.get(DASK.xp_module)
    return da is not None and isinstance(value, da.Array)


def wanted(backend: str, args: tuple) -> bool:
    """Whether a call with ``args`` runs the dask module: ``backend="dask"``, or a Dask argument."""
    return backend == DASK.name or (DASK.xp_module in sys.modules and any(is_dask(a) for a in args))


def specialize(f: Request, sig: tuple, args: tuple, cache: dict) -> Compiled:
    """The dask specialization of ``f`` for ``args`` (compiled on the first call with ``sig``, then from
    ``cache``), after checking that every loop run iteration by iteration can run over their chunks."""
    key = (DASK.name, sig)
    hit = cache.get(key)
    if hit is None:
        hit = _compile(f, sig, cache)
        cache[key] = hit
    if hit.missing is None:
        # (dask_limits reads the plan: SymPy, imported on use, never on a call without a Dask argument)
        from coarsen_nb.dask_limits import check_chunks

        check_chunks(f, hit.forward.iterated_reads, args)
    return hit


def _compile(f: Request, sig: tuple, cache: dict) -> Compiled:
    c = compile_signature(OnBackend(f, DASK.name), sig)
    if c.missing is not None:
        return c
    from coarsen_nb.dask_limits import iterated_reads

    reads = iterated_reads(c.plan, f.params)
    chunkwise = _chunkwise(f, sig, c, cache)
    calls = _Calls()            # (one for the entries: f.chunking is the last call's, whichever entry ran)
    run = {name: _Run(getattr(c, name), name, f.params, c.wrt, reads, chunkwise, calls)
           if getattr(c, name) is not None else None for name in ("forward", "vjp", "grad", "jvp")}
    kinds = {"forward": "value", "vjp": "vjp", "grad": "grad", "jvp": "jvp"}    # (Compiled.entries' keys)
    return dataclasses.replace(c, entries={kinds[name]: fn for name, fn in run.items()})


def _chunkwise(f: Request, sig: tuple, c: Compiled, cache: dict):
    """How the dask module's entries run chunk by chunk where the function is a sum over its records
    (:mod:`coarsen_nb.dask_chunk_sums`): a :class:`~coarsen_nb.dask_chunk_runs.ChunkSchedule` of the
    function's own in-memory module (numba's where its backend is numba, the default; else NumPy's), or
    the :class:`~coarsen_nb.dask_chunk_sums.Refusal` saying why not (then the dask module runs)."""
    from coarsen_nb import backends
    from coarsen_nb.dask_chunk_runs import ChunkModule, ChunkSchedule
    from coarsen_nb.dask_chunk_sums import Refusal, chunk_sum

    source = f.front_source.text            # (a refusal spells an index as the user wrote it)
    forms = chunk_sum(c.plan, f.params, source)
    if isinstance(forms, Refusal):
        return forms
    own = f.backend in (backends.NUMPY.name, backends.NUMBA.name)
    name = f.backend if own else backends.resolve(backends.AUTO)
    name = name if name in (backends.NUMPY.name, backends.NUMBA.name) else backends.NUMPY.name
    memory = cache.get(sig) if own else None
    if memory is None:
        memory = compile_signature(OnBackend(f, name), sig)
        if own and memory.missing is None:
            cache[sig] = memory
    if memory.missing is not None:
        return Refusal(f"its {name} module cannot be loaded here ({memory.missing})")
    forms = chunk_sum(memory.plan, f.params, source)     # (the plan of the code each chunk runs)
    if isinstance(forms, Refusal):
        return forms
    module = ChunkModule(name, memory.parts, f"coarsen_nb_generated_{f.name}", f.name)
    told = tuple(_told(f, memory, name, form) if form.indices or form.counted else None for form in forms)
    return ChunkSchedule(forms, f.params, c.wrt, module, told if any(told) else ())


def _told(f: Request, memory: Compiled, backend: str, form):
    """The chunks' module of ``form``, whose sums read their index as ``k + start``: ``start`` the global index
    of the block's first row, a new parameter, and, where its terms read the number of records, that number
    another (:mod:`coarsen_nb.dask_chunk_index`); printed from the in-memory module's plan by the same writer,
    for the same backend."""
    from coarsen_nb import backends
    from coarsen_nb.dask_chunk_index import RECORDS, shifted_plan, start_name
    from coarsen_nb.dask_chunk_runs import ChunkModule
    from coarsen_nb.lower.module import ModuleWriter

    header = (f"Generated by coarsen_nb from {f.name}() for its Dask chunks: {start_name(memory.plan)} is the "
              f"global index of a block's first record"
              + (f", {start_name(memory.plan, RECORDS)} the number of records of the call." if form.counted else
                 "."))
    plan = shifted_plan(memory.plan, form.indices, form.counted, form.sums)
    writer = ModuleWriter(plan, memory.wrt, backends.get(backend), header)
    writer.source()
    return ChunkModule(backend, writer.parts, f"coarsen_nb_generated_{f.name}_chunks", f.name)


def chunking(c: Compiled):
    """How the last call of the dask specialization ``c`` was chunked (a
    :class:`~coarsen_nb.dask_chunking.Chunking`); None where ``c`` is not one, or its last call failed."""
    calls = getattr(c.forward, "calls", None)
    return calls.last if calls is not None else None


class _Calls:
    """The :class:`~coarsen_nb.dask_chunking.Chunking` of the last call of a dask specialization's entries."""

    last = None


class _Run:
    """One entry function of a dask module, called as the runtime calls it: the graph built, then shaped
    as the module docstring says (Dask gradients with their argument's chunks, the rest computed)."""

    def __init__(self, fn, kind: str, params: tuple[str, ...], wrt: tuple[str, ...],
                 iterated_reads: tuple,          # (dask_limits.IteratedRead records)
                 chunkwise=None,                 # a dask_chunk_runs.ChunkSchedule, or the Refusal saying why not
                 calls: _Calls | None = None):
        self.fn, self.kind, self.params, self.wrt = fn, kind, params, wrt
        self.iterated_reads = iterated_reads
        self.chunkwise = chunkwise
        self.calls = calls if calls is not None else _Calls()
        self.__name__ = getattr(fn, "__name__", kind)

    def __call__(self, *args):
        self.calls.last = None
        try:
            return self._shaped(args)
        except RecursionError as exc:     # Dask orders and optimizes a graph recursively
            raise CoarsenError(self.__name__, message="the Dask graph is too deep for Dask to schedule: a loop run "
                               "iteration by iteration over Dask arrays adds a chain of operations per step",
                               hint="call it with NumPy arrays, or on fewer steps") from exc

    def chunk_refusal(self, args) -> str:
        """Why the call with ``args`` does not run chunk by chunk through the in-memory module (empty: it does)."""
        if not hasattr(self.chunkwise, "call"):
            return str(self.chunkwise or "it was not scheduled")
        if self.kind == "jvp":
            return "a JVP is not scheduled chunk by chunk"
        return self.chunkwise.refusal(args, is_dask, self.kind)

    def _shaped(self, args):
        refusal = self.chunk_refusal(args)
        early = _computed_early(self.fn) if refusal else None
        if early is not None:
            early.clear()
        out = self.fn(*args) if refusal else self.chunkwise.call(self.kind, args)
        primal = args[:len(self.params)]
        pending: list = []
        if self.kind == "forward":
            shaped = self._value(out, pending)
        elif self.kind == "grad":
            shaped = self._grads(out, primal, pending)
        elif self.kind == "vjp":
            shaped = (self._value(out[0], pending), self._grads(out[1], primal, pending))
        else:                                                   # jvp: (value, directional derivative)
            shaped = (self._value(out[0], pending), self._value(out[1], pending))
        # (read from the arguments' chunks and the lazy graph: nothing computed; dask_chunking imported here,
        # on a Dask call, not by every process that imports the runtime: 9 ms of a cold numba start)
        from coarsen_nb.dask_chunking import describe

        self.calls.last = describe(self.kind, self.params, primal, _collections(shaped),
                                   None if refusal else self.chunkwise, refusal, is_dask, tuple(early or ()))
        if not pending:
            return shaped
        import dask

        try:
            values = dask.compute(*pending)
        except (ArithmeticError, ValueError) as exc:
            raise _computed_error(self.__name__.removesuffix(f"_{self.kind}").removesuffix("_vjp"), exc) from exc
        computed = dict(zip((id(p) for p in pending), values, strict=True))
        return _replace(shaped, computed)

    def _value(self, v, pending: list):
        """A value: computed where it is a scalar (kept lazy where it is an array); tuples element by element."""
        if isinstance(v, tuple):
            return tuple(self._value(e, pending) for e in v)
        if is_dask(v) and v.ndim == 0:
            pending.append(v)
        return v

    def _grads(self, grads: tuple, primal: tuple, pending: list) -> tuple:
        out = []
        for name, g in zip(self.wrt, grads, strict=True):
            a = primal[self.params.index(name)]
            if is_dask(a):
                import dask.array as da

                g = da.asarray(g, dtype=g.dtype if hasattr(g, "dtype") else float)
                g = da.broadcast_to(g, a.shape).rechunk(a.chunks)
            elif is_dask(g):
                pending.append(g)
            out.append(g)
        return tuple(out)


def _computed_early(fn) -> list | None:
    """The dask module's record of what its call computed while building the graph (``xp.computed_early``:
    the lanes' counts, ``lower/dask_xp.lane_counts``), which ``f.chunking`` says; None where ``fn`` has none."""
    space = getattr(fn, "__globals__", {}).get("xp")
    early = getattr(space, "computed_early", None)
    return early if isinstance(early, list) else None


def _computed_error(name: str, exc: Exception) -> CoarsenError:
    """The error a lazy scalar function raised when the result was computed (``math.log`` of a reduced value
    that is 0, ``math.exp`` overflowing: Python's own function, run in the graph's task, raises as the plain
    function would, but at return rather than at the user's line), in words, still of the Python type."""
    from coarsen_nb.error_kinds import coarsen_error_as

    return coarsen_error_as(type(exc))(
        name, message=f"{name}() raised {type(exc).__name__}: {exc}, when its Dask result was computed",
        hint="a math function of a value reduced over the Dask arrays runs lazily in the graph; call it on NumPy "
             "arrays (np.asarray of the arguments) to see the line")


def _collections(shaped) -> list:
    """The Dask arrays among ``shaped`` (a result, or a tuple of them), before any is computed."""
    if isinstance(shaped, tuple):
        return [c for e in shaped for c in _collections(e)]
    return [shaped] if is_dask(shaped) else []


def _replace(shaped, computed: dict):
    """``shaped`` with each pending Dask array replaced by its computed value."""
    if isinstance(shaped, tuple):
        return tuple(_replace(e, computed) for e in shaped)
    return computed.get(id(shaped), shaped)
