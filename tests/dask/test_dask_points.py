"""The dask printer's pointwise reads and Python's sign (lower/dask_printing.py, dask_helpers' ``_gather_points``
and ``_python_sign``): each equals NumPy's (or Python's) on the same values, and builds its graph without
computing the data."""

from __future__ import annotations

import math

import dask
import numpy as np
import pytest
from dask_chunks import EarlyComputes, chunked, computed

import coarsen_nb as cn
from coarsen_nb.lower import dask_helpers
from coarsen_nb.lower.dask_xp import xp

M = np.arange(20.0).reshape(4, 5) ** 1.5


@pytest.mark.parametrize("how", ["one", "uneven", "single"])
def test_points_at_index_arrays_known_without_the_data_equal_numpys(how):
    i, j = xp.arange(4) % 3, 4 - xp.arange(4)       # (shape-only graphs: read through vindex)
    got = dask_helpers._gather_points(chunked(M, how), (i, j))
    np.testing.assert_array_equal(got.compute(), M[np.arange(4) % 3, 4 - np.arange(4)])
    rows, cols = np.array([[0], [-1]]), np.array([[1, -2, 4]])      # (NumPy indices, negative, broadcast)
    got = dask_helpers._gather_points(chunked(M, how), (rows, cols))
    np.testing.assert_array_equal(got.compute(), M[rows, cols])


@pytest.mark.parametrize("how", ["one", "uneven", "single"])
def test_points_at_index_arrays_computed_from_the_data_equal_numpys_and_stay_lazy(how):
    rows, cols = np.array([3, 0, -4, 2, -1]), np.array([0, 4, -5, 2, -1])
    with dask.config.set(scheduler=EarlyComputes(dask.get, fail=True)):
        got = dask_helpers._gather_points(chunked(M, how), (chunked(rows, how), chunked(cols, how)))
    np.testing.assert_array_equal(got.compute(), M[rows, cols])


def test_a_point_outside_the_array_raises_when_computed_as_numpys_read_does():
    rows, cols = np.array([0, 1]), np.array([2, 5])      # (5 is past axis 1: not the next row's first element)
    with pytest.raises(IndexError):
        _ = M[rows, cols]
    got = dask_helpers._gather_points(chunked(M, "uneven"), (chunked(rows, "uneven"), chunked(cols, "uneven")))
    with pytest.raises(IndexError):
        got.compute()


def test_one_index_array_or_a_numpy_array_is_plain_indexing():
    np.testing.assert_array_equal(dask_helpers._gather_points(M, (np.array([1, 2]), np.array([0, 3]))),
                                  M[[1, 2], [0, 3]])
    got = dask_helpers._gather_points(chunked(M, "uneven"), (np.array([1, 2]), 3))
    np.testing.assert_array_equal(got.compute(), M[[1, 2], 3])


@pytest.mark.parametrize("a", [2.5, -0.25, 0.0, -0.0, math.nan, math.inf, -math.inf])
def test_pythons_sign_of_a_reduced_value_is_lazy_and_pythons(a):
    want = 1.0 if a > 0 else (-1.0 if a < 0 else 0.0)
    assert dask_helpers._python_sign(a) == want
    with dask.config.set(scheduler=EarlyComputes(dask.get, fail=True)):
        got = dask_helpers._python_sign(xp.sum(chunked(np.array([a, 0.0, 0.0]), "single")))
    assert isinstance(got, xp.Array) and got.compute() == want


TRIANGLE = '''
def triangle(m):
    return sum(m[i, j] * m[j, i] for i in range(m.shape[0]) for j in range(i, m.shape[1]))
'''

PICKED = '''
def picked(m, rows):
    return sum(m[rows[k], k] ** 2 for k in range(len(rows)))
'''


@pytest.mark.parametrize("how", ["one", "uneven", "single"])
def test_a_matrix_read_at_two_index_arrays_equals_the_numpy_backend_and_stays_lazy(how):
    """``m[i, j]`` over a triangle (index arrays from shapes alone) and ``m[rows[k], k]`` (one index array an
    argument's data): the dask module reads them through ``_gather_points``, the NumPy module indexes."""
    m = np.random.default_rng(3).normal(size=(5, 5))
    rows = np.array([4, 0, 3, 3, 1])
    for src, args in ((TRIANGLE, (m,)), (PICKED, (m, rows))):
        f, ref = cn.coarsen(src, wrt="m"), cn.coarsen(src, wrt="m", backend="numpy")
        want = ref.value_and_grad(*args)
        with dask.config.set(scheduler=EarlyComputes(dask.get, fail=True)):
            got = f.value_and_grad(*(chunked(a, how) for a in args))
        with dask.config.set(scheduler="sync"):
            value, (grad,) = computed(got[0]), (computed(got[1][0]),)
        np.testing.assert_allclose(value, want[0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(grad, want[1][0], rtol=1e-12, atol=1e-12)
        assert "_gather_points(m, (" in f.source and "_gather_points" not in ref.source
