"""The numba backend's window loops (``lower/numba_helpers.py``) past one tile: many outputs, many taps.

``test_numba_xp.py`` checks them against the NumPy helpers on windows of a few elements, which fit in one
tile of ``_window_matvec``'s outputs and one block of ``_window_vecmat``'s taps.  These sizes cross the
tiles' and the tap blocks' ends (a tile of 256 outputs, blocks of 16 taps), have fewer outputs than taps
(one short tile per block), and start inside the signal; they are compared with the NumPy helpers
(``np.correlate`` / ``np.convolve``) and with the plain double sum.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest

from coarsen_nb.lower.helpers import HELPERS
from coarsen_nb.lower.numba_helpers import NUMBA_HELPERS
from coarsen_nb.lower.numba_xp import xp

_NAMES = ("_window_matvec", "_window_vecmat", "_window_outer_add")


def _compiled():
    """Each window loop as the backend compiles it (no bounds checks: a wrong index would read garbage
    rather than raise, which the comparisons below see), and the NumPy helper of the same name."""
    numba_ns, numpy_ns = {"xp": xp}, {"xp": np}
    for name in ("_scatter_sum", "_window", "_window_add", *_NAMES):
        exec(HELPERS[name].source, numpy_ns)
    out = {}
    for name in _NAMES:
        exec(NUMBA_HELPERS[name], numba_ns)
        out[name] = (numba.njit(numba_ns[name]), numpy_ns[name])
    return out


_HELPERS = _compiled()

SHAPES = [  # (signal length, lo, n0 outputs, n1 taps)
    (1000, 0, 994, 7),          # conv1d's shape: several tiles, one block of taps
    (1000, 3, 600, 40),         # three tiles and three blocks of taps (the last one short)
    (700, 5, 257, 16),          # one output past a tile, a whole block of taps
    (300, 2, 9, 200),           # fewer outputs than taps
    (64, 1, 1, 1),
]


@pytest.mark.parametrize("m, lo, n0, n1", SHAPES)
def test_tiled_window_loops_are_the_numpy_helpers_and_the_double_sums(m, lo, n0, n1):
    rng = np.random.default_rng(m + n0 + n1)
    x, h, g = rng.standard_normal(m), rng.standard_normal(n1), rng.standard_normal(n0)
    idx = lo + np.arange(n0)[:, None] + np.arange(n1)[None, :]
    windows = x[idx]
    (mv, mv_np), (vm, vm_np), (oa, oa_np) = (_HELPERS[k] for k in _NAMES)

    want_mv = np.array([sum(windows[i, j] * h[j] for j in range(n1)) for i in range(n0)])
    np.testing.assert_allclose(mv(x, lo, n0, n1, h), want_mv, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mv(x, lo, n0, n1, h), mv_np(x, lo, n0, n1, h), rtol=1e-12, atol=1e-12)

    want_vm = np.array([sum(g[i] * windows[i, j] for i in range(n0)) for j in range(n1)])
    np.testing.assert_allclose(vm(g, x, lo, n0, n1), want_vm, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(vm(g, x, lo, n0, n1), vm_np(g, x, lo, n0, n1), rtol=1e-12, atol=1e-12)

    b, b_np, want = x.copy(), x.copy(), x.copy()
    np.add.at(want, idx.ravel(), (g[:, None] * h[None, :]).ravel())
    oa(b, lo, n0, n1, g, h)
    oa_np(b_np, lo, n0, n1, g, h)
    np.testing.assert_allclose(b, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b, b_np, rtol=1e-12, atol=1e-12)


def test_the_tiled_loops_add_the_taps_in_the_untiled_order():
    """_window_matvec and _window_outer_add add each output's taps in order j = 0, 1, ...: the same
    floating-point sums as the loops with the taps outside (bit for bit), which the tiles only reorder
    in memory."""
    rng = np.random.default_rng(7)
    m, lo, n0, n1 = 900, 2, 880, 11
    x, h, g = rng.standard_normal(m), rng.standard_normal(n1), rng.standard_normal(n0)
    want = np.zeros(n0)
    for j in range(n1):
        want += x[lo + j:lo + j + n0] * h[j]
    assert np.array_equal(_HELPERS["_window_matvec"][0](x, lo, n0, n1, h), want)
    b, want_b = x.copy(), x.copy()
    for j in range(n1):
        want_b[lo + j:lo + j + n0] += g * h[j]
    _HELPERS["_window_outer_add"][0](b, lo, n0, n1, g, h)
    assert np.array_equal(b, want_b)
