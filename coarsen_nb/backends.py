"""The backends, registered in one place.

A :class:`Backend` says everything the rest of coarsen_nb needs to know about
one value of the ``backend=`` option: the array module the generated code
imports as ``xp``, what a standalone module needs, the module-level lines that
follow the imports, what to say when the module cannot be loaded here, and
the *fuser* that prints an SOI as one fused kernel (CuPy's
ElementwiseKernel/ReductionKernel, :mod:`coarsen_nb.lower.cupy`) where the
plain array printer would print one statement per operation.

The module writer (:mod:`coarsen_nb.lower.module`) and the runtime ask the
record; neither compares backend names, so a new backend is one record here
plus its printer.  To load a generated module the runtime
asks :meth:`Backend.load` (the same for every backend today: compile under a
real file name and execute); an ``ImportError`` while loading (CuPy absent, or
too old) leaves the source readable and exportable, and
:attr:`Backend.install_hint` says what to install.
"""

from __future__ import annotations

import dataclasses
import functools
import linecache
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from coarsen_nb.errors import CoarsenError
from coarsen_nb.lower import numba_bounds
from coarsen_nb.module_parts import joined


@dataclass(frozen=True)
class Backend:
    """One backend: the facts the module writer, the runtime and the command line read."""

    name: str                          # the ``backend=`` option
    xp_module: str                     # imported as ``xp`` by the generated module
    needs: str                         # what a standalone generated module needs, for its header
    prologue: str = ""                 # module-level code right after the imports (when ``xp`` is used)
    load_fuser: Callable[[], ModuleType] | None = None   # the fuser's module, imported on first use
    loads_everywhere: bool = True      # False: the generated module may not load here (no GPU)
    install_hint: str = ""             # what to do when the module cannot be loaded here
    decorator: str = ""                # a line before every generated function (numba's ``@_jit``)
    frees_temporaries: bool = True     # ``del`` each temporary after its last use (not in Numba's subset)
    compiles: bool = False             # the functions are compiled on first call (numba): load via its loader
    load_helpers: Callable[[], dict] | None = None   # helper name -> this backend's source, where it has its own
    # helper name -> the decorator line of this backend's own helper, where not ``decorator``
    load_helper_decorators: Callable[[], dict] | None = None
    # the helpers (decorator line and text, as a module prints them) that the module shared by this backend's
    # generated modules defines, so that a module's loaded file leaves them out (numba: compiled once per
    # machine, numba_loader.py); the writer marks them (module_parts.SHARED_HELPER)
    load_shared_helpers: Callable[[], frozenset] | None = None
    # the module whose ``tape_for(writer, loop, in_place)`` gives an iterated loop's tape in this backend's
    # own form (numba: preallocated arrays, lower/numba_tape.py), or None there: the list of state tuples
    load_tape: Callable[[], ModuleType] | None = None
    # the module whose ``interchange_for(writer, loop)`` runs an iterated loop over whole arrays as each
    # element's steps on numbers where it may (numba: lower/numba_interchange.py), or None there
    load_interchange: Callable[[], ModuleType] | None = None
    # whether a loop nest over independent paths runs its outer iterations as lanes of arrays
    # (phi/batching.py): array code per inner step, which an array backend needs; a compiling backend runs
    # the user's nest as compiled loops, each path's steps on numbers and its tape a few numbers
    # (barrier_break 191 -> 26 ms under numba, 10^4 paths of 50 steps: notes/README.md)
    lanes: bool = True
    array_type: str = "ndarray"        # the array class of ``xp_module`` (dask.array's is ``Array``)
    # ``parallel=True``: the fused loops whose iterations are independent run on threads (numba's prange:
    # lower/numba_threads.py); a backend that can: :data:`PARALLEL_BACKENDS`
    parallel: bool = False
    # a choice between two names or numbers on one truth value (``if t2: choice = a else: choice = b``) is
    # printed ``choice = xp.where(t2, a, b)`` (lower/branches.py): dask's, where a Python ``if`` on a reduced
    # value would compute it while the graph is built
    where_choices: bool = False
    # the arrays are task graphs (dask): a statement computes nothing when it runs, and a number may be a lazy
    # 0-d array; the printer keeps both so (lower/dask_printing.py, FormPrinting.eager)
    lazy_graph: bool = False
    # a loop's max or min over an array (a nest's row, a range) keeps the first of equal zeros, as the user's loop
    # does: printed through the module's ``_loop_max`` (lower/extrema_helpers.py), where the namespace's own
    # ``xp.max`` keeps whichever zero its order meets last (NumPy's); numba's steps each row as the loop does
    extrema_first_zero: bool = True
    # the user's scalar divisions raise ZeroDivisionError at 0 though the code holds NumPy floats (a batched
    # sum): printed through ``_div`` (lower/division_checks.py); numba's entry points raise by their error model
    checked_division: bool = False
    # a reduction's value is a number (numba's ``np.sum`` of an array), not a 0-d array: an integer one adds
    # into a scalar float adjoint as it is, where a cast (``xp.asarray(t, dtype=xp.float64)``) would make the
    # 0-d array that numba adds into no float (lower/reverse.py ``_float_value``)
    numbers_of_reductions: bool = False

    @property
    def tape(self) -> ModuleType | None:
        """The module printing this backend's own tape of an iterated loop, or None (imported on use)."""
        return None if self.load_tape is None else self.load_tape()

    @property
    def shared_helpers(self) -> frozenset:
        """The helper blocks this backend's shared module defines (see ``load_shared_helpers``)."""
        return frozenset() if self.load_shared_helpers is None else self.load_shared_helpers()

    @property
    def fuser(self) -> ModuleType | None:
        """The module with ``forward_lines(writer, kernel)`` and ``reverse_lines(writer, kernel, v,
        leaves)``, or None: imported when a module is written, so that reading the registry (the
        command line's ``--help``, option checks) imports no SymPy."""
        return None if self.load_fuser is None else self.load_fuser()

    def load(self, parts: tuple, filename: str, module_name: str, entry_points: tuple[str, ...] = (),
             numpy_module=None) -> dict:
        """Load a generated module, given as its parts (:mod:`coarsen_nb.module_parts`): its namespace
        (``NAME``, ``NAME_vjp``, ...).

        Compiled from the real file name ``filename`` and registered with :mod:`linecache`, so
        tracebacks and ``inspect`` show the generated code.  Raises ``SyntaxError`` (a bug in the
        printer) and ``ImportError`` (the array module is absent or too old: see ``install_hint``).
        A compiling backend (numba) loads through :func:`coarsen_nb.numba_loader.load` instead: its
        file is named by the source's hash (Numba's disk cache lives beside it), ``entry_points`` are
        wrapped so that a function Numba cannot compile runs as ``numpy_module()``'s (a named
        fallback), and ``filename`` is not used.
        """
        if self.compiles:
            from coarsen_nb import numba_loader

            return numba_loader.load(parts, module_name, entry_points, numpy_module)
        source = joined(parts)
        code = compile(source, filename, "exec")
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        env: dict = {"__name__": module_name, "__file__": filename}
        exec(code, env)
        return env


