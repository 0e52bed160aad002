"""``backend="numba"``: an arg-extremum loop at a nest's outermost level runs in chunks (``numba_nests._arg_chunks``).

Each chunk's values are computed into a buffer (a loop LLVM vectorizes), then scanned in order for the first
arg-extremum (NumPy's ``argmax``: the first of equal values, the first NaN).  The chunks must find the same
point and value as one loop over all points: checked against the NumPy backend (``np.max``/``np.argmax`` over
arrays, an independent implementation) for lengths on both sides of the chunk boundaries, ties across chunks
and NaN anywhere; and the generated nest has its unchecked twin (the chunked loops are known in bounds).
"""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import assert_close
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba_pairs import BackendPairs

from coarsen_nb.lower.numba_trig import CHUNK

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


def farthest(x, y, a, b):
    worst = 0.0
    for i in range(len(x)):
        t = min(max((x[i] - a) * b, 0.0), 1.0)
        worst = max(worst, (x[i] - t) ** 2 + y[i] * y[i])
    return worst


def lowest(x, c):
    best = 1e300
    for i in range(len(x)):
        best = min(best, c * x[i] * x[i] - x[i])
    return best * c


PAIRS = BackendPairs({"farthest": (farthest, ("x", "y", "a", "b")), "lowest": (lowest, ("x", "c"))})


def _args(name, x, y):
    return (x, y, 0.2, 0.9) if name == "farthest" else (x, 0.7)


def _same(name, args):
    """numba's value and gradient (the vjp and the grad entry) equal the NumPy backend's, NaN where it is."""
    _, by_numpy, by_numba = PAIRS.pair(name)
    want_value, want_grad = by_numpy.value_and_grad(*args)
    got_value, got_grad = by_numba.value_and_grad(*args)
    assert_close(got_value, want_value, rtol=1e-12, atol=1e-14, what=f"{name} value")
    for got in (got_grad, by_numba.grad(*args)):
        for g, w in zip(got, want_grad, strict=True):
            assert_close(g, w, rtol=1e-12, atol=1e-14, what=f"{name} gradient")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(["farthest", "lowest"]), n=st.integers(0, 3 * CHUNK + 5),
       seed=st.integers(0, 2**16), nans=st.lists(st.integers(0, 3 * CHUNK + 4), max_size=3),
       tie=st.booleans())
def test_chunked_arg_loop_equals_numpy(name, n, seed, nans, tie):
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    if tie and n > 1:
        # (the extremum's point copied into later points, across chunks: the first one counts)
        values = (x - np.clip((x - 0.2) * 0.9, 0, 1)) ** 2 + y * y if name == "farthest" else 0.7 * x * x - x
        at = int(np.argmax(values) if name == "farthest" else np.argmin(values))
        for later in range(at + 1, n, max(1, CHUNK // 3)):
            x[later], y[later] = x[at], y[at]
    for k in nans:
        if k < n:
            x[k] = np.nan
    if name == "lowest" and n == 0:
        return          # (over no points the minimum is the start, 1e300: nothing to find)
    _same(name, _args(name, x, y))


@pytest.mark.parametrize("n", [CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK])
def test_the_extremum_at_a_chunks_edges(n):
    """The farthest point first, last, and just either side of a chunk boundary."""
    for at in sorted({0, n - 1, min(CHUNK - 1, n - 1), min(CHUNK, n - 1)}):
        x, y = np.linspace(-0.5, 0.5, n), np.zeros(n)
        y[at] = 3.0
        _same("farthest", (x, y, 0.2, 0.9))


def test_the_chunked_loop_runs_unchecked():
    """The nest's loops over the points are chunks of a known range, and the point found is read only where
    it was found: the tests before the nest know every subscript in bounds, so an unchecked twin exists (it is
    what lets LLVM vectorize the values' loop); points beyond an array still raise as the user's loop."""
    _same("farthest", _args("farthest", *np.random.default_rng(1).uniform(-1, 1, (2, 9))))
    source = PAIRS.pair("farthest")[2].source
    assert "_vjp_nest_in_bounds" in source and "values = xp.empty(" in source, source
    fn, by_numpy, by_numba = PAIRS.pair("farthest")
    with pytest.raises(IndexError):
        fn(np.zeros(5), np.zeros(4), 0.2, 0.9)
    with pytest.raises(IndexError):
        by_numba.grad(np.zeros(5), np.zeros(4), 0.2, 0.9)
