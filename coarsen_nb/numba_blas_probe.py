"""Numba's first compilation in a process without importing ``scipy.linalg`` (issue 14's cold bar: CPU of every
cold start whose code calls no BLAS or LAPACK function; benchmarks/RESULTS.md, stop 40).

The first compilation in a process refreshes Numba's target context, which imports every registry of
implementations, among them ``numba.np.arraymath``.  That module asks once, at its import, whether a BLAS
is there (``_HAVE_BLAS = _check_blas()``, read later only by the inner product of ``np.correlate`` and
``np.convolve``): ``numba.np.linalg.ensure_blas`` imports ``scipy.linalg.cython_blas``, so all of
``scipy.linalg``, and through SciPy's array-API shim, which clones NumPy's namespace, NumPy's lazily
imported submodules (``f2py``, ``testing``, ``ma``, ...), although a module that calls no BLAS function
never reads the answer.

:func:`deferred_blas_import` answers that one question from whether SciPy is installed at all
(``importlib.util.find_spec("scipy")``: no import), which is what the probe tells wherever SciPy is
installed whole, and leaves every other caller of ``ensure_blas`` — the typing of ``np.dot``, ``@``,
``np.linalg.*``, which do need ``scipy.linalg`` — to the real function: the stand-in hands over to it for
any caller other than ``arraymath``'s import-time probe, and is removed after the block.  So a module that
calls BLAS imports ``scipy.linalg`` when Numba types that call, as before, and Numba's check that its
LAPACK integer width matches SciPy's (inside ``ensure_blas``) runs there; where nothing calls BLAS it is
not run, and nothing calls through that width either.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys

#: the module whose import-time BLAS probe the stand-in answers (any other caller gets the real function)
_PROBING = "numba.np.arraymath"


@contextlib.contextmanager
def deferred_blas_import(target_context):
    """Inside the block, a refresh of ``target_context`` that imports ``numba.np.arraymath`` (the first
    compilation's) has it ask whether SciPy is installed instead of importing ``scipy.linalg``.  Nothing is
    imported where no refresh happens (a warm process loads from the disk cache without one,
    :mod:`coarsen_nb.numba_cache_hits`), nor where ``arraymath`` is imported already."""
    if _PROBING in sys.modules:
        yield
        return
    load = target_context.load_additional_registries

    def load_additional_registries():
        if _PROBING in sys.modules:
            return load()
        with _probe_answered():
            return load()

    target_context.load_additional_registries = load_additional_registries
    try:
        yield
    finally:
        del target_context.load_additional_registries          # the class's method again


@contextlib.contextmanager
def _probe_answered():
    from numba.np import linalg

    real = linalg.ensure_blas

    def ensure_blas():
        if sys._getframe(1).f_globals.get("__name__") != _PROBING:
            return real()
        if importlib.util.find_spec("scipy") is None:
            raise ImportError("scipy 0.16+ is required for linear algebra")   # (the real function's error)
        return None

    linalg.ensure_blas = ensure_blas
    try:
        yield
    finally:
        linalg.ensure_blas = real
        arraymath = sys.modules.get(_PROBING)
        if arraymath is not None and getattr(arraymath, "ensure_blas", None) is ensure_blas:
            arraymath.ensure_blas = real        # (its name, bound at its import; it calls it nowhere else)
