"""The check the numba tape tests share: a scalar program's numba gradient against NumPy's and central differences.

The tape's printers (``numba_tape``, ``numba_tape_ahead``, ``numba_tape_hoist``, ``numba_tape_loads``) change how
a loop run iteration by iteration is compiled, never what it computes: each test runs a program written as a
user writes it under both backends and against central differences of the plain function, then reads the
numba gradient's source to see that the printer did (or did not) apply.
"""

from __future__ import annotations

import warnings

import numpy as np

import coarsen_nb as cn


def central(fn, args, i, eps=1e-6):
    """Central differences of ``fn(*args)`` in its ``i``-th (number) argument."""
    h = eps * max(1.0, abs(args[i]))
    up, down = list(args), list(args)
    up[i] += h
    down[i] -= h
    return (fn(*up) - fn(*down)) / (2 * h)


def numba_grad_source(fn, wrt, args, fd_rtol=1e-5) -> str:
    """The numba gradient equals NumPy's (1e-10) and central differences (``fd_rtol``), with no warning (a fallback
    to NumPy code warns); returns the source of the numba module's ``NAME_grad``."""
    ref = cn.coarsen(fn, wrt=wrt)
    f = cn.coarsen(fn, wrt=wrt, backend="numba")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = np.atleast_1d(np.asarray(f.grad(*args), dtype=float))
    want = np.atleast_1d(np.asarray(ref.grad(*args), dtype=float))
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    params = list(ref.params)
    fd = np.array([central(fn, args, params.index(w)) for w in wrt])
    np.testing.assert_allclose(got, fd, rtol=fd_rtol, atol=1e-7)
    src = f.source
    start = src.index(f"def {fn.__name__}_grad(")
    end = src.find("\n@", start)
    return src[start:end if end > 0 else None]
