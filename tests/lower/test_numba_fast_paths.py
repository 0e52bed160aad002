"""The numba backend's fast paths (issue 14, stop 29) give NumPy's answers: the contiguous reads
``_take``/``_block``, ``xp.broadcast_to`` of the result's rank, ``xp.nonzero`` of a vector, and the
float ``sum``/``mean`` over trailing axes as NumPy's pairwise summation (equal to the bit, not only to
rounding), compiled by Numba as a generated module compiles them.
"""

from __future__ import annotations

import warnings

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from test_numba_xp import _numba_helper, _numpy_helper

from coarsen_nb.lower.numba_xp_arrays import xp
from coarsen_nb.lower.numba_xp_reductions import xp as _xp_reductions  # noqa: F401 (its functions join xp)

_floats = st.floats(-4, 4, allow_nan=False, width=64)


@numba.njit
def _sums(x, m):
    return xp.sum(x), xp.mean(x), xp.sum(m, axis=1), xp.mean(m, axis=-1, keepdims=True), xp.sum(m, axis=0)


@settings(deadline=None, max_examples=60)       # (the first example compiles)
@given(st.integers(0, 1200), st.integers(1, 3), st.integers(0, 2**32 - 1))
def test_float_sums_are_numpys_to_the_bit(n, rows, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * 10.0 ** rng.uniform(-6, 6, n)
    m = rng.standard_normal((rows, n)) * 10.0 ** rng.uniform(-6, 6, (rows, n))
    got = _sums(x, m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)         # (NumPy's mean of nothing: nan, and a warning)
        want = (np.sum(x), np.mean(x), np.sum(m, axis=1), np.mean(m, axis=-1, keepdims=True), np.sum(m, axis=0))
    for g, w in zip(got, want, strict=True):
        assert np.array_equal(g, w, equal_nan=True), (g, w)


def test_a_long_sum_is_numpys_to_the_bit():
    x = np.random.default_rng(3).standard_normal(10**6 + 3) * 1e3
    assert _sums(x, x.reshape(1, -1))[0] == np.sum(x)


@numba.njit
def _nonzero(x):
    return xp.nonzero(x)[0]


@pytest.mark.parametrize("x", [np.array([0.0, np.nan, -0.0, 2.0, 0.0, -1e-300]), np.zeros(0), np.ones(3),
                               np.array([True, False, True, True]), np.arange(-2, 5)])
def test_nonzero_of_a_vector(x):
    got = _nonzero(x)
    assert np.array_equal(got, np.nonzero(x)[0]) and got.dtype == np.intp


@numba.njit
def _broadcasts(x, m, n):
    return (xp.broadcast_to(x, (n,)), xp.broadcast_to(m, (m.shape[0], n)), xp.broadcast_to(x, (2, n)),
            xp.broadcast_to(xp.asarray(1.5), (n,)), xp.asarray(xp.broadcast_to(x, (n,)), copy=True))


@settings(deadline=None, max_examples=30)
@given(st.integers(1, 6), st.booleans(), st.integers(0, 2**32 - 1))
def test_broadcast_to_of_the_same_rank(n, column, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n)
    m = rng.standard_normal((3, 1) if column else (3, n))
    got = _broadcasts(x, m, n)
    want = (np.broadcast_to(x, (n,)), np.broadcast_to(m, (3, n)), np.broadcast_to(x, (2, n)),
            np.broadcast_to(1.5, (n,)), x)
    for g, w in zip(got, want, strict=True):
        assert np.array_equal(g, w)
    assert got[0].flags.c_contiguous and got[1].flags.c_contiguous


_READS = {name: (_numba_helper(name), _numpy_helper(name)) for name in ("_take", "_block")}
_take = _READS["_take"][0]


@numba.njit
def _take_unit_step(x, lo, n):
    """``_take`` as generated code calls it: the step the constant 1 (its literal type reaches the helper)."""
    return _take(x, lo, n, 1)


@settings(deadline=None, max_examples=60)
@given(arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 5)), elements=_floats),
       st.integers(-3, 6), st.integers(0, 7), st.integers(1, 3), st.integers(-2, 4), st.integers(0, 5))
def test_contiguous_reads_are_the_numpy_helpers(m, lo, n, step, lo1, n1):
    """In bounds a C-ordered view or copy, out of bounds Python's indexing (IndexError past the end), as the
    NumPy helpers give: the same values, and C-contiguous (Numba's ``@`` copies any other layout whole)."""
    take, take_np = _READS["_take"]
    block, block_np = _READS["_block"]
    for x in (m, m[:, 0], m[::2]):
        try:
            want = take_np(x, lo, n, step)
        except IndexError:
            with pytest.raises(IndexError):
                take(x, lo, n, step)
            continue
        got = take(x, lo, n, step)
        assert np.array_equal(got, want) and got.flags.c_contiguous
        if step == 1:       # (x's own rows where the range is in bounds and they are contiguous, else a copy)
            got = _take_unit_step(x, lo, n)
            assert np.array_equal(got, want) and got.flags.c_contiguous
            view = n > 0 and 0 <= lo and lo + n <= x.shape[0] and x[lo:lo + n].flags.c_contiguous
            assert np.shares_memory(got, x) == view
    try:
        want = block_np(m, lo, n, lo1, n1)
    except IndexError:
        with pytest.raises(IndexError):
            block(m, lo, n, lo1, n1)
        return
    got = block(m, lo, n, lo1, n1)
    assert np.array_equal(got, want) and got.flags.c_contiguous


@pytest.mark.parametrize("name, args", [
    ("_window_matvec", (np.ones(10), 0, 7, 4, np.ones(3))),
    ("_window_vecmat", (np.ones(6), np.ones(10), 0, 7, 4)),
    ("_window_outer_add", (np.zeros(10), 0, 7, 4, np.ones(7), np.ones(5))),
])
def test_window_loops_check_their_vectors_lengths(name, args):
    """The window loops run without bounds checks: a vector of the wrong length is a ValueError first."""
    with pytest.raises(ValueError):
        _numba_helper(name)(*args)
