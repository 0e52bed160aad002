"""Sums and means over an array's leading axes, and ``roll`` along any axis, in the numba namespace against
NumPy's, to the bit (``numba_xp_reductions._ROW_LEADING``, ``numba_xp_arrays._roll``).

A sum over the leading axes is read in row-major order (no transposed copy), each kept element's adds in
sequence (row 0 of the reduced axes first), as the row loop over a transposed copy added them before and as
NumPy adds rows along a leading axis: these tests check it exactly against that sequence (NumPy's
``add.reduce`` of the rows one by one) and to 1e-12 against ``np.sum``/``np.mean`` (which sums pairwise where
the kept elements are one, a contiguous block), including empty axes (0 for a sum, NaN for a mean), integer
and boolean sums (int64) and non-contiguous arguments.  ``roll`` moves two contiguous blocks per leading
index: exactly NumPy's.  ``einsum`` with a summed letter before an output letter in the largest operand
(``i,ij->j``) loops in that operand's memory order, each output element's adds still in sequence.
"""

from __future__ import annotations

import warnings

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from coarsen_nb.lower import numba_xp_arrays  # noqa: F401 (its roll joins xp)
from coarsen_nb.lower.numba_xp_groups import xp


@numba.njit
def _leading(x):
    return (xp.sum(x, axis=0, keepdims=False), xp.mean(x, axis=0, keepdims=True),
            xp.sum(x, axis=(0, 1), keepdims=True), xp.mean(x, axis=(-3, -2), keepdims=False))


def _in_sequence(x, k, keep_shape, mean=False):
    """x's sum over its first k axes, the rows added one after another (row 0 first), reshaped."""
    rows = x.reshape((int(np.prod(x.shape[:k])), int(np.prod(x.shape[k:]))))
    total = np.zeros(rows.shape[1], dtype=np.float64 if mean or x.dtype.kind == "f" else np.int64)
    for r in rows:
        total = total + r
    if mean:
        with np.errstate(invalid="ignore"):
            total = total / rows.shape[0] if rows.shape[0] else np.full(rows.shape[1], np.nan)
    return total.reshape(keep_shape)


def _sequential_leading(x):
    return (_in_sequence(x, 1, x.shape[1:]), _in_sequence(x, 1, (1,) + x.shape[1:], mean=True),
            _in_sequence(x, 2, (1, 1) + x.shape[2:]), _in_sequence(x, 2, x.shape[2:], mean=True))


def _numpy_leading(x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)         # (the mean of an empty axis: NaN)
        return (np.sum(x, axis=0), np.mean(x, axis=0, keepdims=True), np.sum(x, axis=(0, 1), keepdims=True),
                np.mean(x, axis=(0, 1)))


def _check(x):
    for got, seq, want in zip(_leading(x), _sequential_leading(x), _numpy_leading(x), strict=True):
        _exactly(got, seq)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)


def _exactly(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
    assert np.array_equal(got, want, equal_nan=True), (got, want)


@settings(deadline=None, max_examples=40)       # (the first example compiles)
@given(arrays(np.float64, st.tuples(st.integers(0, 40), st.integers(0, 3), st.integers(1, 5)),
              elements=st.floats(-1e6, 1e6, allow_nan=False, width=64)))
def test_sum_and_mean_over_leading_axes_add_rows_in_sequence(x):
    _check(x)


def test_leading_sums_of_long_columns_of_a_transposed_view():
    x = np.random.default_rng(3).normal(size=(5, 3, 20000)).T           # (20000, 3, 5), not contiguous
    _check(x)


@numba.njit
def _int_sums(k, b):
    return xp.sum(k, axis=0, keepdims=False), xp.sum(b, axis=(0, 1), keepdims=False), xp.mean(k, axis=0,
                                                                                             keepdims=False)


def test_integer_and_boolean_sums_over_leading_axes():
    k = np.random.default_rng(4).integers(-9, 9, size=(30, 2, 3))
    got = _int_sums(k, k > 0)
    for g, w in zip(got, (k.sum(axis=0), (k > 0).sum(axis=(0, 1)), _in_sequence(k, 1, (2, 3), mean=True)),
                    strict=True):
        _exactly(g, w)


@numba.njit
def _roll(x, shift, axis):
    return xp.roll(x, shift=shift, axis=axis)


@pytest.mark.parametrize("shape", [(4, 3, 5), (0, 3, 2), (3, 0, 2), (2, 3, 0), (1, 1, 1)])
def test_roll_of_a_3d_array_along_each_axis(shape):
    x = np.arange(float(np.prod(shape))).reshape(shape) * 1.5
    for source in (x, np.ascontiguousarray(x.transpose(2, 1, 0)).transpose(2, 1, 0)):
        for axis in (-3, -2, -1, 0, 1, 2):
            for shift in (-8, -1, 0, 1, 2, 4, 11):
                _exactly(_roll(source, shift, axis), np.roll(source, shift, axis=axis))


@numba.njit
def _einsum_summed_outside(b, A, C):
    return xp.einsum('i,ij->j', b, A), xp.einsum('ij->j', A), xp.einsum('ji,jk->ik', A, C)


def test_einsum_summed_over_the_leading_letter_adds_rows_in_sequence():
    """``i,ij->j`` (the adjoint of a matrix-vector product) loops over i outside j, in A's memory order: each
    output element's products are still added for i = 0, 1, ... in turn, so the value is that sequence's."""
    rng = np.random.default_rng(5)
    b, A, C = rng.normal(size=3000), rng.normal(size=(3000, 4)), rng.normal(size=(3000, 2))
    got = _einsum_summed_outside(b, A, C)
    want = [np.zeros(4), np.zeros(4), np.zeros((4, 2))]
    for i in range(3000):
        want[0] = want[0] + b[i] * A[i]
        want[1] = want[1] + A[i]
        want[2] = want[2] + A[i][:, None] * C[i][None, :]
    for g, w, sub in zip(got, want, ('i,ij->j', 'ij->j', 'ji,jk->ik'), strict=True):
        _exactly(g, w)
        np.testing.assert_allclose(g, np.einsum(sub, *((b, A) if sub == 'i,ij->j' else (A,) if sub == 'ij->j'
                                                         else (A, C))), rtol=1e-10, atol=1e-10)