def _numba_helpers() -> dict:
    from coarsen_nb.lower.numba_helpers import NUMBA_HELPERS

    return NUMBA_HELPERS


def _numba_helper_decorators() -> dict:
    from coarsen_nb.lower.numba_helpers import decorators

    return decorators()


@functools.cache
def _numba_shared_helpers() -> frozenset:
    from coarsen_nb.lower.numba_helpers import shared_blocks

    return frozenset(shared_blocks())


def _numba_fuser() -> ModuleType:
    from coarsen_nb.lower import numba_fusion

    return numba_fusion


def _numba_tape() -> ModuleType:
    from coarsen_nb.lower import numba_tape

    return numba_tape


def _numba_interchange() -> ModuleType:
    from coarsen_nb.lower import numba_interchange

    return numba_interchange


def _cupy_helpers() -> dict:
    from coarsen_nb.lower.cupy import OWN_HELPERS

    return OWN_HELPERS


def _cupy_fuser() -> ModuleType:
    from coarsen_nb.lower import cupy

    return cupy


# CuPy 13 lacks array-API names the generated code uses (cumulative_sum, cumulative_prod, concat, bool):
# the module says so on import instead of failing with an AttributeError inside a gradient.
_CUPY_VERSION_CHECK = '''if int(xp.__version__.split(".")[0]) < 14:
    raise ImportError(f"needs CuPy >= 14 (array-API functions such as cumulative_sum), found {xp.__version__}")'''

