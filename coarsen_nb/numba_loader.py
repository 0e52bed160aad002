"""Loading a generated module for ``backend="numba"``: every function compiled by Numba, cached on disk.

The numba backend prints the same module as the NumPy backend, with each entry point decorated
``@_jit`` (``numba.njit(cache=True, boundscheck=True)``, without the cfunc wrapper), each helper and loop
function without Numba's wrappers for Python and C too (``@_jit_helper``, ``@_jit_loop``: only compiled
code calls them, and Numba lowers and optimizes both wrappers for every function it compiles), and
without the ``del`` lines that free temporaries early (Numba's reference counting frees them, and ``del``
is not in its subset).
What this buys is compiled *control flow*: an iterated loop, its tape of states and the scalar
glue between SOIs run as machine code instead of interpreted Python, and Numba's array-expression
pass fuses each elementwise statement into one loop.

**The file is the cache key.**  Numba caches a compiled function beside its source file, keyed
by the file's stamp and the argument types.  The source is written once to
``COARSEN_NB_CACHE`` (default ``~/.cache/coarsen_nb``) under the hash of its text, and never
rewritten, so a second process (a restarted kernel) that generates the same module finds
Numba's cache warm.  Everything that affects the compiled code is in the text (the header names
the options and the signature), and Numba's own index adds its version and the CPU.

**The ``xp`` namespace is loaded once.**  Every generated module's text carries the ``xp`` namespace
(``Backend.prologue``: ``lower/numba_xp*.py``), so that an exported module needs nothing else.  The
file this loader writes replaces that text with the names of one shared module holding it
(:func:`_sharing`): its ``@overload`` implementations are compiled once per process instead of once per
generated module, and cached on disk beside the shared file, once per machine.

**A callee is code-generated once, inside its caller.**  An entry point is compiled with every library
Numba makes lazy (:mod:`coarsen_nb.numba_lazy_callees`): a loop function or helper without wrappers is
optimized and turned into machine code only inside the entry point that links it, not on its own first;
and an ``@overload`` implementation is compiled once for the flag sets it cannot tell apart
(:mod:`coarsen_nb.numba_overload_sharing`).  The loop functions are not cached: a cached entry point needs
none of them.

**Compiling is announced.**  :func:`on_compile` listeners hear when Numba begins and ends compiling an
entry point (the notebook's "compiling …" line, :mod:`coarsen_nb.notebook.status`).

**Named fallback.**  A function Numba cannot compile (a NumPy call outside Numba's subset: the
``numba.core.errors.NumbaError`` raised when it types the function on the first call) runs as the
NumPy backend's code for the same plan, and says so with a :class:`NumbaFallbackWarning` naming
the construct.  No other exception leads there.

**The bounds-checked twins are compiled only when needed.**  A loop whose subscripts tests before it prove
in bounds runs without Numba's bounds checks, and calls its checked twin where a test fails
(:mod:`coarsen_nb.lower.numba_bounds`).  The module loaded first says not to (its flag false: Numba never
compiles the twins, 30-45% of such a loop's compile), and such a loop raises the named signal there instead;
the entry point then switches, for good, to the same module with the twins (a second file, compiled on that
first call), and runs the call again from the start (a generated function never writes into its arguments).

**Errors keep the user's line.**  An exception raised inside compiled code has no Python frames
to point at, so the call is repeated on the NumPy code, whose traceback the runtime maps to the
user's line as it does for the NumPy backend.  ``boundscheck=True`` makes an index out of range
an ``IndexError`` as in NumPy (Numba's default reads past the array).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import inspect
import linecache
import marshal
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, ModuleType

from coarsen_nb.collector_pause import collector_paused
from coarsen_nb.module_parts import CARRIED, SHARED_HELPER, Part, joined, lines_of
from coarsen_nb.numba_blas_probe import deferred_blas_import
from coarsen_nb.numba_cache_hits import cache_loads_without_refresh
from coarsen_nb.numba_lazy_callees import lazy_callee_libraries
from coarsen_nb.numba_overload_sharing import overloads_shared_across_flags
from coarsen_nb.numba_plain_markup import markup_without_stream_wrapping


class NumbaFallbackWarning(UserWarning):
    """A generated function runs as NumPy code because Numba cannot compile it; the message names why."""


@dataclass(frozen=True)
class CompileEvent:
    """Numba begins (``seconds`` None) or ends compiling the entry point ``name`` for one argument signature;
    ``from_disk``: its machine code came from Numba's disk cache (nothing was compiled)."""

    name: str
    seconds: float | None = None
    from_disk: bool = False


