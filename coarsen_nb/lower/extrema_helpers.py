"""The generated module's max and min of a loop: the array namespace's reduction, with the loop's zero.

The user's loop ``m = min(m, v)`` (``if v < m: m = v``) keeps the first of equal values; -0.0 == 0.0, so of
a row's zeros it keeps the first, which ``1 / m`` or ``math.copysign`` tell apart.  NumPy's ``max`` and ``min``
keep whichever zero their order meets last (``np.min([-0.0, 0.0])`` is 0.0, the loop's -0.0): the NumPy
backend's nest gave +inf where the plain function and numba gave -inf (``test_numba_nest_extrema[min]``).
These helpers reduce as the namespace does, then, where a result is a zero (one comparison per result says
so, and only then is anything searched), give it the sign of the first zero of its row or segment.  A NaN is
the namespace's (propagated), as the numba backend's loops give it too.

The level printer calls them (``LevelPrinting._reduce``, a rectangular nest's rows, one range, a triangular
nest's segments) where the backend asks for it (``Backend.extrema_first_zero``): numba's namespace steps each
row as the loop does (``numba_xp_reductions``), and prints ``xp.max`` itself.  Dask's versions
(:mod:`coarsen_nb.lower.dask_helpers`) settle every result with ``where``, not behind an ``if`` that would
compute the graph.
"""

from __future__ import annotations

import math

import numpy as xp

# <own-module>
# (the generated module defines the segment helpers beside these: this import gives this file, imported on its
# own by the tests, the same names)
from coarsen_nb.lower.index_helpers import _segment_max, _segment_min  # noqa: E402

# </own-module>


def _loop_max(v, axis=None):
    """xp.max(v, axis=axis), a zero as the first zero of v (of its row), as the loop keeps it."""
    m = xp.max(v, axis=axis)
    return _first_zeros(m, v, axis) if xp.any(m == 0) else m


def _loop_min(v, axis=None):
    """xp.min(v, axis=axis), a zero as the first zero of v (of its row), as the loop keeps it."""
    m = xp.min(v, axis=axis)
    return _first_zeros(m, v, axis) if xp.any(m == 0) else m


def _first_zeros(m, v, axis=None):
    """m where it is not a zero; a zero as -0.0 where v's first zero (over axis) is a -0.0, else 0.0.
    (argmax of floats: the standard's argmax takes no bools; both are the first 1.0 of each row.)"""
    zero = xp.asarray(v == 0, dtype=xp.float64)
    negative = zero * xp.asarray(xp.signbit(v), dtype=xp.float64)
    first_negative = (xp.max(negative, axis=axis) == 1.0) & \
        (xp.argmax(zero, axis=axis) == xp.argmax(negative, axis=axis))
    settled = xp.where(m == 0, xp.where(first_negative, -xp.abs(m), xp.abs(m)), m)
    return settled[()] if axis is None else settled         # (one number: NumPy's scalar, as xp.max gives it)


def _loop_segment_max(seg, v, n):
    """_segment_max(seg, v, n), a zero as the first zero of its segment, as the loop keeps it."""
    m = _segment_max(seg, v, n)
    return _segment_first_zeros(m, seg, v, n) if xp.any(m == 0) else m


def _loop_segment_min(seg, v, n):
    """_segment_min(seg, v, n), a zero as the first zero of its segment, as the loop keeps it."""
    m = _segment_min(seg, v, n)
    return _segment_first_zeros(m, seg, v, n) if xp.any(m == 0) else m


def _segment_first_zeros(m, seg, v, n):
    """m where it is not a zero; a zero as -0.0 where its segment's first zero is a -0.0, else 0.0: the
    segment's first zero and first -0.0 by their positions, counted from 1 (a position is never a zero)."""
    at = xp.asarray(xp.arange(1, seg.shape[0] + 1), dtype=xp.float64)
    v = xp.broadcast_to(xp.asarray(v, dtype=xp.float64), seg.shape)
    first = _segment_min(seg, xp.where(v == 0, at, math.inf), n)
    first_negative = _segment_min(seg, xp.where((v == 0) & xp.signbit(v), at, math.inf), n)
    return xp.where(m == 0, xp.where(first == first_negative, -xp.abs(m), xp.abs(m)), m)


HELPER_FUNCTIONS = (_loop_max, _loop_min, _first_zeros, _loop_segment_max, _loop_segment_min, _segment_first_zeros)
