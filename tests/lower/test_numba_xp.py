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

from coarsen_nb.lower import array_helpers
from coarsen_nb.lower.helpers import HELPERS
from coarsen_nb.lower.numba_xp import xp
from coarsen_nb.lower.numba_xp_arrays import xp as _xp_arrays  # noqa: F401 (its functions join xp)
from coarsen_nb.lower.numba_xp_axes import xp as _xp_axes  # noqa: F401 (its functions join xp)

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
def _takes(m, idx, flat):
    return (xp.take(m, idx, axis=1), xp.take(m, idx, axis=-1), xp.take(m, idx, axis=0), xp.take(m, idx, axis=-2),
            xp.take(flat, idx))


@settings(deadline=None)       # (the first example compiles)
@given(st.integers(1, 4), st.integers(1, 5), st.lists(st.integers(-4, 3), min_size=0, max_size=6))
def test_take_along_an_axis_is_numpys(rows, cols, picks):
    """The element loop of ``xp.take(m, idx, axis=k)`` (numba_xp_arrays) against ``np.take``, negative indices too."""
    m = np.arange(rows * cols, dtype=np.float64).reshape(rows, cols) * 1.5 - 2.0
    size = min(rows, cols)
    idx = np.array([p % size - (size if p < 0 else 0) for p in picks], dtype=np.int64)
    want = (np.take(m, idx, axis=1), np.take(m, idx, axis=-1), np.take(m, idx, axis=0), np.take(m, idx, axis=-2),
            np.take(m.ravel(), idx))
    for got, w in zip(_takes(m, idx, m.ravel()), want, strict=True):
        _same(got, w)


def test_take_and_concat_refuse_what_numpy_refuses():
    m = np.ones((2, 3))
    with pytest.raises(IndexError):
        _takes(m, np.array([3], dtype=np.int64), m.ravel())
    with pytest.raises(ValueError, match="must match exactly"):
        _concat_rows(m, np.ones((2, 2)))
    with pytest.raises(ValueError, match="must match exactly"):
        np.concat([m, np.ones((2, 2))], axis=0)


@numba.njit
def _concat_rows(a, b):
    return xp.concat([a, b], axis=0)


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


# (g's shape, the target shape): g as large as the target, larger (summed), smaller (a whole-array sum's
# adjoint, spread over the target first), and both at once
_SUM_TO_CASES = [((4, 3), (4, 3)), ((2, 4, 3), (4, 3)), ((4, 3), (4, 1)), ((4, 1), (4, 3)), ((), (4, 3)),
                 ((3,), (4, 3)), ((1, 3), (4, 3)), ((4, 1), (1, 3)), ((2, 4, 1), (3,)), ((5,), (2, 5))]


@numba.njit
def _sum_to(g, shape):
    return xp.sum_to(g, shape)


@pytest.mark.parametrize("g_shape, shape", _SUM_TO_CASES)
def test_sum_to_spreads_a_smaller_adjoint(g_shape, shape):
    """Broadcast g over the target's points, then sum what the target does not have: written out here with
    NumPy's broadcast_to and sum, not with the NumPy helper."""
    g = np.random.default_rng(len(g_shape) + len(shape)).normal(size=g_shape)
    full = np.broadcast_to(g, np.broadcast_shapes(g_shape, shape))
    want = full.sum(axis=tuple(range(full.ndim - len(shape))))
    want = want.sum(axis=tuple(a for a, n in enumerate(shape) if n == 1), keepdims=True)
    _same(_sum_to(g, shape), want)
    _same(_sum_to(g, shape), array_helpers._sum_to(g, shape))     # the NumPy backend agrees
    if not g_shape:
        _same(_sum_to(float(g), shape), want)          # a number, not a 0-d array


@pytest.mark.parametrize("view", ["T", "fortran", "columns"])
def test_sum_to_its_own_shape_is_g_itself_of_any_layout(view):
    """(as the NumPy helper returns it: an element loop's result over a transposed view is laid out as the
    view, numba_xp_memory_order; a copy was a strided pass) and a broadcast one is still summed."""
    m = np.random.default_rng(3).normal(size=(4, 6))
    g = {"T": m.T, "fortran": np.asfortranarray(m), "columns": m[:, ::2]}[view]
    got = _sum_to(g, g.shape)
    assert np.shares_memory(got, g)         # (g, or a view of its memory: no copy)
    _same(got, g)
    _same(_sum_to(g, (1, g.shape[1])), g.sum(axis=0, keepdims=True))
    _same(_sum_to(g, (g.shape[1],)), array_helpers._sum_to(g, (g.shape[1],)))


