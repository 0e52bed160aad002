"""A loop's max or min keeps the first of its equal zeros, under every array backend.

The user's ``m = min(m, v)`` keeps ``m`` on a tie, so of a row's -0.0 and 0.0 the first; ``1 / m`` tells which.
NumPy's ``min`` keeps the last (``np.min([-0.0, 0.0])`` is 0.0): the NumPy backend's nest gave +inf where the
plain function and numba gave -inf (``test_numba_nest_extrema[min]``, a hypothesis draw).  The NumPy-family
modules now print the module's ``_loop_min`` (``lower/extrema_helpers.py``; dask's own versions in
``lower/dask_helpers.py``); numba's namespace already steps the row as the loop does.

The reference is the plain function, and for the helpers the loop itself (``if v < m: m = v``), bit for bit.
"""

from __future__ import annotations

import math
import struct

import array_api_strict as xps
import dask.array as da
import numpy as np
import pytest

import coarsen_nb as cn
from coarsen_nb.lower.dask_helpers import DASK_HELPERS
from coarsen_nb.lower.dask_xp import xp as dask_xp
from coarsen_nb.lower.helpers import HELPERS

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


def bits(v) -> int:
    return struct.unpack("<q", struct.pack("<d", float(v)))[0]


def loop_extremum(values, kind: str) -> float:
    """The user's loop: the first of equal values stays (a NaN is NumPy's: the result is a NaN)."""
    m = -math.inf if kind == "max" else math.inf
    for v in values:
        if v != v:
            return math.nan
        if v > m if kind == "max" else v < m:
            m = v
    return m


def same(got, want) -> None:
    got, want = np.atleast_1d(np.asarray(got, dtype=float)), np.atleast_1d(np.asarray(want, dtype=float))
    assert got.shape == want.shape
    for g, w in zip(got, want, strict=True):
        assert bits(g) == bits(w) or (g != g and w != w), (got, want)


ROWS = [
    [-0.0, 0.0], [0.0, -0.0], [-0.0, 0.0, math.inf], [math.inf, -0.0, 0.0], [0.0] * 9 + [-0.0],
    [-0.0] * 17 + [0.0] * 3, [1.0, -0.0, 2.0, 0.0], [-1.0, 0.0, -0.0, -2.0], [3.0, 0.0, -0.0, math.nan],
    [-math.inf, -0.0], [2.5, 1.5], [0.0], [-0.0],
]


def _helpers(xp, own: dict) -> dict:
    """The helpers as a module of namespace ``xp`` defines them: a backend's ``own`` text (dask's), else NumPy's."""
    env = {"xp": xp, "math": math}
    for name in ("_segments", "_segment_max", "_segment_min", "_first_zeros", "_segment_first_zeros",
                 "_loop_max", "_loop_min", "_loop_segment_max", "_loop_segment_min"):
        exec(own.get(name) or HELPERS[name].source, env)
    return env


NAMESPACES = {
    "numpy": (np, {}, np.asarray, np.asarray),
    "array_api_strict": (xps, {}, xps.asarray, np.asarray),
    "dask": (dask_xp, DASK_HELPERS, lambda a: da.from_array(np.asarray(a), chunks=2), lambda r: np.asarray(r)),
}


@pytest.mark.parametrize("namespace", sorted(NAMESPACES))
@pytest.mark.parametrize("kind", ["max", "min"])
def test_the_helpers_keep_the_first_zero(namespace, kind):
    xp, own, to, back = NAMESPACES[namespace]
    h = _helpers(xp, own)
    for row in ROWS:
        for v in (row, row[::-1], [-x for x in row]):
            want = loop_extremum(v, kind)
            same(back(h[f"_loop_{kind}"](to(np.array(v)))), want)
    # a table's rows (axis 1), a row of zeros beside rows of none
    width = 4
    rows = [(r * width)[:width] for r in ROWS]
    table = np.array(rows)
    same(back(h[f"_loop_{kind}"](to(table), 1)), [loop_extremum(r, kind) for r in rows])
    # segments (a triangular nest's rows): runs of sorted ids, one empty
    values = [v for r in ROWS[:6] for v in r]
    seg = np.repeat(np.array([0, 2, 3, 4, 5, 6]), [len(r) for r in ROWS[:6]])
    want = [loop_extremum(r, kind) for r in [ROWS[0], [], *ROWS[1:6]]]
    same(back(h[f"_loop_segment_{kind}"](to(seg), to(np.array(values)), 7)), want)


