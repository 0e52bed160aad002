"""The numba namespace's functions (``coarsen_nb/lower/numba_xp.py``) against NumPy's, compiled by Numba.

Each is called from an ``@njit`` function on random arrays (ranks 1 and 2, every axis, NaNs and
ties for the extrema) and compared with the NumPy function of the same name: values, dtype and
shape.  The generated code depends on exactly these answers, so anything looser would be a wrong
gradient under ``backend="numba"``.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from coarsen_nb.lower.numba_xp import xp

_floats = st.floats(-4, 4, allow_nan=False, width=64)
_matrices = arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 5)), elements=_floats)
_vectors = arrays(np.float64, st.integers(0, 6), elements=_floats)


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


@numba.njit
def _scans_1d(x, ints):
    return (xp.cumulative_sum(x), xp.cumulative_prod(x), xp.cumulative_sum(x, include_initial=True),
            xp.cumulative_prod(x, include_initial=True), xp.cumulative_sum(ints))


@numba.njit
def _scans_2d(m, axis):
    return (xp.cumulative_sum(m, axis=axis), xp.cumulative_prod(m, axis=axis, include_initial=True))


@settings(deadline=None)       # (the first example compiles)
@given(_vectors, st.data())
def test_scans_of_vectors(x, data):
    ints = data.draw(arrays(np.int64, x.shape, elements=st.integers(-3, 3)))
    for got, want in zip(_scans_1d(x, ints),
                         (np.cumulative_sum(x), np.cumulative_prod(x), np.cumulative_sum(x, include_initial=True),
                          np.cumulative_prod(x, include_initial=True), np.cumulative_sum(ints)), strict=True):
        _same(got, want)


@settings(deadline=None)       # (the first example compiles)
@given(_matrices, st.sampled_from([0, 1, -1, -2]))
def test_scans_of_matrices_along_each_axis(m, axis):
    s, p = _scans_2d(m, axis)
    _same(s, np.cumulative_sum(m, axis=axis))
    _same(p, np.cumulative_prod(m, axis=axis, include_initial=True))


@numba.njit
def _extrema(m, axis):
    return (xp.argmax(m, axis=axis), xp.argmax(m, axis=axis, keepdims=True), xp.max(m, axis=axis),
            xp.min(m, axis=axis), xp.max(m, axis=axis, keepdims=True), xp.argmax(m), xp.max(m))


@settings(deadline=None)       # (the first example compiles)
@given(_matrices, st.sampled_from([0, 1, -1, -2]), st.data())
def test_extrema_with_ties_and_nans(m, axis, data):
    m = np.round(m)                                          # ties
    if data.draw(st.booleans()):
        m[data.draw(st.integers(0, m.shape[0] - 1)), data.draw(st.integers(0, m.shape[1] - 1))] = np.nan
    want = (np.argmax(m, axis=axis), np.argmax(m, axis=axis, keepdims=True), np.max(m, axis=axis),
            np.min(m, axis=axis), np.max(m, axis=axis, keepdims=True), np.argmax(m), np.max(m))
    for got, w in zip(_extrema(m, axis), want, strict=True):
        got, w = np.asarray(got), np.asarray(w)
        assert got.shape == w.shape and got.dtype.kind == w.dtype.kind
        np.testing.assert_array_equal(got, w)


@numba.njit
def _building(x, m, flags, seq):
    return (xp.concat([x, x[::-1]]), xp.concat([xp.ones((m.shape[0], 1)), m], axis=1),
            xp.concat([m, m], axis=0), xp.tile(x, (3,)), xp.reshape(m.T, (-1,)),
            xp.flip(x), xp.flip(m, axis=1), xp.flip(m, axis=0), xp.flip(m),
            xp.asarray(x, dtype=xp.float64, copy=True), xp.asarray(flags, dtype=xp.float64),
            xp.asarray(2, dtype=xp.int64), xp.asarray(seq, dtype=xp.float64), xp.asarray(seq))


@settings(deadline=None)       # (the first example compiles)
@given(_vectors, _matrices, st.lists(_floats, min_size=1, max_size=4))
def test_building_and_reshaping(x, m, seq):
    flags = x > 0
    want = (np.concat([x, x[::-1]]), np.concat([np.ones((m.shape[0], 1)), m], axis=1), np.concat([m, m], axis=0),
            np.tile(x, (3,)), np.reshape(m.T, (-1,)), np.flip(x), np.flip(m, axis=1), np.flip(m, axis=0),
            np.flip(m), np.asarray(x, dtype=np.float64, copy=True), np.asarray(flags, dtype=np.float64),
            np.asarray(2, dtype=np.int64), np.asarray(seq, dtype=np.float64), np.asarray(seq))
    for got, w in zip(_building(x, m, flags, seq), want, strict=True):
        _same(got, w)


@numba.njit
def _products(m, v, w):
    return xp.matmul(m, v), xp.matmul(w, m), xp.matmul(v, v), xp.matmul(m, m.T), xp.matmul(m.T, m)


@settings(deadline=None)       # (the first example compiles)
@given(_matrices, st.data())
def test_matmul_of_every_rank_pair(m, data):
    v = data.draw(arrays(np.float64, m.shape[1], elements=_floats))
    w = data.draw(arrays(np.float64, m.shape[0], elements=_floats))
    for got, want in zip(_products(m, v, w), (m @ v, w @ m, v @ v, m @ m.T, m.T @ m), strict=True):
        _same(got, want)


@numba.njit
def _put_and_sum_to(x, where, values, g):
    a = x.copy()
    xp.put(a, (where,), values)
    b = x.copy()
    xp.put(b, (where,), 9.5)
    return a, b, xp.sum_to(g, (1, g.shape[1])), xp.sum_to(g, (g.shape[1],)), xp.sum_to(g, (g.shape[0], 1))


@settings(deadline=None)       # (the first example compiles)
@given(arrays(np.float64, st.integers(1, 6), elements=_floats), st.data())
def test_put_and_sum_to(x, data):
    n = x.shape[0]
    where = data.draw(arrays(np.int64, st.integers(0, 5), elements=st.integers(-n, n - 1)))
    values = data.draw(arrays(np.float64, where.shape, elements=_floats))
    g = data.draw(_matrices)
    a, b = x.copy(), x.copy()
    a[where] = values                                        # (the last write wins, as in _put)
    b[where] = 9.5
    got = _put_and_sum_to(x, where, values, g)
    for got_k, want in zip(got, (a, b, g.sum(0, keepdims=True), g.sum(0), g.sum(1, keepdims=True)), strict=True):
        _same(got_k, want)


def test_put_past_the_end_is_an_index_error():
    with pytest.raises(IndexError):
        _put_and_sum_to(np.zeros(3), np.array([3]), np.array([1.0]), np.ones((2, 2)))
