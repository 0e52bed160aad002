"""A max's (min's) adjoint over axes adds each group's cotangent at the group's first arg-extremum
(``_add_at_first_extremum``, the rule table's ``AddedBy``): in place at that one element under numba and NumPy,
with no one-hot of the table's size (a NaN or infinite cotangent stays at its element: the one-hot's product
spread 0 * NaN over the group).

What must hold (hypothesis; ties, NaN of both signs, ±0, ±inf, empty tables): the numba backend's value and
gradient equal the NumPy backend's bit for bit, the gradient puts each row's weight at NumPy's ``argmax``
(the first extremum, the first NaN), and on distinct values it is the central finite differences'.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coarsen_nb as cn
from coarsen_nb.numba_loader import NumbaFallbackWarning

pytest.importorskip("numba")

SOURCE = '''import numpy as np


def rows(X, w):
    return np.sum(np.max(X, axis=1) * w) + np.sum(np.min(X, axis=0) ** 2)


def row_maxima(X, w):
    return np.sum(np.max(X, axis=1) * w)


def over_two_axes(T, w):
    return np.sum(np.amax(T, axis=(0, 2)) * w) + np.sum(np.amin(T, axis=-1, keepdims=True) * T)
'''


def _namespace() -> dict:
    space: dict = {}
    exec(SOURCE, space)     # noqa: S102 (the functions above, as a user's cell defines them)
    return space


@pytest.fixture(scope="module")
def compiled():
    space, out = _namespace(), {}
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumbaFallbackWarning)      # (a fallback to NumPy code fails here)
        for name, args in (("rows", (np.ones((2, 3)), np.ones(2))),
                           ("over_two_axes", (np.ones((2, 3, 2)), np.ones(3)))):
            numba_f = cn.coarsen(SOURCE, name=name, backend="numba")
            numba_f.grad(*args)
            assert "_add_at_first_extremum(" in numba_f.source and "xp.add_at_first_extremum" in numba_f.source
            out[name] = numba_f, cn.coarsen(SOURCE, name=name, backend="numpy"), space[name]
    return out


def _same(got, want) -> None:
    for g, w in zip(got, want, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        np.testing.assert_array_equal(g, w)
        # (±0 too; a NaN's sign is the forward max's, NumPy's SIMD loop's own: the gradient wrt w is that max)
        assert np.array_equal(np.signbit(g[g == g]), np.signbit(w[w == w]))


_SPECIAL = st.sampled_from([math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 2.5])
_ELEMENT = st.one_of(_SPECIAL, st.floats(min_value=-1e100, max_value=1e100, width=64))


def _tables(shape_strategy):
    return shape_strategy.flatmap(lambda shape: st.lists(
        _ELEMENT, min_size=math.prod(shape), max_size=math.prod(shape)).map(
        lambda v: np.array(v, dtype=np.float64).reshape(shape)))


@settings(max_examples=120, deadline=None)
@given(X=_tables(st.tuples(st.integers(1, 5), st.integers(1, 9))), data=st.data())
def test_rows_equal_the_numpy_backend_bit_for_bit(compiled, X, data):
    numba_f, numpy_f, _ = compiled["rows"]
    w = np.array(data.draw(st.lists(st.sampled_from([1.0, -2.0, 0.5, -0.0]), min_size=X.shape[0],
                                    max_size=X.shape[0])))
    with np.errstate(all="ignore"):
        _same(numba_f.grad(X, w), numpy_f.grad(X, w))


@settings(max_examples=60, deadline=None)
@given(T=_tables(st.tuples(st.integers(1, 3), st.integers(1, 4), st.integers(1, 3))))
def test_several_axes_equal_the_numpy_backend_bit_for_bit(compiled, T):
    numba_f, numpy_f, _ = compiled["over_two_axes"]
    w = np.linspace(-1.0, 2.0, T.shape[1])
    with np.errstate(all="ignore"):
        _same(numba_f.grad(T, w), numpy_f.grad(T, w))


@settings(max_examples=60, deadline=None)
@given(X=st.integers(2, 5).flatmap(lambda n: st.lists(
    st.floats(-10, 10, width=64), min_size=3 * n, max_size=3 * n, unique=True).map(
    lambda v: np.array(v).reshape(-1, 3))))
def test_rows_against_finite_differences(compiled, X):
    """On distinct values (at least 1e-3 apart, so that h = 1e-6 moves no arg-extremum) the gradient is the
    central finite differences' of the plain function."""
    numba_f, _, plain = compiled["rows"]
    flat = np.sort(X.ravel())
    if np.min(np.diff(flat)) < 1e-3:
        return
    w = np.linspace(0.5, 1.5, X.shape[0])
    gX, gw = numba_f.grad(X, w)
    h, fd = 1e-6, np.zeros_like(X)
    for idx in np.ndindex(X.shape):
        up, down = X.copy(), X.copy()
        up[idx] += h
        down[idx] -= h
        fd[idx] = (plain(up, w) - plain(down, w)) / (2 * h)
    np.testing.assert_allclose(gX, fd, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(gw, np.max(X, axis=1), rtol=1e-15)


def test_ties_go_to_the_first_extremum_row_by_row(compiled):
    numba_f, _, _ = compiled["rows"]
    X = np.array([[1.0, 3.0, 3.0, -1.0], [2.0, 2.0, 2.0, 2.0], [-0.0, 0.0, -1.0, math.nan],
                  [math.nan, 1.0, -math.nan, 0.0]])
    w = np.array([1.0, 2.0, 3.0, 4.0])
    want = np.zeros_like(X)
    want[np.arange(4), np.argmax(X, axis=1)] += w
    mins = np.min(X, axis=0)
    want[np.argmin(X, axis=0), np.arange(4)] += 2 * mins
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(numba_f.grad(X, w)[0], want)


def test_empty_tables(compiled):
    """No rows: nothing to add (an empty gradient, both backends); a max over no columns (or a min over no
    rows) raises NumPy's ValueError, as the plain function does."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumbaFallbackWarning)
        numba_f = cn.coarsen(SOURCE, name="row_maxima", backend="numba")
        numpy_f = cn.coarsen(SOURCE, name="row_maxima", backend="numpy")
        X, w = np.zeros((0, 3)), np.zeros(0)
        _same(numba_f.grad(X, w), numpy_f.grad(X, w))
        assert numba_f.grad(X, w)[0].shape == (0, 3)
    rows_f, _, plain = compiled["rows"]
    for X, w in ((np.zeros((2, 0)), np.ones(2)), (np.zeros((0, 3)), np.zeros(0))):
        with pytest.raises(ValueError):
            plain(X, w)
        with pytest.raises(ValueError):
            rows_f.grad(X, w)