_listeners: list[Callable[[CompileEvent], None]] = []


def on_compile(listener: Callable[[CompileEvent], None]) -> Callable[[], None]:
    """Tell ``listener`` when Numba begins and ends compiling an entry point (the notebook's "compiling …"
    line: a compile takes seconds, on the first call, where nothing else says why the call is slow).
    Returns the function that removes it."""
    _listeners.append(listener)
    return lambda: _listeners.remove(listener) if listener in _listeners else None


def _tell(event: CompileEvent) -> None:
    for listener in list(_listeners):
        listener(event)


def cache_dir() -> Path:
    """Where generated numba modules and Numba's cache of them live (``COARSEN_NB_CACHE`` overrides)."""
    from coarsen_nb.pipeline_cache import cache_root

    return cache_root() / "numba"


def module_file(source: str, module_name: str) -> Path:
    """The file holding ``source``: named by its hash, written once (atomically), never rewritten."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:24]
    path = cache_dir() / f"{module_name}_{digest}.py"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(source)
        os.replace(tmp, path)
    return path


def load(parts: tuple, module_name: str, entry_points: tuple[str, ...],
         numpy_module: Callable[[], tuple[dict, tuple]]) -> dict:
    """The namespace of the numba module of ``parts`` (:mod:`coarsen_nb.module_parts`), its entry points
    wrapped in :class:`JitFunction`.

    ``numpy_module()`` gives ``(namespace, (source, filename, line table))`` of the NumPy backend's module for the
    same plan; it is built only when a function falls back or raises.  The text every module carries
    (``Backend.prologue``) and the shared helpers are loaded from one shared module instead (:func:`_sharing`).
    Raises ``ImportError`` when Numba is not installed.
    """
    import numba  # noqa: F401 (ImportError here: the runtime reports the backend's install hint)

    from coarsen_nb.lower.numba_bounds import BOUNDS_SIGNAL
    from coarsen_nb.malloc_policy import keep_freed_memory

    keep_freed_memory()     # (Numba's temporaries: no page faults on every call, malloc_policy.py)

    module = _module(_sharing(parts, twins=False), module_name)
    env = dict(module.__dict__)
    numpy = functools.cache(numpy_module)          # (built on first use, once for all entry points)
    # (the same module with the bounds-checked twins, loaded the first time a loop's tests fail)
    with_twins = functools.cache(lambda: _module(_sharing(parts, twins=True), module_name).__dict__)
    signal = env.get(BOUNDS_SIGNAL, _NoSignal)
    for name in entry_points:
        if name in env:
            env[name] = JitFunction(name, env[name], numpy, _Twins(signal, with_twins))
    return env


class _NoSignal(Exception):
    """(A module that carries no ``xp`` namespace has no in-bounds loops, and no signal: nothing raises this.)"""


@dataclass(frozen=True)
class _Twins:
    """What an entry point needs where an in-bounds loop's tests fail: the ``signal`` it raises then, and the
    namespace of the same module with the bounds-checked twins (``namespace()``, loaded on first use)."""

    signal: type
    namespace: Callable[[], dict]


#: held while a module is written and executed: a module is in ``sys.modules`` before its body has run, and
#: its file and bytecode are written through temporary files named by the process; threads of one process
#: loading at once (Dask's threaded scheduler running a chunk module's first chunks) would otherwise take a
#: module half executed (a NameError, a KeyError for an entry point) or move each other's temporary file away
_LOADING = threading.RLock()


def _module(source: str, module_name: str) -> ModuleType:
    """``source`` as a real module in ``sys.modules``, named by its file (written once under the hash of its
    text; registered with ``linecache``): Numba's cache rebuilds a compiled function's environment by
    importing its module's name, and finds its machine code beside the file."""
    with _LOADING:
        path = module_file(source, module_name)
        filename = str(path)
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        module = sys.modules.get(path.stem)
        if module is None or getattr(module, "__file__", None) != filename:
            code = _bytecode(source, path)
            module = ModuleType(path.stem)
            module.__file__ = filename
            sys.modules[path.stem] = module
            try:
                exec(code, module.__dict__)
            except BaseException:
                del sys.modules[path.stem]
                raise
        return module


