"""The numba module's ``_exp`` (``lower/numba_helpers.py``): math.exp in arithmetic LLVM vectorizes.

Compiled from the helper's own text, as a numba module carries it, it is checked against NumPy's exp: within
1 ulp on normal results, scalar and in a store loop (the vectorized lanes and the scalar remainder), and
exactly exp's value at the edges (NaN, +-inf, overflow, underflow to a subnormal and to 0, -0.0).
"""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

from coarsen_nb.lower import numba_xp_elementary
from coarsen_nb.lower.numba_helpers import NUMBA_HELPER_DECORATORS, NUMBA_HELPERS


@pytest.fixture(scope="module")
def compiled():
    env = {"math": math, "_np": np, "xp": np, "numba": numba, "elementary_call": numba_xp_elementary.elementary_call}
    assert NUMBA_HELPER_DECORATORS["_exp"] == "@numba.extending.intrinsic"     # (its instructions: the prologue's)
    exec(NUMBA_HELPERS["_exp"], env)
    intrinsic = numba.extending.intrinsic(env["_exp"])
    scalar = numba.njit(lambda x: intrinsic(x))

    @numba.njit
    def store_loop(a, out):
        for i in range(a.shape[0]):
            out[i] = scalar(a[i])

    return scalar, store_loop


def test_within_one_ulp_of_exp_on_normal_results(compiled):
    scalar, store_loop = compiled
    rng = np.random.default_rng(0)
    a = np.concatenate([rng.uniform(-708, 709, 5000), rng.standard_normal(5000), rng.uniform(-1e-8, 1e-8, 101)])
    out = np.empty_like(a)
    store_loop(a, out)
    np.testing.assert_array_max_ulp(out, np.exp(a), maxulp=1)
    np.testing.assert_array_equal([scalar(v) for v in a[:50]], out[:50])     # (the scalar path: the same)


@pytest.mark.parametrize("v", [np.nan, np.inf, -np.inf, 0.0, -0.0, 709.78, 709.79, 710.0, 1e300, -1e300,
                               -708.5, -720.0, -745.0, -745.1, -745.2, -746.0])
def test_the_edges_are_exps(compiled, v):
    scalar, store_loop = compiled
    out = np.empty(1)
    store_loop(np.array([v]), out)
    with np.errstate(over="ignore"):
        want = np.exp(v)
    for got in (scalar(v), out[0]):
        if np.isnan(want) or want == 0 or np.isinf(want):
            np.testing.assert_array_equal(got, want)
        else:
            assert abs(got - want) <= max(np.spacing(want), 5e-324), (v, got, want)
