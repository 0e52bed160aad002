"""The numba namespace's broadcasting loops (``lower/numba_xp_broadcast.py``) give NumPy's answers to the bit.

They replace Numba's ``np.broadcast_shapes``/``np.broadcast_to`` and a slice ``+=`` because those were slow to
compile (issue 14's cold bar); what must not change is the result.  ``broadcast_to``, ``put`` and ``sum_to``
are compared in ``test_numba_xp.py`` and ``test_numba_fast_paths.py``; here ``broadcast_shapes`` against
NumPy's, and the numba helper ``_scatter_add`` against the NumPy backend's helper of the same name (its text
run on NumPy): in bounds, with a step, out of bounds with wrapped and repeated indices (the NumPy helper's
bincount adds those up first: the same order here, so equal to the bit), a number, a 0-d and a length-1
array as the value, rows of a matrix; and the same ValueError where NumPy raises one; and the numba
helper ``_flat_as`` against NumPy's ``broadcast_to(x, shape).ravel()``.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest

from coarsen_nb.lower.helpers import HELPERS
from coarsen_nb.lower.numba_helpers import NUMBA_HELPERS
from coarsen_nb.lower.numba_xp_broadcast import xp


def _numpy_scatter_add():
    namespace = {"xp": np}
    for name in ("_scatter_sum", "_scatter_add"):
        exec(HELPERS[name].source, namespace)
    return namespace["_scatter_add"]


def _numba_scatter_add():
    namespace = {"xp": xp}
    exec(NUMBA_HELPERS["_scatter_add"], namespace)
    return numba.njit(boundscheck=True)(namespace["_scatter_add"])


_NUMPY_SCATTER_ADD = _numpy_scatter_add()
_NUMBA_SCATTER_ADD = _numba_scatter_add()
_RNG = np.random.default_rng(14)

# (b's shape, lo, n, step, v): in bounds, with a step, wrapped past the end and repeated, from a negative
# start, a number, a 0-d and a length-1 value, nothing to add, rows of a matrix (v a matrix, a row, a number)
_CASES = [((6,), 1, 4, 1, _RNG.normal(size=4)), ((7,), 0, 3, 2, _RNG.normal(size=3)),
          ((5,), 3, 9, 1, _RNG.normal(size=9)), ((5,), -2, 3, 1, _RNG.normal(size=3)),
          ((5,), 1, 3, 1, 2.5), ((5,), 4, 3, 1, np.array(0.75)), ((5,), 0, 4, 1, np.array([1.25])),
          ((5,), 0, 0, 1, _RNG.normal(size=3)), ((4, 3), 1, 2, 1, _RNG.normal(size=(2, 3))),
          ((4, 3), 0, 4, 1, _RNG.normal(size=3)), ((4, 3), 0, 2, 2, 1.5)]


@pytest.mark.parametrize("shape, lo, n, step, v", _CASES)
def test_scatter_add_equals_the_numpy_helper(shape, lo, n, step, v):
    b = _RNG.normal(size=shape)
    want, got = b.copy(), b.copy()
    _NUMPY_SCATTER_ADD(want, lo, n, step, v)
    _NUMBA_SCATTER_ADD(got, lo, n, step, v)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("lo", [0, 4])        # (in bounds: the slice; wrapped: bincount's sums)
def test_scatter_add_of_a_value_of_another_length_is_numpys_value_error(lo):
    with pytest.raises(ValueError):
        _NUMPY_SCATTER_ADD(np.zeros(6), lo, 3, 1, np.ones(2))
    with pytest.raises(ValueError):
        _NUMBA_SCATTER_ADD(np.zeros(6), lo, 3, 1, np.ones(2))


@numba.njit
def _shapes(a, b, c):
    return xp.broadcast_shapes(a, b), xp.broadcast_shapes(a, c), xp.broadcast_shapes(b)


@pytest.mark.parametrize("a, b, c", [((4, 1), (3,), (2, 1, 1)), ((1, 5), (5,), (1,)), ((2, 3), (1, 3), (3,))])
def test_broadcast_shapes_equals_numpys(a, b, c):
    assert _shapes(a, b, c) == (np.broadcast_shapes(a, b), np.broadcast_shapes(a, c), np.broadcast_shapes(b))


def test_broadcast_shapes_of_lengths_that_differ_is_a_value_error():
    with pytest.raises(ValueError):
        np.broadcast_shapes((4, 2), (3,))
    with pytest.raises(ValueError):
        _shapes((4, 2), (3,), (1,))


@numba.njit
def _flat(x, m, z, n):
    return (xp.flat_as(x, (n,)), xp.flat_as(x, (3, n)), xp.flat_as(m, (3, n)), xp.flat_as(m[:, :1], (3, n)),
            xp.flat_as(m[:1, :], (3, n)), xp.flat_as(m.T, (n, 3)), xp.flat_as(z, (2, n)))


def test_flat_as_equals_numpys_broadcast_and_ravel():
    n = 4
    x, m, z = _RNG.normal(size=n), _RNG.normal(size=(3, n)), np.array(2.5)
    want = (x, np.broadcast_to(x, (3, n)).ravel(), m.ravel(), np.broadcast_to(m[:, :1], (3, n)).ravel(),
            np.broadcast_to(m[:1, :], (3, n)).ravel(), m.T.ravel(), np.full(2 * n, 2.5))
    for got, expected in zip(_flat(x, m, z, n), want, strict=True):
        assert got.flags.c_contiguous
        np.testing.assert_array_equal(got, expected)
    with pytest.raises(ValueError):
        _flat(x, m, z, n + 1)           # (x of length n over n + 1 elements: NumPy's error too)


@numba.njit
def _flat_vectors(x, n):
    return xp.flat_as(x, (n,)), xp.flat_as(x[::2], (n // 2,)), xp.flat_as(x[:1], (n,))


def test_flat_as_of_a_vector_is_the_vector_itself_or_numpys_copy():
    """A C-ordered vector of the very shape is returned as it is (no copy; x typed 'C' says it is contiguous), a
    strided one (typed 'A') copied, a length-1 one broadcast into a fresh float64 array; an integer vector keeps its
    dtype; and the lengths that differ raise NumPy's ValueError."""
    n = 6
    x = _RNG.normal(size=n)
    same, strided, repeated = _flat_vectors(x, n)
    assert np.shares_memory(same, x)
    np.testing.assert_array_equal(same, x)
    np.testing.assert_array_equal(strided, x[::2])
    assert strided.flags.c_contiguous and not np.shares_memory(strided, x)
    np.testing.assert_array_equal(repeated, np.broadcast_to(x[:1], (n,)))
    assert repeated.dtype == np.float64
    ints = np.arange(n)
    got = _flat_vectors(ints, n)
    for g, want in zip(got, (ints, ints[::2], np.broadcast_to(ints[:1], (n,))), strict=True):
        assert g.dtype == ints.dtype
        np.testing.assert_array_equal(g, want)
    with pytest.raises(ValueError):
        _flat_vectors(x, n + 2)