def _bytecode(source: str, path: Path) -> CodeType:
    """``source`` compiled under the name of its file ``path``, kept beside it (``<stem>.<cache tag>.code``)
    so that a restarted kernel does not compile the shared module's 50 kB of text again: 30 ms of a warm
    start that should take 0.5 s.  The file is named by the hash of the text and never rewritten, so the
    bytecode is stale only under another Python (another cache tag, or another magic number: compiled anew).
    Kept by coarsen_nb rather than by Python's ``__pycache__`` because ``PYTHONDONTWRITEBYTECODE``, which
    stops that, is about the user's source, not about a cache of generated code."""
    kept = path.with_name(f"{path.stem}.{sys.implementation.cache_tag}.code")
    magic = importlib.util.MAGIC_NUMBER
    try:
        data = kept.read_bytes()
        if data.startswith(magic):
            code = marshal.loads(data[len(magic):])
            if isinstance(code, CodeType) and code.co_filename == str(path):
                return code
    except (OSError, ValueError, EOFError, TypeError):
        pass
    code = compile(source, str(path), "exec")
    try:
        tmp = kept.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(magic + marshal.dumps(code))
        os.replace(tmp, kept)
    except OSError:
        pass
    return code


def _sharing(parts: tuple, twins: bool = True) -> str:
    """The text to load for a generated numba module: its parts, with the ``xp`` namespace it carries
    (``Backend.prologue``, the text of ``lower/numba_xp*.py``, the part of role ``CARRIED``) and the numba
    backend's own helpers it carries (``lower/numba_helpers.py``: ``_take``, ``_put``, ``_scatter_add``,
    ``_sum_to``, ..., the parts of role ``SHARED_HELPER``) replaced by the names of one module holding that
    text, loaded once per process from a file of its own.

    Why: each copy of the prologue registers its ``@overload`` stubs anew, and Numba compiles a stub's
    implementation once per stub, so every generated module compiled them all again, and the prologue's
    ``cache=True`` helpers were cached beside each module.  One shared module compiles each once per
    process, and its compilations (``jit_options`` ``cache=True``) are cached beside its file, once per
    machine.  The helpers likewise: a helper pasted into each module was compiled for each module (gmm's
    ``_take``, ``_put`` and ``_scatter_add``: ~1 s of its cold compile), one in the shared module once per
    machine and argument types.  The module writer marks a helper shared only where it printed the table's
    text and decorator (a fuser that decorates one otherwise keeps its own).  An exported module
    (``f.source``) still carries the whole text; the loaded file keeps its line numbers (blank lines where
    the text was), so tracebacks and the line table agree with it.

    ``twins``: False sets the carried flag :data:`~coarsen_nb.lower.numba_bounds.TWINS_FLAG` false on the
    line after that one: the in-bounds loops raise the signal instead of calling their bounds-checked twins,
    which Numba then never compiles (another text: another file, cached apart)."""
    from coarsen_nb.lower.numba_bounds import TWINS_FLAG

    carried = next((p.text for p in parts if p.role == CARRIED), None)
    if carried is None:
        return joined(parts)
    shared = shared_module(carried)
    line = (f"globals().update({{_k: _v for _k, _v in vars(__import__({shared.__name__!r})).items()"
            f" if not _k.startswith('__')}})")
    if not twins:
        line += f"\n{TWINS_FLAG} = False"
    return joined(Part(p.role, line + "\n" * (lines_of(p) - 1 - line.count("\n"))) if p.role == CARRIED
                  else Part(p.role, "\n" * (lines_of(p) - 1)) if p.role == SHARED_HELPER else p for p in parts)


