"""The numba namespace's extrema along an axis in vector loops (``coarsen_nb/lower/numba_xp_along.py``) and what
calls them (``xp.max``/``min``/``argmax``/``argmin`` of a matrix along a literal or run-time axis, the
constant-axes reductions of an n-D array over its leading or trailing axes, ``add_at_first_extremum`` and
``first_extremum`` over such axes, with a cotangent of the kept shape or broadcast), against NumPy: the same
values and first indices, NaN wherever a group holds one, ties, infinities, NumPy's error for an empty reduced
axis.  The sign of a zero extremum is the element loop's (the group's first zero, as the base's loops kept
it): NumPy's own SIMD loops pick it by lane, so it is checked against a plain Python loop.  Row lengths span
the vector loop's widths and remainders; strided (non-contiguous) matrices are read in their order."""

from __future__ import annotations

import itertools

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from coarsen_nb.lower.numba_xp_groups import xp

# few distinct values (ties), signed zeros, infinities; NaN of both signs added by _with_nans
_values = st.one_of(st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf]),
                    st.floats(-1e3, 1e3, allow_nan=False, width=64))


def _with_nans(data, x):
    if x.size and data.draw(st.booleans()):
        for i in data.draw(st.lists(st.integers(0, x.size - 1), min_size=1, max_size=3)):
            x.flat[i] = data.draw(st.sampled_from([np.nan, -np.nan]))
    return x


def _loop_extremum(group, is_max):
    """The element loop's extremum of a 1-D group: NaN anywhere is the result, else the first of equal values."""
    best = group[0]
    for v in group[1:]:
        if v != v or best != best:
            return np.nan
        if (v > best) if is_max else (v < best):
            best = v
    return best


@numba.njit
def _literal_axes(m):
    return (xp.max(m, axis=0), xp.max(m, axis=1), xp.min(m, axis=0, keepdims=True), xp.min(m, axis=-1),
            xp.argmax(m, axis=0), xp.argmax(m, axis=1, keepdims=True), xp.argmin(m, axis=0), xp.argmin(m, axis=1))


@numba.njit
def _run_time_axis(m, axis):
    return xp.max(m, axis=axis), xp.min(m, axis=axis, keepdims=True), xp.argmax(m, axis=axis)


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
    np.testing.assert_array_equal(got, want)


def _zero_signs_are_the_loops(m):
    """Each zero extremum of max/min along either axis has the element loop's sign."""
    got = _literal_axes(m)
    for values, axis, is_max in ((got[0], 0, True), (got[1], 1, True), (got[2].ravel(), 0, False),
                                 (got[3], 1, False)):
        groups = m.T if axis == 0 else m
        for v, group in zip(values, groups, strict=True):
            if v == 0.0:
                assert np.signbit(v) == np.signbit(_loop_extremum(group, is_max)), (group, v)
            if v != v:
                assert not np.signbit(v)        # (the canonical nan, as before)


@settings(deadline=None, max_examples=200)
@given(st.tuples(st.integers(1, 5), st.integers(1, 70)), st.booleans(), st.data())
def test_matrix_extrema_along_each_axis_are_numpys(shape, transposed, data):
    m = _with_nans(data, data.draw(arrays(np.float64, shape, elements=_values)))
    if transposed:
        m = m.T                 # (a column-major view: the kernels read it in place, strided)
    want = (np.max(m, axis=0), np.max(m, axis=1), np.min(m, axis=0, keepdims=True), np.min(m, axis=-1),
            np.argmax(m, axis=0), np.argmax(m, axis=1, keepdims=True), np.argmin(m, axis=0), np.argmin(m, axis=1))
    for g, w in zip(_literal_axes(m), want, strict=True):
        _same(g, w)
    for axis in (0, 1, -1, -2):
        want = (np.max(m, axis=axis), np.min(m, axis=axis, keepdims=True), np.argmax(m, axis=axis))
        for g, w in zip(_run_time_axis(m, axis), want, strict=True):
            _same(g, w)
    _zero_signs_are_the_loops(m)


def test_zero_extrema_keep_the_first_zero():
    m = np.array([[-0.0, 0.0, -1.0] * 7, [0.0, -0.0, -1.0] * 7, [-1.0] * 20 + [-0.0]])
    _zero_signs_are_the_loops(m)
    _zero_signs_are_the_loops(np.ascontiguousarray(m.T))
    assert np.signbit(_literal_axes(m)[1]).tolist() == [True, False, True]


