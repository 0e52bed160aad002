"""The numba module's ``_cos`` and ``_sin`` (``lower/numba_helpers.py``): math.cos and math.sin in arithmetic
LLVM vectorizes, for |x| <= TRIG_NEAR.

Compiled from the helpers' own text, as a numba module carries it, they are checked against libm's (Python's
``math``): within 1 ulp for every float up to TRIG_NEAR (hypothesis over the whole range, and a dense sample near
the multiples of pi/2, where the reduction cancels most), scalar and in a store loop (the vectorized lanes and the
scalar remainder), -0.0's sign kept; NaN beyond the bound and for NaN and +-inf, which the loops that call them
recompute with libm's (tests/lower/test_numba_trig_loops.py).
"""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coarsen_nb.lower.numba_helpers import NUMBA_HELPERS, TRIG_NEAR


@pytest.fixture(scope="module")
def compiled():
    env = {"math": math, "_np": np, "xp": np}
    for name in ("_trig", "_cos", "_sin"):
        exec(NUMBA_HELPERS[name], env)
        env[name] = numba.njit(env[name])
    cos, sin = env["_cos"], env["_sin"]

    @numba.njit
    def store_loop(a, c, s):
        for i in range(a.shape[0]):
            c[i] = cos(a[i])
            s[i] = sin(a[i])

    store_loop(np.zeros(1), np.empty(1), np.empty(1))          # (compiled here: hypothesis times each example)
    cos(0.0), sin(0.0)
    return cos, sin, store_loop


def ulps(got: float, want: float) -> float:
    if got == want:
        return 0.0
    return abs(got - want) / math.ulp(abs(want))


@settings(max_examples=500)
@given(st.one_of(st.floats(), st.floats(-TRIG_NEAR, TRIG_NEAR), st.floats(-10.0, 10.0)))
def test_within_one_ulp_of_libm_or_nan_beyond(compiled, x):
    cos, sin = compiled[:2]
    if abs(x) <= TRIG_NEAR:
        assert ulps(cos(x), math.cos(x)) <= 1, x
        assert ulps(sin(x), math.sin(x)) <= 1, x
        assert math.copysign(1, sin(x)) == math.copysign(1, math.sin(x))     # (-0.0 -> -0.0)
    else:
        assert math.isnan(cos(x)) and math.isnan(sin(x))


def test_the_store_loop_is_within_one_ulp(compiled):
    """The vectorized loop, on the arguments whose reduction cancels most (near k pi/2, k up to 2^19) and on
    uniform ones over the whole range, tiny and subnormal ones."""
    _, _, store_loop = compiled
    rng = np.random.default_rng(0)
    k = rng.integers(-2**19, 2**19, 20000)
    near_multiples = k * (np.pi / 2)
    a = np.concatenate([near_multiples, np.nextafter(near_multiples, np.inf), np.nextafter(near_multiples, -np.inf),
                        rng.uniform(-TRIG_NEAR, TRIG_NEAR, 20000), rng.standard_normal(20000),
                        rng.uniform(-1e-8, 1e-8, 101), [5e-324, -5e-324, 0.0, -0.0, TRIG_NEAR, -TRIG_NEAR]])
    a = a[np.abs(a) <= TRIG_NEAR]
    c, s = np.empty_like(a), np.empty_like(a)
    store_loop(a, c, s)
    np.testing.assert_array_max_ulp(c, np.cos(a), maxulp=1)
    np.testing.assert_array_max_ulp(s, np.sin(a), maxulp=1)
    np.testing.assert_array_equal(np.signbit(s[a == 0]), np.signbit(a[a == 0]))
    cos, sin, _ = compiled
    np.testing.assert_array_equal([cos(v) for v in a[:50]], c[:50])      # (the scalar path: the same)
    np.testing.assert_array_equal([sin(v) for v in a[:50]], s[:50])


@pytest.mark.parametrize("v", [np.nextafter(TRIG_NEAR, np.inf), -1e6, 1e22, 1.7e308, np.inf, -np.inf, np.nan])
def test_beyond_the_bound_is_nan(compiled, v):
    cos, sin, store_loop = compiled
    c, s = np.empty(1), np.empty(1)
    store_loop(np.array([v]), c, s)
    assert all(math.isnan(y) for y in (cos(v), sin(v), c[0], s[0]))
