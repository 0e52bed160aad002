"""Gradients over CuPy arrays under a CPU backend: a CuPy argument runs the cupy module.

A function compiled for the CPU (``backend="auto"``, which is numba where Numba imports, or ``"numpy"``) and
called on CuPy arrays cannot run its CPU code on them: Numba does not type a CuPy array, and NumPy refuses to
convert one implicitly.  So a CuPy argument selects the cupy module, as a Dask argument selects the dask module
(:mod:`coarsen_nb.dask_arrays`): the user's data decides where the work runs, and one function serves NumPy
arrays and GPU arrays alike.  The cupy module is compiled once per signature and kept in the function's
specialization cache beside the CPU one; ``f.backend`` still names the backend the function was compiled for,
the generated module's header names the one that ran.
"""

from __future__ import annotations

import sys

from coarsen_nb.backends import CUPY
from coarsen_nb.errors import CoarsenError
from coarsen_nb.specialize import Compiled, OnBackend, Request, compile_signature


def is_cupy(value) -> bool:
    """Whether ``value`` is a CuPy array (imports nothing: no CuPy array exists before cupy is imported)."""
    cp = sys.modules.get(CUPY.xp_module)
    return cp is not None and isinstance(value, cp.ndarray)


def wanted(backend: str, args: tuple) -> bool:
    """Whether a call with ``args`` of a function compiled for ``backend`` runs the cupy module instead."""
    return backend != CUPY.name and CUPY.xp_module in sys.modules and any(is_cupy(a) for a in args)


def specialize(f: Request, sig: tuple, cache: dict) -> Compiled:
    """The cupy specialization of ``f`` for the signature ``sig`` (compiled on the first call, then from
    ``cache``); a module CuPy cannot load here (a CuPy too old) is a :class:`CoarsenError` saying so."""
    key = (CUPY.name, sig)
    hit = cache.get(key)
    if hit is None:
        hit = cache[key] = compile_signature(OnBackend(f, CUPY.name), sig)
    if hit.missing:
        raise CoarsenError(CUPY.name, message=f"{f.name}() was called on CuPy arrays, and the cupy module cannot be "
                           f"loaded here ({hit.missing})", hint=CUPY.install_hint)
    return hit