@numba.njit
def _cube_reductions(t):
    return (xp.max(t, axis=(1, 2)), xp.max(t, axis=-1, keepdims=True), xp.max(t, axis=0), xp.min(t, axis=(0, 1)),
            xp.argmin(t, axis=0), xp.argmax(t, axis=2), xp.max(t, axis=1), xp.argmax(t, axis=1), xp.min(t))


@settings(deadline=None, max_examples=100)
@given(st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 20)), st.data())
def test_constant_axes_of_a_cube_are_numpys(shape, data):
    t = _with_nans(data, data.draw(arrays(np.float64, shape, elements=_values)))
    want = (np.max(t, axis=(1, 2)), np.max(t, axis=-1, keepdims=True), np.max(t, axis=0), np.min(t, axis=(0, 1)),
            np.argmin(t, axis=0), np.argmax(t, axis=2), np.max(t, axis=1), np.argmax(t, axis=1), np.min(t))
    for g, w in zip(_cube_reductions(t), want, strict=True):
        _same(g, w)


def _one_hot(a, axes, sign):
    """1.0 at each group's argmax (argmin) over ``axes``, from NumPy's argmax of the groups moved last."""
    kept = [d for d in range(a.ndim) if d not in axes]
    n_kept, n_group = int(np.prod([a.shape[d] for d in kept])), int(np.prod([a.shape[d] for d in axes]))
    table = np.transpose(a, kept + list(axes)).reshape(n_kept, n_group)
    hit = np.zeros(table.shape)
    if n_group:
        hit[np.arange(n_kept), (np.argmax if sign > 0 else np.argmin)(table, axis=1)] = 1.0
    moved = hit.reshape([a.shape[d] for d in kept] + [a.shape[d] for d in axes])
    return np.transpose(moved, np.argsort(kept + list(axes)))


@numba.njit
def _marks(a, axes):
    return xp.first_extremum(a, axes, 1), xp.first_extremum(a, axes, -1)


@numba.njit
def _add_max(b, a, axes, g):
    xp.add_at_first_extremum(b, a, axes, g, 1)
    return b


@numba.njit
def _add_min(b, a, axes, g):
    xp.add_at_first_extremum(b, a, axes, g, -1)
    return b


@settings(deadline=None, max_examples=60)
@given(st.sampled_from([(3, 17), (5, 1), (2, 3, 9), (2, 2, 3, 4)]), st.data())
def test_a_maximums_adjoint_over_any_axes_is_the_one_hots(shape, data):
    a = _with_nans(data, data.draw(arrays(np.float64, shape, elements=_values)))
    for m in range(1, a.ndim + 1):
        for axes in itertools.combinations(range(a.ndim), m):
            for got, sign in zip(_marks(a, axes), (1, -1), strict=True):
                _same(got, _one_hot(a, axes, sign))
            kept = tuple(1 if d in axes else a.shape[d] for d in range(a.ndim))
            g = np.linspace(-1.0, 2.0, int(np.prod(kept))).reshape(kept)
            b = np.arange(a.size, dtype=float).reshape(a.shape)
            for add, sign in ((_add_max, 1), (_add_min, -1)):
                want = b + _one_hot(a, axes, sign) * g
                _same(add(b.copy(), a, axes, g), want)                                   # g of the kept shape
                _same(add(b.copy(), a, axes, np.ascontiguousarray(np.broadcast_to(g, a.shape))), want)


@numba.njit
def _along_0(m):
    return xp.max(m, axis=0), xp.argmin(m, axis=0), xp.argmax(m, axis=0)


@numba.njit
def _along_1(m):
    return xp.max(m, axis=1), xp.argmin(m, axis=1), xp.argmax(m, axis=1)


@pytest.mark.parametrize("shape, axis", [((3, 0), 1), ((0, 4), 0), ((0, 0), 0), ((0, 0), 1)])
def test_an_empty_reduced_axis_is_numpys_error(shape, axis):
    m = np.zeros(shape)
    with pytest.raises(ValueError) as want:
        np.max(m, axis=axis)
    with pytest.raises(ValueError) as got:
        (_along_0 if axis == 0 else _along_1)(m)
    assert str(got.value) == str(want.value)
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        _run_time_axis(m, axis)             # (its max first: a run-time axis raises as a literal one)


def test_no_groups_over_a_nonempty_axis_is_an_empty_result():
    for shape, axis in (((0, 4), 1), ((3, 0), 0)):
        m = np.zeros(shape)
        want = (np.max(m, axis=axis), np.argmin(m, axis=axis), np.argmax(m, axis=axis))
        for g, w in zip((_along_0 if axis == 0 else _along_1)(m), want, strict=True):
            _same(g, w)