def test_put_past_the_end_is_an_index_error():
    with pytest.raises(IndexError):
        _put_and_sum_to(np.zeros(3), np.array([3]), np.array([1.0]), np.ones((2, 2)))


def test_put_through_an_integer_and_an_array_of_a_matrix():
    @numba.njit
    def put_row(x, i, where, values):
        a = x.copy()
        xp.put(a, (i, where), values)
        b = x.copy()
        xp.put(b, (where[:, None] % 2, where), 9.5)     # (index arrays broadcast together)
        return a, b
    x, where, values = np.zeros((3, 4)), np.array([0, -1, 2, 0]), np.array([1.0, 2.0, 3.0, 4.0])
    a, b = x.copy(), x.copy()
    a[1, where] = values
    b[where[:, None] % 2, where] = 9.5
    for got, want in zip(put_row(x, 1, where, values), (a, b), strict=True):
        _same(got, want)
    with pytest.raises(IndexError):
        put_row(x, 3, where, values)


# -- numba_xp_arrays: diff, diff_vjp, roll, squeeze, stack, einsum ---------------------------------------

_cubes = arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(1, 4), st.integers(1, 3)), elements=_floats)


@numba.njit
def _differences(x, m, t, ints, n, axis):
    return (xp.diff(x), xp.diff(x, n=n, axis=-1), xp.diff(m), xp.diff(m, axis=axis), xp.diff(m, n=n, axis=axis),
            xp.diff(t, n=n, axis=axis), xp.diff(ints, n=n, axis=axis))


@settings(deadline=None)       # (the first example compiles)
@given(_vectors, _matrices, _cubes, st.integers(0, 6), st.sampled_from([0, 1, -1, -2]), st.data())
def test_diff_of_every_order_along_each_axis(x, m, t, n, axis, data):
    ints = data.draw(arrays(np.int64, m.shape, elements=st.integers(-3, 3)))
    want = (np.diff(x), np.diff(x, n=n, axis=-1), np.diff(m), np.diff(m, axis=axis), np.diff(m, n=n, axis=axis),
            np.diff(t, n=n, axis=axis), np.diff(ints, n=n, axis=axis))
    for got, w in zip(_differences(x, m, t, ints, n, axis), want, strict=True):
        _same(got, w)


def _numpy_helper(name):
    """The NumPy backend's helper ``name`` (its text in ``lower/helpers.py``, run on NumPy), the reference."""
    namespace = {"xp": np}
    exec(HELPERS[name].source, namespace)
    return namespace[name]


_diff_vjp_numpy = _numpy_helper("_diff_vjp")


@numba.njit
def _diff_transposes(x, m, t, n, axis):
    return xp.diff_vjp(x, n, 0), xp.diff_vjp(m, n, axis), xp.diff_vjp(t, n, axis)


@settings(deadline=None)       # (the first example compiles)
@given(_vectors, _matrices, _cubes, st.integers(0, 3), st.sampled_from([0, 1, -1, -2]))
def test_diff_vjp_is_the_numpy_helper(x, m, t, n, axis):
    want = (_diff_vjp_numpy(x, n, 0), _diff_vjp_numpy(m, n, axis), _diff_vjp_numpy(t, n, axis))
    for got, w in zip(_diff_transposes(x, m, t, n, axis), want, strict=True):
        _same(got, w)


def test_diff_vjp_is_the_transpose_of_diff():
    rng = np.random.default_rng(1)
    x, g = rng.normal(size=(4, 6)), rng.normal(size=(4, 4))
    assert np.isclose(np.sum(np.diff(x, n=2, axis=1) * g), np.sum(x * _diff_transposes(g[0], g, g[None], 2, 1)[1]))


@numba.njit
def _rolls(x, m, ints, shift, axis):
    return (xp.roll(x, shift=shift), xp.roll(x, shift=shift, axis=0), xp.roll(m, shift=shift, axis=None),
            xp.roll(m, shift=shift, axis=axis), xp.roll(m.T, shift=shift, axis=axis), xp.roll(ints, shift=shift))


@settings(deadline=None)       # (the first example compiles)
@given(_vectors, _matrices, st.integers(-13, 13), st.sampled_from([0, 1, -1, -2]), st.data())
def test_roll_flattened_and_along_each_axis(x, m, shift, axis, data):
    ints = data.draw(arrays(np.int64, m.shape, elements=st.integers(-3, 3)))
    want = (np.roll(x, shift=shift), np.roll(x, shift=shift, axis=0), np.roll(m, shift=shift, axis=None),
            np.roll(m, shift=shift, axis=axis), np.roll(m.T, shift=shift, axis=axis), np.roll(ints, shift=shift))
    for got, w in zip(_rolls(x, m, ints, shift, axis), want, strict=True):
        _same(got, w)