def shared_module(carried: str) -> ModuleType:
    """The module shared by the generated modules that carry the text ``carried`` (``Backend.prologue``):
    that text and the numba backend's own helpers (``lower/numba_helpers.py``), loaded once per process from
    its file in :func:`cache_dir`, beside which Numba caches what it compiles of them (:func:`_sharing`)."""
    from coarsen_nb.lower.numba_helpers import shared_blocks

    # (``import math`` for the helpers that read it, ``_exp``'s ``math.inf``: a generated module imports it
    # where its own code reads it, the shared module has no code of its own to say so)
    return _module("import math\n\n" + carried + "\n\n\n" + "\n\n\n".join(shared_blocks()) + "\n", "coarsen_nb_xp")


#: One explicit compile at a time, in the whole process: another thread's compile of the same dispatcher
#: (Dask's threaded scheduler calls an entry point from several threads at once; two specializations made at
#: once share the loaded module) re-enabled and disabled its compiling around this one's, which then failed
#: ("compilation disabled") and fell back to NumPy code for good.  Numba compiles one function at a time anyway.
_COMPILING = threading.Lock()


class JitFunction:
    """One entry point (``f``, ``f_vjp``, ``f_grad``, ``f_jvp``): the compiled function, or the NumPy
    backend's where Numba cannot compile it (``fallback`` says why)."""

    def __init__(self, name: str, dispatcher, numpy: Callable[[], tuple[dict, tuple]], twins: _Twins | None = None):
        self.name = name
        self.dispatcher = dispatcher
        self._numpy = numpy
        self._twins = twins             # None: this dispatcher is the module's with the twins
        parameters = inspect.signature(dispatcher.py_func).parameters.values()
        self._defaults = tuple(p.default for p in parameters if p.default is not inspect.Parameter.empty)
        self._arity = len(parameters)
        self._compiled: set = set()          # the argument types compiled for
        self.fallback: str | None = None

    def _python(self, args: tuple):
        """The NumPy code's result; an exception it raises says which module's lines it points at."""
        namespace, module = self._numpy()
        try:
            return namespace[self.name](*args)
        except Exception as exc:
            exc.generated_module = module          # (source, filename, line table)
            raise

    def __call__(self, *args):
        if self.fallback is not None:
            return self._python(args)
        missing = self._arity - len(args)
        if missing > 0:         # (the cotangent's default, passed explicitly: one compiled version)
            args = args + self._defaults[len(self._defaults) - missing:]
        if self._compiled:
            # Numba's own dispatch (in C) finds the version for these types: no typing of the arguments
            # here, which cost more than a small gradient (brachistochrone at 1000 points: 13 of 34 µs).
            # Compiling is disabled after each explicit compile, so types with no version raise here.
            try:
                return self.dispatcher(*args)
            except TypeError as exc:
                if not str(exc).startswith("No matching definition"):
                    return self._repeat_on_numpy(args, exc)
            except Exception as exc:
                return self._after(args, exc)
        if not self._compile(args):
            return self._python(args)
        try:
            return self.dispatcher(*args)
        except Exception as exc:
            return self._after(args, exc)

    def _after(self, args: tuple, exc: Exception):
        """The call that raised ``exc`` in compiled code: where an in-bounds loop's tests failed (the signal),
        run again on the module with the bounds-checked twins, from now on; else repeated on the NumPy code."""
        twins = self._twins
        if twins is None or not isinstance(exc, twins.signal):
            return self._repeat_on_numpy(args, exc)
        with _COMPILING:
            if self._twins is twins:        # (not switched meanwhile by another thread)
                self.dispatcher = twins.namespace()[self.name]
                self._compiled = set()
                self._twins = None
        return self(*args)

    def _repeat_on_numpy(self, args: tuple, exc: Exception):
        """An error raised by the compiled code, which has no Python frames to point at: repeat on the NumPy
        code, whose traceback names the line; should it not raise, the compiled code's error stands."""
        try:
            self._python(args)
        except Exception as again:
            raise again from None
        raise exc

    def _compile(self, args: tuple) -> bool:
        """Compile for the types of ``args`` once (False: Numba cannot, and the NumPy code runs from now on).

        Compiling explicitly, before the call, separates the two kinds of exception: one raised here
        is Numba's (a construct outside its subset; its errors are not all ``NumbaError``), one raised
        by the call is the program's."""
        import numba

        try:
            key = tuple(numba.typeof(a) for a in args)
        except ValueError as exc:        # an argument type Numba has no type for
            return self._give_up(exc)
        with _COMPILING:
            return key in self._compiled or self._compile_for(key)

    def _compile_for(self, key: tuple) -> bool:
        hits = sum(self.dispatcher.stats.cache_hits.values())
        _tell(CompileEvent(self.name))
        start = time.perf_counter()
        self.dispatcher.disable_compile(False)
        try:
            # (a warm process: 0.3 s less, numba_cache_hits; a cold one: no scipy.linalg where no BLAS is called)
            # (a cold one: each callee optimized and code-generated once, inside its caller, numba_lazy_callees;
            # an overload's implementation compiled once for the flag sets it cannot tell apart; Numba's
            # dropped error messages marked up without colorama's stream wrapping, numba_plain_markup)
            # (Numba's global compiler lock, reentrant, held around the patches too: another thread's compile
            # of its own function waits until they are undone, instead of running under them)
            from numba.core.compiler_lock import global_compiler_lock

            context = self.dispatcher.targetdescr.target_context
            # (Python's cyclic collector paused, coarsen_nb.collector_pause: Numba's typing and lowering allocate
            # millions of objects that live on, and its collections walked them: ~0.1 s of pendulum_batch's 1.5 s)
            with (global_compiler_lock, cache_loads_without_refresh(self.dispatcher), deferred_blas_import(context),
                  lazy_callee_libraries(context), overloads_shared_across_flags(), collector_paused(),
                  markup_without_stream_wrapping()):
                self.dispatcher.compile(key)
        except Exception as exc:
            return self._give_up(exc)
        finally:
            # (never compiled implicitly by a call: a Numba error there would look like the program's)
            if self.dispatcher.signatures:
                self.dispatcher.disable_compile(True)
            _tell(CompileEvent(self.name, time.perf_counter() - start,
                               sum(self.dispatcher.stats.cache_hits.values()) > hits))
        self._compiled.add(key)
        return True

    def _give_up(self, exc: Exception) -> bool:
        self.fallback = _first_line(exc)
        warnings.warn(NumbaFallbackWarning(
            f"coarsen_nb: {self.name} runs as NumPy code: Numba cannot compile it ({self.fallback})"),
            stacklevel=5)
        return False


def _first_line(exc: Exception) -> str:
    """Numba's message, its first meaningful line without terminal colours."""
    import re

    text = re.sub(r"\x1b\[[0-9;]*m| at 0x[0-9a-f]+", "", str(exc))
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    skip = ("Failed in ", "During: ", "File ", "<source", "^")
    useful = [ln for ln in lines if not ln.startswith(skip)]
    return (useful or lines or [type(exc).__name__])[0][:200]
