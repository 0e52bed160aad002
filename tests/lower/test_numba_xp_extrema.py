"""The numba namespace's branch-free extrema of a float vector (``numba_xp_axes._row_max``, ``_row_min``,
``_row_argmax``, ``_row_argmin``) and the namespace functions that now call them (``xp.max``/``xp.min`` of
a vector, ``xp.argmax`` of a vector and along either axis of a matrix, the reductions over constant axes),
against NumPy: the same value, the first index of ties, NaN (its first index) wherever there is one, and
NumPy's error for an empty vector.  Lengths span the eight running extrema and the blocks of sixteen the
index search compares (a remainder of every size), with the extremum, ties and NaNs anywhere."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from coarsen_nb.lower.numba_xp_axes import _row_argmax, _row_argmin, _row_max, _row_min
from coarsen_nb.lower.numba_xp_reductions import xp

# few distinct values (ties), signed zeros, infinities, and NaN sometimes
_values = st.one_of(st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf]),
                    st.floats(-1e3, 1e3, allow_nan=False, width=64))


def _with_nans(data, x):
    if x.size and data.draw(st.booleans()):
        for i in data.draw(st.lists(st.integers(0, x.size - 1), min_size=1, max_size=3)):
            x.flat[i] = np.nan
    return x


@numba.njit
def _rows(x):
    return _row_max(x), _row_min(x), _row_argmax(x), _row_argmin(x)


@numba.njit
def _namespace_1d(x):
    return xp.max(x), xp.min(x), xp.argmax(x), xp.argmin(x)


@numba.njit
def _namespace_2d(m, axis):
    return xp.argmax(m, axis=axis, keepdims=True), xp.argmax(m, axis=axis), xp.max(m, axis=axis)


@numba.njit
def _constant_axes(m):
    return (xp.argmax(m, axis=1, keepdims=True), xp.argmin(m, axis=0, keepdims=False), xp.max(m, axis=1),
            xp.min(m, axis=0, keepdims=True))


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got, want)
    np.testing.assert_array_equal(got, want)


@settings(deadline=None, max_examples=300)      # (the first example compiles)
@given(st.integers(1, 70), st.data())
def test_vector_extrema_are_numpys(n, data):
    x = _with_nans(data, data.draw(arrays(np.float64, n, elements=_values)))
    want = (np.max(x), np.min(x), np.argmax(x), np.argmin(x))
    for got in (_rows(x), _namespace_1d(x)):
        for g, w in zip(got, want, strict=True):
            _same(g, w)


@settings(deadline=None)
@given(st.integers(1, 40), st.data())
def test_a_strided_vector_is_read_in_its_order(n, data):
    x = _with_nans(data, data.draw(arrays(np.float64, 2 * n, elements=_values)))[::-2]
    for g, w in zip(_rows(x), (np.max(x), np.min(x), np.argmax(x), np.argmin(x)), strict=True):
        _same(g, w)


@settings(deadline=None)
@given(st.tuples(st.integers(1, 4), st.integers(1, 40)), st.sampled_from([0, 1, -1, -2]), st.data())
def test_matrix_extrema_along_each_axis_are_numpys(shape, axis, data):
    m = _with_nans(data, data.draw(arrays(np.float64, shape, elements=_values)))
    want = (np.argmax(m, axis=axis, keepdims=True), np.argmax(m, axis=axis), np.max(m, axis=axis))
    for g, w in zip(_namespace_2d(m, axis), want, strict=True):
        _same(g, w)
    want = (np.argmax(m, axis=1, keepdims=True), np.argmin(m, axis=0), np.max(m, axis=1),
            np.min(m, axis=0, keepdims=True))
    for g, w in zip(_constant_axes(m), want, strict=True):
        _same(g, w)


def test_an_empty_vector_is_numpys_error():
    x = np.zeros(0)
    for fn in (_row_max, _row_min, _row_argmax, _row_argmin):
        with pytest.raises(ValueError) as got:
            numba.njit(lambda x, fn=fn: fn(x))(x)
        numpy_fn = {_row_max: np.max, _row_min: np.min, _row_argmax: np.argmax, _row_argmin: np.argmin}[fn]
        with pytest.raises(ValueError) as want:
            numpy_fn(x)
        assert str(got.value) == str(want.value)


def test_an_empty_axis_is_numpys_error():
    m = np.zeros((3, 0))
    with pytest.raises(ValueError):
        np.argmax(m, axis=1)
    with pytest.raises(ValueError, match="argmax of an empty sequence"):
        _namespace_2d(m, 1)
    # an empty axis of no rows: nothing to pick, as NumPy
    _same(_namespace_2d(np.zeros((0, 4)), 1)[1], np.argmax(np.zeros((0, 4)), axis=1))
