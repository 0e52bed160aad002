"""``backend="numba"``: a loop of float sums and scatters calls ``_exp``/``_log``/``_erf_scalar`` and adds its terms
from chunk buffers (``lower/numba_trig.py``'s ``summed``, ``lower/numba_elementary.py``).

Programs whose forward is a sum and whose gradient is a loop of sums and scatters at the iteration, calling log,
erf and exp: black_scholes (a log, two erf, three exp an option), a log-weighted sum, a sum of erf; and one whose
subscripts no test before the loop proves in bounds (it keeps libm's calls).  Their value and gradient against
the NumPy backend's (1e-12; NaN where it is NaN), on arrays across several chunks and a partial last one, on
numbers of every kind a log or an erf may read; the NumPy gradient against central differences; the chunked
sum against the plain function's (the same order of additions); and each module does call the helpers.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numba_pairs import BackendPairs

from coarsen_nb.kernels import black_scholes as bs

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


def log_weighted(x, y):
    s = 0.0
    for i in range(len(x)):
        s += math.log(x[i]) * y[i]
    return s


def erf_sum(x, w):
    s = 0.0
    for i in range(len(x)):
        s += math.erf(w * x[i]) * x[i]
    return s


def shifted_log(x):
    """Subscripts that are not the loop variable alone: no test before the loop proves them in bounds, so its
    loops keep libm's log."""
    s = 0.0
    for i in range(len(x) - 1):
        s += math.log(x[i + 1]) * x[i]
    return s


PROGRAMS = {"black_scholes": (bs.black_scholes, tuple(bs.META["wrt"])), "log_weighted": (log_weighted, ("x", "y")),
            "erf_sum": (erf_sum, ("x", "w")), "shifted_log": (shifted_log, ("x",))}
PAIRS = BackendPairs(PROGRAMS)


def _args(name, x):
    if name == "black_scholes":
        spot, strike, vol, tau, r = bs.make_inputs(len(x), 0)
        return (spot * np.exp(0.1 * np.nan_to_num(x)), strike, vol, tau, r)
    return (np.abs(x) + 0.5, np.cos(x)) if name == "log_weighted" else (x, 0.7) if name == "erf_sum" else \
        (np.abs(x) + 0.5,)


def _numba_equals_numpy(name, args):
    """numba's value and gradient equal the NumPy backend's (:meth:`BackendPairs.equal_to_numpy`)."""
    return PAIRS.equal_to_numpy(name, args, grad_atol=1e-14)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_the_loops_call_the_vectorizable_helpers(name):
    _, _, by_numba = PAIRS.pair(name)
    by_numba.grad(*_args(name, np.linspace(-3.0, 3.0, 5)))
    called = {h for h in ("_log", "_erf_scalar", "_exp") if re.search(rf"(?<![\w.]){h}\(", by_numba.source)}
    want = {"black_scholes": {"_log", "_erf_scalar", "_exp"}, "log_weighted": {"_log"},
            "erf_sum": {"_erf_scalar", "_exp"}, "shifted_log": set()}[name]
    assert called == want
    # the gradient's loop of sums and scatters in chunks, behind the tests of its subscripts
    assert ("_loop_in_bounds" in by_numba.source) == (name in ("black_scholes", "erf_sum"))


@pytest.mark.parametrize("name", list(PROGRAMS))
@pytest.mark.parametrize("n", [1, 3, 17, 600])
def test_equals_numpy_and_central_differences(name, n):
    x = np.random.default_rng(n).uniform(-3.0, 3.0, n)
    # (central differences of a sum of 600 prices are too coarse for an option's small vega: numba against NumPy)
    PAIRS.check_with_differences(name, _args(name, x)) if n <= 17 else PAIRS.check(name, _args(name, x))
    _numba_equals_numpy(name, _args(name, x))


@pytest.mark.parametrize("name", ["log_weighted", "erf_sum"])
def test_a_chunked_sum_is_the_plain_functions(name):
    """The forward's sum by chunks adds its terms in the loop's order: the plain function's value to the terms'
    few ulp, across three chunks and a partial last one."""
    fn, _, by_numba = PAIRS.pair(name)
    args = _args(name, np.random.default_rng(2).uniform(-3.0, 3.0, 1000))
    np.testing.assert_allclose(by_numba(*args), fn(*args), rtol=1e-13)


# numbers of every kind a log or an erf may read: zeros, subnormals, huge, infinite, NaN
_SPECIAL = [0.0, -0.0, 5e-324, 1e-310, -1e-310, 1e300, -1e300, np.inf, -np.inf, np.nan, 6.0, -6.0, 1.0, -1.0]


@settings(max_examples=40, deadline=None)      # (a first call of a type compiles: seconds)
@given(x=arrays(np.float64, st.integers(0, 300), elements=st.one_of(st.floats(-8.0, 8.0), st.floats(),
                                                                     st.sampled_from(_SPECIAL))))
def test_erf_of_any_numbers_equals_numpy(x):
    _numba_equals_numpy("erf_sum", (x, 0.7))


@settings(max_examples=40, deadline=None)
@given(x=arrays(np.float64, st.integers(0, 300), elements=st.one_of(st.floats(0.0, 8.0), st.floats(min_value=0.0),
                                                                     st.sampled_from(_SPECIAL[:4] + _SPECIAL[5:6] + [
                                                                         np.inf, np.nan]))))
def test_log_of_any_numbers_equals_numpy(x):
    _numba_equals_numpy("log_weighted", (x, np.cos(np.nan_to_num(x))))
