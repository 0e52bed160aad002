"""``backend="numba"``: a log-sum-exp inside a loop nest through one row of its terms (``lower/numba_lse_rows.py``).

A mixture's likelihood, log Σ_k exp(g_ik) at each point i, is computed with a row of g_i, its maximum, one
exponential per (i, k), and its adjoint (the softmax) read from that row.  Values and gradients against the
NumPy backend (1e-10), the NumPy gradient against central differences; the edge cases of a reduction: no
points, no components, a NaN point, components of weight zero (g = -inf) at some or all k, a constant term
c in log(c + Σ exp) that is positive, zero or negative (where log(c + Σ) is NaN at some points).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from gradcheck import assert_close
from numba_pairs import BackendPairs, as_tuple

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


def streaming(x, mu, w):
    """gmm's form: the running maximum and rescaled sum, one pass over the components per point."""
    ll = 0.0
    for i in range(len(x)):
        m = -math.inf
        s = 0.0
        for k in range(len(mu)):
            a = w[k] - 0.5 * ((x[i] - mu[k]) * math.exp(-w[k])) ** 2
            if a > m:
                s = s * math.exp(m - a) + 1.0
                m = a
            else:
                s += math.exp(a - m)
        ll += m + math.log(s)
    return ll


def with_constant(x, mu, c):
    """log(c + Σ_k exp(g_ik)) with a constant term c of any sign."""
    ll = 0.0
    for i in range(len(x)):
        s = c
        for k in range(len(mu)):
            s += math.exp(-((x[i] - mu[k]) ** 2))
        ll += math.log(s)
    return ll


PROGRAMS = {"streaming": (streaming, ("x", "mu", "w")), "with_constant": (with_constant, ("x", "mu", "c"))}
PAIRS = BackendPairs(PROGRAMS)


def _mixture(n, k, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-2, 2, n), rng.uniform(-2, 2, k), rng.uniform(-1, 0.5, k)


def _numba_equals_numpy(name, args):
    """numba's value and gradient equal the NumPy backend's (1e-10; NaN where it is NaN), for inputs where
    the plain function raises (``math.log`` of a number <= 0)."""
    _, by_numpy, by_numba = PAIRS.pair(name)
    with np.errstate(all="ignore"):
        want_value, want_grad = by_numpy.value_and_grad(*args)
    got_value, got_grad = by_numba.value_and_grad(*args)
    assert_close(got_value, want_value, rtol=1e-10, atol=1e-12, what=f"{name} value")
    for g, w in zip(as_tuple(got_grad), as_tuple(want_grad), strict=True):
        assert_close(g, w, rtol=1e-10, atol=1e-12, what=f"{name} gradient")
    return want_value


@pytest.mark.parametrize("n,k", [(0, 3), (1, 1), (7, 3), (12, 8)])
def test_a_mixture_equals_numpy_and_central_differences(n, k):
    PAIRS.check_with_differences("streaming", _mixture(n, k, seed=n + k))


def test_no_components_equals_numpy():
    """log of an empty sum: -inf at every point (the plain function's math.log(0) raises)."""
    assert _numba_equals_numpy("streaming", _mixture(5, 0)) == -np.inf


def test_the_softmax_is_read_from_the_row():
    """The adjoint's nest keeps g's row: one exponential per (point, component) in the loop over the
    components that scatters, none in the loop that sums (the exp of the row, once), none recomputing g."""
    PAIRS.check("streaming", _mixture(6, 4))
    source = PAIRS.pair("streaming")[2].source
    grad = source[source.index("def _soi"):]
    nests = [part for part in grad.split("\n\n\n") if "_vjp_nest" in part.split("(")[0]]
    assert nests
    for nest in nests:
        # (c = 0: the sum is the total, and no refill: numba_lse_rows)
        assert "row = xp.empty(" in nest and "inv = 1.0 / s" in nest and "if not (" not in nest, nest
        scatter_loop = nest[nest.rindex("        for "):]
        assert "* inv)" in scatter_loop and "math.exp(" not in scatter_loop.split("\n            b_")[0], nest


@pytest.mark.parametrize("case", ["nan point", "zero-weight component", "all zero weights", "huge g"])
def test_edge_values_equal_numpy(case):
    x, mu, w = _mixture(6, 4, seed=3)
    if case == "nan point":
        x[2] = np.nan
    elif case == "zero-weight component":
        w[1] = -np.inf
    elif case == "all zero weights":
        w[:] = -np.inf
    else:
        w[0] = 800.0                            # (exp(800) overflows: the shift keeps every term finite)
    _numba_equals_numpy("streaming", (x, mu, w))


@pytest.mark.parametrize("c", [2.5, 0.0, -0.3, -50.0])
def test_a_constant_term_of_any_sign_equals_numpy(c):
    """c < 0: log(c + Σ) is NaN at the points where the sum is below -c, and so is the softmax there (the
    row is refilled as the lowered form writes it)."""
    x, mu, _ = _mixture(9, 3, seed=5)
    value = _numba_equals_numpy("with_constant", (x, mu, c))
    assert np.isnan(value) == (c == -50.0)


def test_the_nest_runs_unchecked_in_bounds_and_raises_out_of_bounds():
    """The nest is compiled twice: without bounds checks, run where the tests before its loops find every
    subscript in bounds, and with them, which raises Python's IndexError where the user's loop would."""
    x, mu, w = _mixture(6, 4)
    PAIRS.check("streaming", (x, mu, w))
    fn, by_numpy, by_numba = PAIRS.pair("streaming")
    assert "_vjp_nest_in_bounds" in by_numba.source
    for f in (fn, by_numpy.grad, by_numba.grad):
        with pytest.raises(IndexError):
            f(x, mu, w[:3])
