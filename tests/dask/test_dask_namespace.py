"""The dask module's ``xp`` namespace and its own helpers against NumPy's and the NumPy backend's helpers.

Each function is called as a generated dask module calls it, on Dask arrays of uneven chunks, and compared
with what the NumPy module computes on the same NumPy arrays (``lower/special_helpers.py``, NumPy itself,
SciPy's ``logsumexp``).
"""

from __future__ import annotations

import dask
import numpy as np
import pytest
from dask_chunks import chunked

from coarsen_nb.lower import dask_helpers, special_helpers
from coarsen_nb.lower.dask_xp import xp

scipy_special = pytest.importorskip("scipy.special")


@pytest.fixture(autouse=True)
def _local_scheduler():
    with dask.config.set(scheduler="sync"):
        yield


def test_erf_equals_the_numpy_helper_on_both_sides_of_one():
    x = np.concatenate([np.linspace(-7.0, 7.0, 57), [0.0, -1.0, 1.0, np.inf, -np.inf]])
    got = dask_helpers._erf(chunked(x, "uneven")).compute()
    np.testing.assert_array_equal(got, special_helpers._erf(x))


def test_masked_lanes_are_taken_and_written_back_chunk_by_chunk():
    """NumPy's ``ix = nonzero(m)[0]; g = take(a, ix); c[ix] = f(g)``: only the selected lanes are evaluated."""
    a = np.linspace(-2.0, 2.0, 11)
    c = a * a
    da_a = chunked(a, "uneven")
    (ix,) = xp.nonzero(da_a < 0.5)
    g = xp.take(da_a, ix, axis=0)
    assert np.isnan(ix.shape[0])                    # unknown until computed, and true for `if ix.shape[0]:`
    np.testing.assert_array_equal(g.compute(), a[a < 0.5])
    got = dask_helpers._put(chunked(c, "uneven"), (ix,), xp.log(g + 3.0)).compute()
    want = c.copy()
    want[a < 0.5] = np.log(a[a < 0.5] + 3.0)
    np.testing.assert_array_equal(got, want)


def test_logsumexp_equals_scipys():
    a = np.random.default_rng(0).standard_normal((7, 5)) * 30.0
    a[2, :] = -np.inf
    for axis in (None, 0, 1):
        for keepdims in (False, True):
            got = dask_helpers._logsumexp(chunked(a, "uneven"), axis=axis, keepdims=keepdims).compute()
            want = scipy_special.logsumexp(a, axis=axis, keepdims=keepdims)
            np.testing.assert_allclose(got, want, rtol=1e-14)


def test_scatter_sum_puts_weights_of_other_chunks_at_their_indices():
    idx = np.array([0, 3, 3, 1, 4, 0, 2])
    v = np.linspace(1.0, 7.0, 7)
    got = dask_helpers._scatter_sum(chunked(idx, "uneven"), chunked(v, "single"), 6).compute()
    np.testing.assert_array_equal(got, np.bincount(idx, weights=v, minlength=6))


@pytest.mark.parametrize("include_initial", [False, True])
def test_cumulative_sum_and_prod_as_the_array_api_says(include_initial):
    x = np.random.default_rng(1).standard_normal((4, 6))
    for name in ("cumulative_sum", "cumulative_prod"):
        got = getattr(xp, name)(chunked(x, "uneven", axis=1), axis=1, include_initial=include_initial).compute()
        np.testing.assert_allclose(got, getattr(np, name)(x, axis=1, include_initial=include_initial), rtol=1e-15)


def test_a_copy_is_a_new_array_object():
    x = chunked(np.arange(5.0), "uneven")
    y = xp.asarray(x, dtype=xp.float64, copy=True)
    y[1] = 10.0
    np.testing.assert_array_equal(x.compute(), np.arange(5.0))


def test_a_function_without_a_lazy_form_says_so():
    with pytest.raises(NotImplementedError, match="convolve has no lazy form over Dask arrays"):
        _ = xp.convolve
    with pytest.raises(NotImplementedError, match="linalg.slogdet has no lazy form"):
        _ = xp.linalg.slogdet
