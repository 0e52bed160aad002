"""Reference derivatives for tests: central finite differences in float64."""

from __future__ import annotations

import numpy as np


def _as_float(v):
    return v.astype(float) if isinstance(v, np.ndarray) else float(v)


def finite_difference(fn, args: tuple, wrt_index: int, eps: float = 1e-6):
    """Central differences of scalar ``fn(*args)`` w.r.t. argument ``wrt_index`` (scalar or array)."""
    # (arrays of positions and masks stay integer and boolean: they index, they are not perturbed)
    args = [np.array(a, dtype=float) if isinstance(a, np.ndarray) and (a.dtype.kind not in "iub" or i == wrt_index)
            else a for i, a in enumerate(args)]
    x = args[wrt_index]
    if isinstance(x, np.ndarray):
        g = np.zeros_like(x, dtype=float)
        for idx in np.ndindex(x.shape):
            h = eps * max(1.0, abs(x[idx]))
            plus = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
            minus = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
            plus[wrt_index][idx] += h
            minus[wrt_index][idx] -= h
            g[idx] = (fn(*plus) - fn(*minus)) / (2 * h)
        return g
    h = eps * max(1.0, abs(x))
    plus, minus = list(args), list(args)
    plus[wrt_index] = x + h
    minus[wrt_index] = x - h
    return (fn(*plus) - fn(*minus)) / (2 * h)


def one_sided_differences(fn, args, i, eps):
    """Backward and forward differences of ``fn`` w.r.t. argument ``i`` (elementwise for arrays)."""
    x = np.asarray(args[i], dtype=float)
    left, right = np.zeros_like(x), np.zeros_like(x)
    base = fn(*args)
    for idx in np.ndindex(x.shape):
        h = eps * max(1.0, abs(float(x[idx])))
        for sign, out in ((-1, left), (1, right)):
            moved = x.copy()
            moved[idx] += sign * h
            a = list(args)
            a[i] = moved if isinstance(args[i], np.ndarray) else float(moved)
            out[idx] = sign * (fn(*a) - base) / h
    return left, right


def assert_close(got, want, rtol=1e-6, atol=1e-7, what=""):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=what)