def row_min(x):
    m = math.inf
    for v in x:
        m = min(m, v * 2.0)
    return 1.0 / m


def row_max(x):
    m = -math.inf
    for v in x:
        if v * 2.0 > m:
            m = v * 2.0
    return 1.0 / m


def rows_min(a):
    t = 0.0
    for i in range(a.shape[0]):
        m = math.inf
        for j in range(a.shape[1]):
            m = min(m, a[i, j] * 2.0)
        t += math.atan(1.0 / m) * (i + 1)
    return t


def rows_max(a):
    t = 0.0
    for i in range(a.shape[0]):
        m = -math.inf
        for j in range(a.shape[1]):
            m = max(m, a[i, j] * 2.0)
        t += math.atan(1.0 / m) * (i + 1)
    return t


def lower_triangle_max(a):
    t = 0.0
    for i in range(a.shape[0]):
        m = -math.inf
        for j in range(i + 1):
            m = max(m, a[i, j] * 2.0)
        t += math.atan(1.0 / m) * (i + 1)
    return t


def nest_min_beside_inf(a):         # test_numba_nest_extrema's rows_min: its draw [-0., 0.] beside inf
    t = 0.0
    for i in range(a.shape[0]):
        m = math.inf
        for j in range(a.shape[1]):
            m = min(m, a[i, j] * 2.0)
        t += 1.0 / m
    return t


SIGNED = np.array([[-0.0, 0.0, 0.0, 0.0], [1.0, -0.0, 2.0, 0.0], [0.0, -0.0, -0.0, -0.0], [-0.0, -1.0, 0.0, 3.0]])
CASES = [
    (row_min, (np.array([3.0, -0.0, 0.0, 1.0]),)), (row_min, (np.array([3.0, 0.0, -0.0, 1.0]),)),
    (row_max, (np.array([-3.0, -0.0, 0.0, -1.0]),)), (row_max, (np.array([-3.0, 0.0, -0.0]),)),
    (rows_min, (SIGNED,)), (rows_min, (SIGNED[:, ::-1],)), (rows_max, (-SIGNED,)), (rows_max, (-SIGNED[::-1],)),
    (lower_triangle_max, (-SIGNED,)), (lower_triangle_max, (-SIGNED.T,)),
    (nest_min_beside_inf, (np.array([[-0.0, 0.0], [math.inf, math.inf]]),)),
    (nest_min_beside_inf, (np.array([[-0.0, 0.0], [5.0, 5.0]]),)),
]


@pytest.mark.parametrize("backend", ["numpy", "dask", "numba"])
@pytest.mark.parametrize("fn,args", CASES, ids=[f"{c[0].__name__}-{k}" for k, c in enumerate(CASES)])
def test_a_loops_extremum_is_the_plain_functions(fn, args, backend):
    with np.errstate(all="ignore"):
        want = fn(*args)
        got = cn.coarsen(fn, backend=backend)(*args)
    same(got, want)


@pytest.mark.parametrize("fn", [row_min, rows_max, lower_triangle_max])
def test_the_gradient_is_unchanged(fn):
    """Away from zeros the value and gradient are the loop's: NumPy's module against numba's and central
    differences (the helper changes a zero's sign only)."""
    a = np.array([[0.5, -1.5, 2.0, 1.25], [1.0, 0.75, -2.0, 3.0], [0.25, 1.5, -0.5, 2.5], [-1.0, 2.0, 0.5, 1.75]])
    x = a[0] if fn is row_min else a
    f, g = cn.coarsen(fn, backend="numpy"), cn.coarsen(fn, backend="numba")
    np.testing.assert_allclose(f(x), fn(x), rtol=1e-14)
    grad = f.grad(x)
    np.testing.assert_allclose(grad, g.grad(x), rtol=1e-12, atol=1e-14)
    fd = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[k] += 1e-6
        down[k] -= 1e-6
        fd[k] = (fn(up) - fn(down)) / 2e-6
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-8)


def test_the_numpy_module_prints_the_loops_extremum():
    f = cn.coarsen(rows_min, backend="numpy")
    f(SIGNED)
    assert "_loop_min(xp.reshape(" in f.source
    g = cn.coarsen(rows_min, backend="numba")
    g(SIGNED)
    assert "_loop_min" not in g.source        # (numba's namespace steps each row as the loop does)