NUMPY = Backend("numpy", "numpy", "NumPy", checked_division=True)
CUPY = Backend("cupy", "cupy", "CuPy", prologue=_CUPY_VERSION_CHECK, load_fuser=_cupy_fuser, loads_everywhere=False,
               load_helpers=_cupy_helpers,
               install_hint="install CuPy on a machine with a CUDA GPU (pip install coarsen-nb[cupy]); "
                            "the generated code is in .source and .export() works")

# The numba module is the NumPy module compiled: the same array code, each function ``@_jit``, after the
# text of lower/numba_xp*.py (the ``xp`` namespace with the array-API functions Numba lacks written for it;
# read as text here, so that reading the registry imports neither Numba nor SymPy).


def _pasted(file: str) -> str:
    """The text of ``lower/FILE`` as a numba module carries it: without the lines marked as the file's own
    imports when it is imported on its own (numba_xp_arrays takes numba_xp's names from it; a generated
    module has them from numba_xp's text before it), and for numba_xp_axes, the second half of numba_xp's
    text, its docstring too."""
    text = (Path(__file__).parent / "lower" / file).read_text()
    if "# <own-module>" in text:
        head, rest = text.split("# <own-module>", 1)
        text = head + rest.split("# </own-module>", 1)[1]
    return text.strip()


_NUMBA_XP = ("numba_xp.py", "numba_xp_broadcast.py", "numba_xp_fills.py", "numba_xp_along.py", "numba_xp_axes.py",
             "numba_xp_arrays.py", "numba_xp_reductions.py", "numba_xp_groups.py", "numba_xp_special.py",
             "numba_xp_elementary.py", "numba_xp_memory_order.py")
_NUMBA_PROLOGUE = ("\n\n\n".join(_pasted(f) for f in _NUMBA_XP)
                   # (an entry point, called from Python; no cfunc wrapper: nothing calls it from C)
                   + "\n\n\n_jit = numba.njit(cache=True, boundscheck=True, no_cfunc_wrapper=True)"
                   # the rest only compiled code calls: without Numba's wrappers (numba_xp.INTERNAL)
                   # (the numba backend's own helpers: numba_helpers)
                   + "\n_jit_helper = numba.njit(cache=True, boundscheck=True, **INTERNAL)"
                   # (a helper that passes its constant arguments on: numba_helpers.NUMBA_HELPER_DECORATORS)
                   + "\n_jit_inline = numba.njit(inline=\"always\", **INTERNAL)"
                   # (a helper whose every index is in bounds by its own tests: numba_helpers; bounds checks
                   # keep LLVM from vectorizing a loop; not cached, as the loops below: a cached one was
                   # optimized and code-generated alone at its save, then again in its caller, ~0.25 s of
                   # conv1d's cold compile; its caller is cached with it inside)
                   + "\n_jit_unchecked = numba.njit(**INTERNAL)"
                # the fused loops (lower/numba_fusion.py): NumPy's arithmetic on elements, inf for x / 0; not
                # cached: only their module's entry points call them, and an entry point loaded from the disk
                # cache needs none of its callees (caching one finalized it alone: numba_lazy_callees.py)
                + "\n_jit_loop = numba.njit(boundscheck=True, error_model=\"numpy\", **INTERNAL)"
                   + "\n\n\n" + numba_bounds.PROLOGUE)
NUMBA = Backend("numba", "numpy", "NumPy and Numba", prologue=_NUMBA_PROLOGUE, decorator="@_jit",
                frees_temporaries=False, compiles=True, load_helpers=_numba_helpers,
                load_helper_decorators=_numba_helper_decorators, load_shared_helpers=_numba_shared_helpers,
                load_fuser=_numba_fuser, load_tape=_numba_tape, load_interchange=_numba_interchange,
                lanes=False, extrema_first_zero=False, numbers_of_reductions=True,
                install_hint="install Numba (pip install numba); the generated code is in .source and .export() works")


#: ``backend="numba", parallel=True``: the same backend, its independent loops on threads.
NUMBA_PARALLEL = dataclasses.replace(NUMBA, parallel=True)

