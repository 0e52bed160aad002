"""One specialization of a compiled function: from the argument types to a loaded module.

:class:`~coarsen_nb.runtime.Coarsened` parses, builds SSA and gates once; everything after depends on the
argument types (scalar or array, rank) and runs here, once per *signature*: type inference, lifting, SOI
selection (with the named fallback to a finer selection), differentiation, printing and loading the
generated module (registered with ``linecache`` under a real file name, so tracebacks and ``inspect``
show it).  :class:`Compiled` is what one specialization keeps.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import os
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from coarsen_nb import backends, entry_modules, module_parts, pipeline_cache
from coarsen_nb.collector_pause import collector_paused
from coarsen_nb.errors import CoarsenError, FallbackWarning, InternalCompilerError, NoSegmentForm
from coarsen_nb.phi.arg_types import T
from coarsen_nb.version import __version__

_counter = itertools.count(1)

#: The selections, in the words the options use.
SELECTION_NAMES = {"phi": "default (phi-calculus)", "block": "per-block", "operator": "operator-level (max_soi=1)"}


@dataclass
class Compiled:
    """One specialization: the plan, the generated source and its functions.

    ``plan`` and ``line_table`` are computed on first use where the module came from the pipeline cache
    (:mod:`coarsen_nb.pipeline_cache`): ``regenerate()`` runs the pipeline again for them.

    The entry functions (``forward``, ``vjp``, ``grad``, ``jvp``) are in ``entries`` by kind
    (:data:`~coarsen_nb.lower.module.ENTRY_KINDS`); where a kind is not there yet, ``load_entry(kind)`` prints,
    caches and loads its module then (a compiling backend's module of one entry, :mod:`coarsen_nb.entry_modules`),
    and ``whole()`` prints the module of every entry (``parts``: what ``source`` and export show) when first read."""

    signature: tuple
    filename: str
    wrt: tuple
    scalar_result: bool            # the function returns a scalar (grad is defined)
    missing: str | None = None     # why the module could not be loaded (e.g. CuPy absent)
    fallback: str | None = None    # why a finer selection than asked for was compiled (a NoSegmentForm limit)
    costs: dict = field(default_factory=dict)   # (shapes, ints) -> the cost model's Cost: f.cost lowers once
    regenerate: Callable[[], tuple] | None = field(default=None, repr=False)   # -> (plan, line table or None)
    whole: Callable[[], tuple] | None = field(default=None, repr=False)        # -> (parts, line table)
    load_entry: Callable[[str], object] | None = field(default=None, repr=False)   # kind -> its function
    entries: dict = field(default_factory=dict, repr=False)    # kind -> its loaded function (None: not defined)
    _parts: tuple | None = field(default=None, repr=False)     # the module's parts (coarsen_nb.module_parts)
    _plan: object = field(default=None, repr=False)
    _line_table: dict | None = field(default=None, repr=False)   # generated line -> its lowered-IR record

    @property
    def parts(self) -> tuple:
        """The generated module's parts, every entry function among them (``source`` joined)."""
        if self._parts is None:
            self._parts, self._line_table = self.whole()
        return self._parts

    @property
    def source(self) -> str:
        """The generated module's text (what ``export`` writes)."""
        return module_parts.joined(self.parts)

    @property
    def plan(self):
        if self._plan is None:
            self._plan, table = self.regenerate()
            if self._line_table is None and self.whole is None:
                self._line_table = table
        return self._plan

    @property
    def line_table(self) -> dict:
        """Generated line -> its lowered-IR record (call_errors)."""
        if self._line_table is None:
            if self.whole is not None:
                self._parts, self._line_table = self.whole()
            else:
                self._plan, self._line_table = self.regenerate()
        return self._line_table

    def entry(self, kind: str):
        """The entry function of ``kind`` (None where the module defines none: ``grad`` of a function that does
        not return a scalar), loaded on first use."""
        if kind not in self.entries:
            self.entries[kind] = self.load_entry(kind) if self.load_entry is not None else None
        return self.entries[kind]

    def loaded(self, kind: str):
        """The entry function of ``kind`` if it is loaded already, else None (nothing is printed)."""
        return self.entries.get(kind)

    forward = property(lambda self: self.entry("value"), lambda self, fn: self.entries.__setitem__("value", fn))
    vjp = property(lambda self: self.entry("vjp"), lambda self, fn: self.entries.__setitem__("vjp", fn))
    grad = property(lambda self: self.entry("grad"), lambda self, fn: self.entries.__setitem__("grad", fn))
    jvp = property(lambda self: self.entry("jvp"), lambda self, fn: self.entries.__setitem__("jvp", fn))


class Request(Protocol):
    """What a specialization reads of the compiled function (:class:`~coarsen_nb.runtime.Coarsened`)."""

    name: str
    params: tuple
    wrt: tuple
    backend: str
    parallel: bool
    mode: str
    max_soi: object
    reuse: object
    gated_function: object  # the gated SSA function (the front end runs when this is first read)
    front_source: object   # the user's source (file name, first line)
    front_key: str | None  # a digest of the front end's result from its inputs (None: the gated text is the key)


@dataclass(frozen=True)
class OnBackend:
    """The request ``f`` with another ``backend``: what a call compiles where its arguments choose the module
    (a Dask argument the dask module, a CuPy argument the cupy one, a Dask chunk the in-memory one)."""

    f: Request
    backend: str

    def __getattr__(self, name):
        return getattr(self.f, name)


def compile_signature(f: Request, sig: tuple[T, ...], entry: str | None = None) -> Compiled:
    """Compile ``f`` for the argument types ``sig``: infer the types, then lift, select, differentiate and
    print at the asked selection, or at the next finer one where a segment has no form there (a
    :class:`NoSegmentForm` limit, said in a :class:`FallbackWarning`), and load the module.

    ``entry``: the kind of entry function the call needs (:data:`~coarsen_nb.lower.module.ENTRY_KINDS`); a
    compiling backend (numba) then prints, caches and loads that entry's module alone, and each other kind on
    its first use (:mod:`coarsen_nb.entry_modules`).  None: the module of every entry, as any other backend.

    A module found in the pipeline cache is loaded without any of that: the cache holds only modules
    whose inference and checks passed for the same inputs, and nothing here imports SymPy before a miss.
    The whole of it runs with Python's cyclic collector paused (:mod:`coarsen_nb.collector_pause`)."""
    with collector_paused():
        return _compile_signature(f, sig, entry)


def _compile_signature(f: Request, sig: tuple[T, ...], entry: str | None) -> Compiled:
    """:func:`compile_signature`'s work."""
    wrt = f.wrt or tuple(p for p, t in zip(f.params, sig, strict=True) if t.kind == "float")
    reuse = DEFAULT_REUSE if f.reuse is None else f.reuse
    backend = backends.get(f.backend, f.parallel)
    kinds = (entry,) if entry is not None and backend.compiles else None    # (None: every entry)
    # A segment with no form at this selection (a documented limit, NoSegmentForm) falls back to a
    # finer selection, and says so.  Any other exception is a bug in coarsen_nb: reported as one,
    # never hidden behind a fallback (never a wrong gradient, never a bare internal traceback).
    limits: list[str] = []
    signature = ", ".join(f"{p}: {t}" for p, t in zip(f.params, sig, strict=True))

    def header(mode: str) -> str:
        return (f"Generated by coarsen_nb {__version__} from {f.name}() "
                f"({f.front_source.filename or 'source text'}, line {f.front_source.first_line}).\n\n"
                f"Options: backend={f.backend}{', parallel=True' if backend.parallel else ''}, mode={mode}, "
                f"max_soi={f.max_soi if mode == f.mode else None}, reuse={reuse}, "
                f"wrt={', '.join(wrt) or '-'}.\nSignature: {signature}."
                f"\nStandalone: needs only {backend.needs}.")

    def key_of(kinds) -> str | None:
        return _cache_key(f, sig, wrt, reuse, kinds) if pipeline_cache.enabled() else None

    cache_key = key_of(kinds)
    hit = pipeline_cache.load(cache_key) if cache_key else None
    if hit is not None:            # the module of an earlier process: nothing lifted or printed now
        mode, parts, fallback, generated = hit.mode, hit.parts, hit.fallback, None
    else:
        types = _checked_types(f, sig, wrt)
        if cache_key:        # (the front end has run now: a global it read may have changed since f was made)
            cache_key = key_of(kinds)
        for mode in SELECTIONS[SELECTIONS.index(f.mode):]:
            try:
                generated = _generate(f, types, wrt, mode, reuse, backend, header(mode), kinds)
                break
            except NoSegmentForm as limit:
                limits.append(str(limit))
        else:
            raise CoarsenError(f.name, message=f"{f.name}() has no symbolic form at any SOI selection: "
                               + "; ".join(limits), hint="rewrite the construct named above")
        parts = generated[1]
        fallback = None
        if mode != f.mode:
            fallback = (f"the {SELECTION_NAMES[f.mode]} selection has no form for {limits[0]}; "
                        f"using the {SELECTION_NAMES[mode]} selection instead (same values and gradients)")
    if fallback is not None:
        # stacklevel 6: the user's call (f(...), f.grad, retune) -> _specialize/_compile_like -> _compile ->
        # compile_signature -> here
        warnings.warn(FallbackWarning(f"coarsen_nb: {f.name}: {fallback}"), stacklevel=6)

    def regenerate():
        # the plan (and line table) of a module from the cache: the pipeline again, which must print the same text
        plan, again, table = _generate(f, _checked_types(f, sig, wrt), wrt, mode, reuse, backend, header(mode),
                                       kinds)
        if again != parts:
            pipeline_cache.discard(cache_key, "does not match what the compiler prints now")
        return plan, (table if kinds is None else None)

    def new_filename() -> str:
        # the name a loaded module's code gets (tracebacks, linecache): one per module
        return os.path.join(tempfile.gettempdir(), f"coarsen_nb_{f.name}_{next(_counter)}.py")

    filename = new_filename()
    compiled = Compiled(sig, filename, wrt, fallback=fallback, regenerate=regenerate,
                        scalar_result=hit.scalar_result if hit is not None else _returns_scalar(generated[0]))
    if generated is not None:
        compiled._plan = generated[0]
        if kinds is None:
            compiled._line_table = generated[2]
    if kinds is None:
        compiled._parts = parts

    def numpy_module():
        # what a compiled backend (numba) runs where it cannot compile a function, and re-runs
        # to name the user's line of an error raised inside compiled code
        from coarsen_nb.lower.module import ModuleWriter

        writer = ModuleWriter(compiled.plan, wrt, backends.NUMPY, header(mode))
        numpy_source, numpy_file = writer.source(), new_filename()
        return backends.NUMPY.load(writer.parts, numpy_file, f"coarsen_nb_generated_{f.name}"), \
            (numpy_source, numpy_file, writer.line_table())

    def printed(more: tuple | None):
        # ``(selection, (plan, parts, line table))`` of the module of the entries ``more`` (None: every entry),
        # printed from the plan: at this selection, or (a limit only these entries meet) at a finer one, said
        # as at the first call (a module of one entry: coarsen_nb.entry_modules)
        for finer in SELECTIONS[SELECTIONS.index(mode):]:
            try:      # (at this selection the plan is there; a finer one is lifted from the types)
                plan = compiled.plan if finer == mode else None
                types = None if plan is not None else _checked_types(f, sig, wrt)
                return finer, _generate(f, types, wrt, finer, reuse, backend, header(finer), more, plan=plan)
            except NoSegmentForm as limit:
                warnings.warn(FallbackWarning(f"coarsen_nb: {f.name}: the {SELECTION_NAMES[finer]} selection has "
                                              f"no form for {limit}; trying a finer one (same values and "
                                              "gradients)"), stacklevel=5)
        raise CoarsenError(f.name, message=f"{f.name}() has no symbolic form at any SOI selection",
                           hint="rewrite the construct named above")

    if kinds is not None:
        compiled.whole = lambda: printed(None)[1][1:]
    numpy_module = functools.cache(numpy_module)     # (one NumPy module for every entry module)
    names = entry_modules.entry_names(f.name, kinds)
    try:
        env = backend.load(parts, filename, f"coarsen_nb_generated_{f.name}", names, numpy_module)
    except SyntaxError as exc:
        raise InternalCompilerError(f.name, "compiling the generated module", exc) from exc
    except ImportError as exc:
        # e.g. backend="cupy" without CuPy: the source is still there to read and export.
        compiled.missing = str(exc)
        return compiled
    required = entry_modules.required_names(f.name, kinds)
    if not all(name in env for name in required):
        raise InternalCompilerError(f.name, "loading the generated module",
                                    KeyError(f"{' or '.join(required)} is not defined by it"))
    compiled.entries.update(entry_modules.loaded(env, f.name, kinds))
    if cache_key and hit is None:
        pipeline_cache.store(cache_key, pipeline_cache.Entry(parts, mode, fallback, compiled.scalar_result))
    if kinds is not None:
        def load_entry(kind: str):
            return entry_modules.load_entry(kind, f.name, compiled.scalar_result, key_of((kind,)), mode, fallback,
                                            printed, lambda entry_parts, more: backend.load(
                                                entry_parts, new_filename(), f"coarsen_nb_generated_{f.name}",
                                                more, numpy_module))

        compiled.load_entry = load_entry
    return compiled


#: The selections, finest last: a segment with no form at one falls back to the next.
SELECTIONS = ("phi", "block", "operator")


#: ``coarsen_nb.soi.select.DEFAULT_REUSE``, here without importing SOI selection (and SymPy) on a cache hit;
#: a test checks that they agree.
DEFAULT_REUSE = 1


def _checked_types(f: Request, sig: tuple[T, ...], wrt: tuple) -> dict:
    """The type of every name of ``f`` at ``sig``, after the checks that refuse a signature (an index of a
    scalar, a ``wrt`` parameter that is not a float)."""
    from coarsen_nb.phi import scalar_uses
    from coarsen_nb.phi.types import infer

    try:
        scalar_uses.check_indexing(f.gated_function, sig)
        types = infer(f.gated_function, sig)
        scalar_uses.check(f.gated_function, types)
    except CoarsenError:
        raise
    except Exception as exc:
        raise InternalCompilerError(f.name, "type inference", exc) from exc
    for w in wrt:
        t = types[w]
        if t.kind != "float":
            raise CoarsenError(w, message=f"cannot differentiate with respect to {w!r}: it is {t}",
                               hint="pass a float (e.g. 2.0 instead of 2) or leave it out of wrt")
    return types


def _cache_key(f: Request, sig: tuple, wrt: tuple, reuse, kinds: tuple | None = None) -> str:
    """The pipeline-cache key of ``f`` at ``sig``: everything that affects its generated module (``kinds``: the
    entry functions of a module of some entries only, :mod:`coarsen_nb.entry_modules`)."""
    front = f.front_key
    if front is None:            # (the front end's inputs are not all known: what it resolved is)
        src = f.front_source
        front = hashlib.sha256(json.dumps([f.name, src.text, src.filename, src.first_line,
                                           str(f.gated_function)]).encode()).hexdigest()
    return pipeline_cache.key(front=front, signature=repr(sig),
                              options=dict(backend=f.backend, mode=f.mode, max_soi=f.max_soi, reuse=reuse, wrt=wrt,
                                           **({"parallel": True} if f.parallel else {}),
                                           **({"entries": kinds} if kinds is not None else {})))


def _returns_scalar(plan) -> bool:
    t = plan.types.get("$result")
    return t is not None and t.kind in ("float", "int", "bool") and t.ndim == 0


def _generate(f: Request, types, wrt, mode: str, reuse, backend, header: str, kinds: tuple | None = None,
              plan=None):
    """Lift, select, differentiate and print at one selection: ``(plan, the module's parts, line table)``
    (:mod:`coarsen_nb.module_parts`).  ``kinds``: the entry functions to print (None: every one); ``plan``: the
    plan lifted and selected at ``mode`` already (only printed then).

    Raises :class:`NoSegmentForm` for a documented limit and :class:`InternalCompilerError` for
    anything else that goes wrong inside the compiler.
    """
    from coarsen_nb.lower.module import ModuleWriter
    from coarsen_nb.phi.lift import check_defined, lift
    from coarsen_nb.soi.select import number_kernels, prune

    stage = "lifting"
    try:
        if plan is None:
            plan = lift(f.gated_function, types, mode, f.max_soi if mode == f.mode else None, reuse,
                        lanes=backend.lanes)
            stage = "SOI selection"
            prune(plan)
            number_kernels(plan)
            check_defined(plan)
        stage = "lowering"
        writer = ModuleWriter(plan, wrt, backend, header)
        writer.source(kinds)
        return plan, writer.parts, writer.line_table()
    except (CoarsenError, NoSegmentForm):
        raise
    except RecursionError as exc:
        raise NoSegmentForm("too-deep", f"while {stage}") from exc
    except Exception as exc:
        raise InternalCompilerError(f.name, f"{stage}, {mode} selection", exc) from exc

