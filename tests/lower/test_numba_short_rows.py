"""The numba namespace along short rows (stop 43, h-rows17): ``xp.sum``/``xp.mean`` along the rows of a matrix
(each row summed by the inlined ``_block_sum``, no longer by ``_pairwise_sum``'s stack) equal NumPy's bit for
bit at every row length around the block's widths (8, 128); ``xp.sum_to`` of an array of the shape already is
that array (as the NumPy helper returns it, not a copy), and of a matrix to ``(n, 1)`` each row's sum in order;
a max's adjoint along rows (``ADD_ALONG_ROWS``) adds at NumPy's ``argmax`` (the first of ties, the first NaN)."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from coarsen_nb.lower.numba_xp_groups import xp


@numba.njit
def _row_sums(x):
    return xp.sum(x, axis=1, keepdims=True), xp.mean(x, axis=-1, keepdims=False)


@numba.njit
def _sum_to(g, shape):
    return xp.sum_to(g, shape)


@numba.njit
def _add_at_max(b, a, g):
    xp.add_at_first_extremum(b, a, (1,), g, 1)
    return b


@numba.njit
def _add_at_min(b, a, g):
    xp.add_at_first_extremum(b, a, (-1,), g, -1)
    return b


@pytest.mark.parametrize("k", [0, 1, 3, 7, 8, 9, 15, 16, 17, 127, 128, 129, 300])
def test_sums_along_rows_are_numpys_bit_for_bit(k):
    x = np.random.default_rng(k).normal(size=(23, k)) * 10.0 ** np.arange(k)[::-1] if k else np.zeros((23, 0))
    s, m = _row_sums(x)
    assert s.shape == (23, 1) and m.shape == (23,)
    assert s.tobytes() == np.sum(x, axis=1, keepdims=True).tobytes()
    if k:
        assert m.tobytes() == np.mean(x, axis=-1).tobytes()


def test_sum_to_of_its_own_shape_is_the_array_itself():
    g = np.random.default_rng(0).normal(size=(5, 3))
    out = _sum_to(g, (5, 3))
    assert out.shape == g.shape and np.shares_memory(out, g) and np.array_equal(out, g)


@pytest.mark.parametrize("shape", [(6, 1), (1, 4), (1, 1)])
def test_sum_to_a_matrix_of_fewer_points_is_numpys_sum(shape):
    g = np.random.default_rng(1).normal(size=(6, 4))
    axes = tuple(a for a in range(2) if shape[a] == 1)
    np.testing.assert_allclose(_sum_to(g, shape), g.sum(axis=axes, keepdims=True), rtol=1e-15, atol=1e-15)


def test_sum_to_rows_of_a_matrix_that_does_not_broadcast_is_an_error():
    with pytest.raises(ValueError):
        _sum_to(np.ones((6, 4)), (5, 1))


@pytest.mark.parametrize("g_shape", [(9, 1), (9, 5), (1, 1)])
def test_a_maximums_adjoint_along_rows_adds_at_numpys_argmax(g_shape):
    rng = np.random.default_rng(2)
    a = rng.integers(0, 3, size=(9, 5)).astype(float)     # ties in every row
    a[4, 3] = np.nan
    a[5, 1] = a[5, 4] = np.nan                            # the first NaN is the pick
    a[6] = -0.0
    a[6, 2] = 0.0                                         # equal zeros: the first
    g = rng.normal(size=g_shape)
    for add, pick in ((_add_at_max, np.argmax), (_add_at_min, np.argmin)):
        b = rng.normal(size=a.shape)
        want = b.copy()
        full = np.broadcast_to(g, a.shape)
        for o, j in enumerate(pick(a, axis=1)):
            want[o, j] += full[o, j]
        np.testing.assert_array_equal(add(b.copy(), a, g), want)