@numba.njit
def _squeezes(x, m, t, axis2, axis3):
    return (xp.squeeze(x[:1], axis=0), xp.squeeze(x[:1], axis=-1), xp.squeeze(m[:, :1], axis=1),
            xp.squeeze(m[:1], axis=0), xp.squeeze(m[:1, :1], axis=axis2), xp.squeeze(m.T[:1], axis=-2),
            xp.squeeze(t[:, :1], axis=1), xp.squeeze(t[:1, :1, :1], axis=axis3))


@settings(deadline=None)       # (the first example compiles)
@given(arrays(np.float64, st.integers(1, 6), elements=_floats), _matrices, _cubes, st.sampled_from([0, 1, -1, -2]),
       st.sampled_from([0, 1, 2, -1, -3]))
def test_squeeze_of_an_axis_of_length_one(x, m, t, axis2, axis3):
    want = (np.squeeze(x[:1], axis=0), np.squeeze(x[:1], axis=-1), np.squeeze(m[:, :1], axis=1),
            np.squeeze(m[:1], axis=0), np.squeeze(m[:1, :1], axis=axis2), np.squeeze(m.T[:1], axis=-2),
            np.squeeze(t[:, :1], axis=1), np.squeeze(t[:1, :1, :1], axis=axis3))
    for got, w in zip(_squeezes(x, m, t, axis2, axis3), want, strict=True):
        _same(got, w)


def test_squeeze_of_a_longer_axis_is_a_value_error():
    with pytest.raises(ValueError):
        numba.njit(lambda m: xp.squeeze(m, axis=0))(np.ones((2, 3)))


@numba.njit
def _stacks(x, y, m, axis1, axis2):
    return (xp.stack([x, y], axis=0), xp.stack([x, y, x], axis=axis1), xp.stack((x, y), axis=axis1),
            xp.stack([m, m * 2.0], axis=axis2), xp.stack((m, m.T.T[::1]), axis=axis2), xp.stack([x]),
            xp.stack((x, y[::-1]), axis=axis1))


@settings(deadline=None)       # (the first example compiles)
@given(_vectors, _matrices, st.sampled_from([0, 1, -1, -2]), st.sampled_from([0, 1, 2, -1, -2, -3]), st.data())
def test_stack_of_lists_and_tuples_along_each_axis(x, m, axis1, axis2, data):
    y = data.draw(arrays(np.float64, x.shape, elements=_floats))
    want = (np.stack([x, y], axis=0), np.stack([x, y, x], axis=axis1), np.stack((x, y), axis=axis1),
            np.stack([m, m * 2.0], axis=axis2), np.stack((m, m), axis=axis2), np.stack([x]),
            np.stack((x, y[::-1]), axis=axis1))
    for got, w in zip(_stacks(x, y, m, axis1, axis2), want, strict=True):
        _same(got, w)


def test_stack_of_different_shapes_is_a_value_error():
    with pytest.raises(ValueError):
        numba.njit(lambda a, b: xp.stack([a, b]))(np.ones(2), np.ones(3))


@numba.njit
def _einsums(m, v, w, sq, ints):
    return (xp.einsum('ij,ij->', m, m), xp.einsum('i,i->', v, v), xp.einsum('ij,j->i', m, v),
            xp.einsum('ij,jk->ik', m, m.T), xp.einsum('ij->j', m), xp.einsum('ji->ij', m), xp.einsum('i,j->ij', w, v),
            xp.einsum('bi,ij,bj->b', m, sq, m), xp.einsum('b,ij,bj->bi', w, sq, m), xp.einsum('ik,ij->jk', m, m),
            xp.einsum('ii->', sq), xp.einsum('ii->i', sq), xp.einsum('Ab,bA->A', m, m.T), xp.einsum('ij,j->i', ints, v),
            xp.einsum('ij,ij->i', ints, ints))


@settings(deadline=None)       # (the first example compiles)
@given(_matrices, st.data())
def test_einsum_of_explicit_subscripts(m, data):
    v = data.draw(arrays(np.float64, m.shape[1], elements=_floats))
    w = data.draw(arrays(np.float64, m.shape[0], elements=_floats))
    sq = data.draw(arrays(np.float64, (m.shape[1], m.shape[1]), elements=_floats))
    ints = data.draw(arrays(np.int64, m.shape, elements=st.integers(-3, 3)))
    want = (np.einsum('ij,ij->', m, m), np.einsum('i,i->', v, v), np.einsum('ij,j->i', m, v),
            np.einsum('ij,jk->ik', m, m.T), np.einsum('ij->j', m), np.einsum('ji->ij', m), np.einsum('i,j->ij', w, v),
            np.einsum('bi,ij,bj->b', m, sq, m), np.einsum('b,ij,bj->bi', w, sq, m), np.einsum('ik,ij->jk', m, m),
            np.einsum('ii->', sq), np.einsum('ii->i', sq), np.einsum('Ab,bA->A', m, m.T), np.einsum('ij,j->i', ints, v),
            np.einsum('ij,ij->i', ints, ints))
    for got, w_ in zip(_einsums(m, v, w, sq, ints), want, strict=True):
        _same(got, w_)


