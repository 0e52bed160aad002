"""``backend="numba"``: an adjoint scan's stored rows are a scratch array its caller hands over.

A Monte Carlo loop run iteration by iteration calls its per-path scan adjoint once per path
(``lower/numba_scans.py``); the function takes the array its forward pass stores the states in as a
parameter, and the reverse sweep allocates it once before its loop where its shape is the same at every
path (``lower/scratch.py``), inside the loop where it is not.  Checked against the NumPy backend (1e-10)
and the plain function, for 0, 1 and several paths of 0, 1, 2 and many steps, and on the generated code.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba_pairs import BackendPairs

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


def paths_call(z, s0, sigma, strike):
    payoff = 0.0
    n_paths, n_steps = z.shape
    for p in range(n_paths):
        s = s0
        running = 0.0
        for t in range(n_steps):
            s = s * math.exp(sigma * z[p, t])
            running += s
        payoff += max(0.5 * running - strike, 0.0)
    return payoff


def growing_paths(z, s0, sigma):
    total = 0.0
    for p in range(z.shape[0]):
        s = s0
        for t in range(p):              # (path p has p steps: the rows' length varies over the paths)
            s = s * math.exp(sigma * z[p, t])
            total += s * s
    return total


PAIRS = BackendPairs({"paths_call": (paths_call, ("s0", "sigma", "strike")),
                      "growing_paths": (growing_paths, ("s0", "sigma"))})


def _grad_source(name) -> str:
    source = PAIRS.pair(name)[2].source
    return next(part for part in source.split("\n\n\n")
                if (part.split("\n") + [""])[1].startswith(f"def {name}_grad("))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(paths=st.sampled_from([0, 1, 2, 5]), steps=st.sampled_from([0, 1, 2, 3, 40]),
       sigma=st.floats(-1.0, 1.0), s0=st.floats(0.1, 5.0), strike=st.floats(0.0, 5.0), seed=st.integers(0, 2**16))
def test_a_shared_scratch_array_leaves_value_and_gradient_equal(paths, steps, sigma, s0, strike, seed):
    """Paths that share one scratch array (each reads back only what it stored) give the NumPy backend's value
    and gradient, whatever the number of paths and steps (0 paths, 0 steps: an empty array)."""
    z = np.random.default_rng(seed).normal(size=(paths, steps))
    PAIRS.check("paths_call", (z, s0, sigma, strike))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(paths=st.sampled_from([0, 1, 2, 6]), sigma=st.floats(-1.0, 1.0), seed=st.integers(0, 2**16))
def test_rows_whose_length_varies_over_the_paths(paths, sigma, seed):
    z = np.random.default_rng(seed).normal(size=(paths, max(paths, 1)))
    PAIRS.check("growing_paths", (z, 1.3, sigma))


def test_the_reverse_sweep_allocates_the_scratch_array_once_where_its_shape_is_invariant():
    """paths_call's rows are n_steps long at every path: one allocation before the reverse sweep's loop, the
    scan called with it; growing_paths' rows are p long: allocated in the loop, at each path."""
    z = np.random.default_rng(1).normal(size=(4, 6))
    PAIRS.check("paths_call", (z, 1.0, 0.3, 0.5))
    PAIRS.check("growing_paths", (z, 1.0, 0.3))
    grad = _grad_source("paths_call")
    before, loop = grad.split("    for k in range(_tape", 1)
    assert "scratch = xp.empty((2, max(0, n_steps)))" in before and "xp.empty(" not in loop, grad
    assert "_vjp_scan_in_bounds(" in loop and "scratch)" in loop, grad
    grad = _grad_source("growing_paths")
    before, loop = grad.split("    for k in range(_tape", 1)
    assert "scratch" not in before and "scratch = xp.empty(" in loop, grad
