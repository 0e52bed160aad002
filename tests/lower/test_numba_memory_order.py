"""``backend="numba"``: an element loop over one matrix runs in the matrix's memory order
(``lower/numba_xp_memory_order.py``, ``numba_loops.LoopFunction._in_memory_order``).

The two ``xp`` functions against NumPy's own elementwise result on views of every kind (transposed, sliced,
F-ordered, reversed, empty): the same values, x's shape, and NumPy's strides where x is a permuted
contiguous array.  Then gradients of programs that read transposed views, under numba against the NumPy
backend to 1e-12 and central differences, with the printed loop named.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn
from coarsen_nb.lower import numba_xp_memory_order

xp = numba_xp_memory_order.xp

pytestmark = [pytest.mark.usefixtures("private_numba_cache"),     # (tests/lower/conftest.py)
              pytest.mark.filterwarnings("error::coarsen_nb.numba_loader.NumbaFallbackWarning")]


@numba.njit
def _twice(x):
    flat = xp.memory_flat(x)
    out = np.empty(flat.shape[0])
    for i in range(flat.shape[0]):
        out[i] = 2.0 * flat[i] + 1.0
    return xp.memory_shaped(out, x)


_T = np.random.default_rng(0).standard_normal((5, 3, 4))
_X = np.random.default_rng(1).standard_normal((6, 4))
VIEWS = {"c3": _T, "t102": _T.transpose(1, 0, 2), "t201": _T.transpose(2, 0, 1), "T3": _T.T,
         "f3": np.asfortranarray(_T), "sliced3": _T[:, 1:, ::2], "stepped_t": _T[::2].transpose(1, 2, 0),
         "one_row_t": _T[:1].transpose(1, 0, 2), "empty_t": np.zeros((0, 3, 2)).transpose(2, 1, 0),
         "c2": _X, "T2": _X.T, "columns": _X[:, ::2], "reversed": _X[::-1], "reversed_T": _X[::-1].T}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_memory_order_values_and_shape(name):
    x = VIEWS[name]
    got = _twice(x)
    want = 2.0 * x + 1.0
    np.testing.assert_array_equal(got, want)
    assert got.shape == x.shape


@pytest.mark.parametrize("name", ["t102", "t201", "T3", "f3", "T2", "reversed_T"])
def test_a_permuted_contiguous_array_keeps_its_strides(name):
    """(NumPy's order 'K': the result laid out as the operand is.)"""
    x = VIEWS[name]
    assert np.abs(np.array(_twice(x).strides)).tolist() == np.abs(np.array((2.0 * x).strides)).tolist()


def transpose_method_axes(T, X):
    return np.sum(T.transpose(2, 0, 1)[0] * 2.0) + np.sum(T.transpose((1, 0, 2)) ** 2) + np.sum(X.transpose() @ X)


def transposed_sine(X):
    return np.sum(np.sin(X.T) * X.T)


@pytest.mark.parametrize("fn, shapes", [(transpose_method_axes, ((7, 3, 4), (5, 3))), (transposed_sine, ((6, 4),))])
def test_gradients_over_transposed_views(fn, shapes):
    rng = np.random.default_rng(2)
    args = tuple(rng.standard_normal(s) for s in shapes)
    wrt = fn.__code__.co_varnames[:len(shapes)]
    by_numpy, by_numba = (cn.coarsen(fn, wrt=wrt, backend=b) for b in ("numpy", "numba"))
    want, got = by_numpy.grad(*args), by_numba.grad(*args)
    if len(wrt) == 1:
        want, got = (want,), (got,)
    assert "xp.memory_flat(" in by_numba.source
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
        assert_close(g, finite_difference(fn, args, k), rtol=1e-6, atol=1e-6)
    for a in (tuple(np.asfortranarray(a) for a in args), tuple(a.T.copy().T for a in args)):
        for g, w in zip(got, by_numba.grad(*a) if len(wrt) > 1 else (by_numba.grad(*a),), strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)       # (F-ordered arguments: the same)