def test_einsum_of_disagreeing_lengths_is_a_value_error():
    with pytest.raises(ValueError):
        numba.njit(lambda a, b: xp.einsum('ij,jk->ik', a, b))(np.ones((2, 3)), np.ones((2, 3)))


def _numba_helper(name):
    """The numba backend's own helper ``name`` (lower/numba_helpers.py), compiled as the backend does (with the
    numba namespace as ``xp``: ``_take`` calls its ``contiguous_rows``)."""
    from coarsen_nb.lower.numba_helpers import NUMBA_HELPERS
    namespace = {"xp": xp}
    exec(NUMBA_HELPERS[name], namespace)
    return numba.njit(boundscheck=True)(namespace[name])


def _numpy_window_helpers():
    """The NumPy helpers of windows, with the ones they call (_window, _window_add, _scatter_sum)."""
    namespace = {"xp": np}
    for name in ("_scatter_sum", "_window", "_window_add", "_window_matvec", "_window_vecmat", "_window_outer_add"):
        exec(HELPERS[name].source, namespace)
    return namespace


_NUMPY_WINDOWS = _numpy_window_helpers()
_WINDOW_HELPERS = {name: (_numba_helper(name), _NUMPY_WINDOWS[name])
                   for name in ("_window_matvec", "_window_vecmat", "_window_outer_add")}


@settings(deadline=None, max_examples=60)       # (the first example compiles)
@given(x=arrays(np.float64, st.integers(1, 12), elements=_floats), lo=st.integers(-3, 6),
       n0=st.integers(0, 8), n1=st.integers(0, 4), data=st.data())
def test_window_loops_are_the_numpy_helpers(x, lo, n0, n1, data):
    """The window contractions as loops equal NumPy's correlate/convolve helpers, in bounds and out of them
    (a window past either end wraps, as the NumPy helpers' gather does)."""
    h = data.draw(arrays(np.float64, n1, elements=_floats))
    g = data.draw(arrays(np.float64, n0, elements=_floats))
    (mv, mv_np), (vm, vm_np), (oa, oa_np) = (_WINDOW_HELPERS[k] for k in
                                             ("_window_matvec", "_window_vecmat", "_window_outer_add"))
    np.testing.assert_allclose(mv(x, lo, n0, n1, h), mv_np(x, lo, n0, n1, h), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(vm(g, x, lo, n0, n1), vm_np(g, x, lo, n0, n1), rtol=1e-12, atol=1e-12)
    b, b_np = x.copy(), x.copy()
    oa(b, lo, n0, n1, g, h)
    oa_np(b_np, lo, n0, n1, g, h)
    np.testing.assert_allclose(b, b_np, rtol=1e-12, atol=1e-12)


@numba.njit
def _max_rows(m):
    return xp.max(m, axis=0, keepdims=False)


def test_an_empty_reduction_along_an_axis_says_what_numpy_says():
    with pytest.raises(ValueError) as numpy_says:
        np.max(np.empty((0, 3)), axis=0)
    with pytest.raises(ValueError) as numba_says:
        _max_rows(np.empty((0, 3)))
    assert str(numba_says.value) == str(numpy_says.value)


def test_asarray_of_an_array_of_its_dtype_is_the_array_as_numpys():
    """NumPy's ``asarray(m, dtype=m.dtype)`` is ``m`` itself, and ``copy=True`` copies; a choice's array arm is
    printed ``asarray(m, dtype=float64)`` (lower/branches.py), which copied every element under numba."""
    @numba.njit
    def both(m, flags):
        return (xp.asarray(m, dtype=xp.float64), xp.asarray(m, dtype=xp.float64, copy=True),
                xp.asarray(flags, dtype=xp.float64))

    m, flags = np.arange(4.0), np.arange(4) > 1
    same, copied, converted = both(m, flags)
    for got, want in zip((same, copied, converted), (np.asarray(m, dtype=np.float64),
                                                     np.asarray(m, dtype=np.float64, copy=True),
                                                     np.asarray(flags, dtype=np.float64)), strict=True):
        assert np.array_equal(got, want) and got.dtype == want.dtype
        assert np.shares_memory(got, m) == np.shares_memory(want, m)