#: The backends ``parallel=True`` means something for, by name.
PARALLEL_BACKENDS = {NUMBA.name: NUMBA_PARALLEL}


def _dask_helpers() -> dict:
    from coarsen_nb.lower.dask_helpers import DASK_HELPERS

    return DASK_HELPERS


# The dask module is the NumPy module's statements with ``xp`` a namespace over dask.array (lower/dask_xp.py,
# pasted after the imports as numba's namespace is): every statement builds a lazy graph.  A Dask argument
# selects it whatever backend= says (coarsen_nb/dask_arrays.py).
# (lower/dask_xp_forms.py, pasted after it, adds the forms dask.array lacks: linalg, convolve, repeat by counts)
DASK = Backend("dask", "dask.array", "Dask (dask.array) and NumPy",
               prologue=_pasted("dask_xp.py") + "\n\n\n" + _pasted("dask_xp_forms.py"),
               load_helpers=_dask_helpers, array_type="Array", where_choices=True, lazy_graph=True,
               install_hint="install Dask (pip install coarsen-nb[dask]); the generated code is in .source")

#: The ``backend=`` options, in the order the docs list them.
BACKENDS: dict[str, Backend] = {b.name: b for b in (NUMPY, NUMBA, CUPY, DASK)}


#: The ``backend=`` default: a named choice, made when a function is compiled (:func:`resolve`).
AUTO = "auto"

#: The environment variable holding a user's own default backend (what ``backend="auto"`` means).
ENV_VAR = "COARSEN_NB_BACKEND"


def resolve(name: str) -> str:
    """The backend ``name`` stands for: itself, or for ``"auto"`` the user's default.

    ``"auto"`` is ``$COARSEN_NB_BACKEND`` where that is set (one of :data:`BACKENDS`, or ``auto``), else
    ``"numba"`` where Numba imports (loops and the scalar code between SOIs compiled), else ``"numpy"``.
    Never ``"cupy"`` (a GPU is asked for by name) nor ``"dask"`` (a Dask argument selects it whatever this
    says: :mod:`coarsen_nb.dask_arrays`).  A value of the variable that names no backend is a
    :class:`~coarsen_nb.errors.CoarsenError` naming the variable, not a silent choice.
    """
    if name != AUTO:
        return name
    chosen = os.environ.get(ENV_VAR, "").strip()
    if chosen and chosen != AUTO:
        if chosen not in BACKENDS:
            raise CoarsenError(ENV_VAR, message=f"the environment variable {ENV_VAR}={chosen!r} names no backend",
                               hint=f"set it to one of {', '.join((AUTO, *BACKENDS))}, or unset it "
                                    "(auto: numba where Numba imports, else numpy)")
        return chosen
    return NUMBA.name if _numba_imports() else NUMPY.name


@functools.cache
def _numba_imports() -> bool:
    """Whether ``import numba`` succeeds here (imported once: the numba backend needs it on the first call
    anyway).  Only an ImportError means no: Numba absent, blocked, or refusing this NumPy's version."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def get(name: str, parallel: bool = False) -> Backend:
    """The backend of a ``backend=`` option (checked by :func:`coarsen_nb.checks.options` first), its
    threaded form where ``parallel`` (a backend without one, the module a call's arguments chose: itself)."""
    return PARALLEL_BACKENDS.get(name, BACKENDS[name]) if parallel else BACKENDS[name]


def is_array(value) -> bool:
    """Whether ``value`` is an array of a backend's array module (its ``ndarray``: a NumPy array, a CuPy
    array; a Dask array): what the argument checks accept as an array argument.  A module not imported yet made none
    of the values, so this imports nothing."""
    for b in BACKENDS.values():
        xp = sys.modules.get(b.xp_module)
        if xp is not None and isinstance(value, getattr(xp, b.array_type)):
            return True
    return False


def for_module(xp_module: str) -> Backend:
    """The backend whose generated code imports ``xp_module``; any other array-API namespace (the tests
    print for ``array_api_strict``) is a plain backend of that name, without a fuser."""
    for b in BACKENDS.values():
        if b.xp_module == xp_module:
            return b
    return Backend(xp_module, xp_module, xp_module)
