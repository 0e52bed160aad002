"""The dask module's ``xp`` namespace and its own helpers against NumPy's and the NumPy backend's helpers.

Each function is called as a generated dask module calls it, on Dask arrays of uneven chunks, and compared
with what the NumPy module computes on the same NumPy arrays (``lower/special_helpers.py``, NumPy itself,
SciPy's ``logsumexp``).
"""

from __future__ import annotations

import math

import dask
import numpy as np
import pytest
from dask_chunks import chunked

from coarsen_nb.lower import array_helpers, dask_helpers, dask_xp, scalar_helpers, special_helpers
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


def test_erfc_equals_the_numpy_helper_in_each_of_its_three_ranges():
    """The where form evaluates all three of the NumPy helper's forms everywhere (each on |x| clipped into its
    range) and selects one: the selected one is the NumPy helper's, to the bit."""
    x = np.concatenate([np.linspace(-30.0, 30.0, 241), [0.0, -0.0, 1.0, -1.0, 8.0, -8.0, np.inf, -np.inf, np.nan]])
    got = dask_helpers._erfc(chunked(x, "uneven"))
    assert isinstance(got, xp.Array)
    np.testing.assert_array_equal(got.compute(), special_helpers._erfc(x))


EDGES = (0.0, -0.0, 1.5, -2.0, 40.0, -800.0, math.inf, -math.inf, math.nan)


@pytest.mark.parametrize("name", ["_softplus", "_sigmoid"])
def test_a_scalar_helper_of_a_0d_dask_array_is_the_numpy_backends_of_its_value(name):
    for z in EDGES:
        got = getattr(dask_helpers, name)(xp.asarray(z))
        assert isinstance(got, xp.Array)
        np.testing.assert_array_equal(got.compute(), getattr(scalar_helpers, name)(z), err_msg=repr(z))
        assert getattr(dask_helpers, name)(z) == getattr(scalar_helpers, name)(z) or math.isnan(z)


def test_ieee_div_of_0d_dask_arrays_is_the_numpy_backends_at_every_edge():
    for a in EDGES:
        for b in EDGES:
            got = dask_helpers._ieee_div(xp.asarray(a), xp.asarray(b))
            np.testing.assert_array_equal(got.compute(), scalar_helpers._ieee_div(a, b), err_msg=f"{a!r} / {b!r}")


@pytest.mark.parametrize("a", [0.5, -0.9, 0.0, 1e-200, np.linspace(0.1, 0.9, 13)])
def test_lin_scan_keeps_a_number_coefficient_a_number_with_the_numpy_helpers_values(a):
    b = np.linspace(-1.0, 2.0, 13)
    got = dask_helpers._lin_scan(a, chunked(b, "uneven"), 0.25, 13)
    np.testing.assert_array_equal(got.compute(), array_helpers._lin_scan(a, b, 0.25, 13))


def test_math_of_a_0d_dask_array_is_lazy_pythons_value_and_pythons_error():
    total = xp.sum(chunked(np.array([0.5, 1.0, 2.0, 4.0]), "uneven"))
    for name, args in [("log", (total,)), ("log", (total, 2.0)), ("tanh", (total,)), ("atan2", (1.0, total)),
                       ("sqrt", (total,)), ("exp", (total,)), ("pow", (total, 0.5))]:
        got = getattr(dask_xp.math, name)(*args)
        assert isinstance(got, xp.Array) and got.ndim == 0, name
        assert got.compute() == getattr(math, name)(*(7.5 if a is total else a for a in args)), name
    assert dask_xp.math.log(7.5) == math.log(7.5) and dask_xp.math.pi == math.pi
    with pytest.raises(ValueError, match="math domain error"):
        dask_xp.math.log(total * 0.0).compute()
    with pytest.raises(OverflowError):
        dask_xp.math.exp(total * 1000.0).compute()
    lit = xp.asarray([dask_xp.float(total), dask_xp.float(total * 2)], dtype=xp.float64)
    assert isinstance(lit, xp.Array) and list(lit.compute()) == [7.5, 15.0]
    assert dask_xp.float("2.5") == 2.5


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
    """(``convolve`` and ``linalg.slogdet`` were such functions: lower/dask_xp_forms.py has their forms now)"""
    with pytest.raises(NotImplementedError, match="argsort has no lazy form over Dask arrays"):
        _ = xp.argsort
    with pytest.raises(NotImplementedError, match="linalg.eigh has no lazy form"):
        _ = xp.linalg.eigh


@pytest.mark.parametrize("t", [True, False, np.True_, np.False_])
def test_where_of_a_plain_truth_value_between_numbers_is_pythons_choice(t):
    """``choice = xp.where(t2, a, b)`` (a scalar choice, lower/branches.py) keeps a Python int a Python int
    where ``t2`` is a plain truth value: a size chosen so is still a size (``arange``, slices)."""
    got = xp.where(t, 3, 5)
    assert got == (3 if t else 5) and type(got) is int
    assert isinstance(xp.where(t, chunked(np.arange(4.0), "uneven"), 0.0), xp.Array)  # (an array arm: dask's)


@pytest.mark.parametrize("t", [True, False])
def test_where_of_a_reduced_truth_value_is_lazy_and_numpys_choice(t):
    x = np.array([0.5, -2.0, 3.0, 1.0])
    total = xp.sum(chunked(x, "uneven"))
    cond = total > 0 if t else total < 0
    for a, b in ((total, -math.inf), (1, 0), (0, total)):
        got = xp.where(cond, a, b)
        assert isinstance(got, xp.Array) and got.ndim == 0
        want = np.where(x.sum() > 0 if t else x.sum() < 0, x.sum() if a is total else a, x.sum() if b is total else b)
        assert got.compute() == want
