"""The generated module's vectorized ``_erf`` against ``math.erf``: full double precision.

Neither NumPy nor the array API has erf, and a per-element ``math.erf`` made
the gradients of black_scholes and horner_fit several times slower than the
hand-written code.  The helper evaluates Cephes' rational approximations on
whole arrays; here it must agree with ``math.erf`` to 2 ulp or 1e-15 relative
everywhere — near 0 and the subnormals, across the |x| = 1 switch, in the
tails where erf rounds to ±1, at ±0, ±inf and NaN — under NumPy and under
``array_api_strict``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coarsen_nb.lower.helpers import HELPERS


def _erf_for(xp):
    env = {"xp": xp, "math": math}
    for h in ("_erfc_ratio", "_erf"):      # (_erf's far tail is the shared Cephes ratio)
        exec(HELPERS[h].source, env)
    return env["_erf"]


ERF = _erf_for(np)

SPECIAL = [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-200, 1e-8, 0.5, 0.9999999999999999, 1.0,
           1.0000000000000002, -1.0, 2.0, 3.5, 5.9, 5.921, 6.0, 6.000000000000001, 8.0, 27.0, 1e10, 1e300,
           1.7976931348623157e308, math.inf, -math.inf]


def _assert_matches(x: np.ndarray, got: np.ndarray) -> None:
    want = np.array([math.erf(v) for v in x.tolist()])
    err = np.abs(got - want)
    bound = np.maximum(2 * np.spacing(np.abs(want)), 1e-15 * np.abs(want))
    bad = err > bound
    assert not bad.any(), f"erf({x[bad][:5]}) = {got[bad][:5]}, math.erf gives {want[bad][:5]}"
    assert np.array_equal(np.signbit(got), np.signbit(want)), "the sign, -0.0 included"


def test_special_points():
    x = np.array(SPECIAL + [-v for v in SPECIAL])
    _assert_matches(x, ERF(x))
    assert np.isnan(ERF(np.array([math.nan]))).all()


def test_dense_grid_across_the_branches():
    x = np.concatenate([np.linspace(-7.0, 7.0, 200_001), np.linspace(0.99, 1.01, 20_001),
                        np.geomspace(1e-300, 1.0, 20_001)])
    _assert_matches(x, ERF(x))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=True), min_size=1, max_size=40))
def test_random_doubles(values):
    x = np.array(values, dtype=float)
    _assert_matches(x, ERF(x))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=-6.5, max_value=6.5), min_size=1, max_size=40))
def test_random_doubles_where_erf_varies(values):
    x = np.array(values, dtype=float)
    _assert_matches(x, ERF(x))


def test_shapes_and_no_warnings():
    x = np.array([-1.7976931348623157e308, -1e300, -7.0, -1.0, -0.5, -0.0, 0.0, 1e-310, 0.5, 3.0, 1e300,
                  1.7976931348623157e308]).reshape(3, 4)
    with np.errstate(over="raise", invalid="raise", divide="raise"):   # underflow to 0 is expected
        got = ERF(x)
    assert got.shape == (3, 4)
    _assert_matches(x.ravel(), got.ravel())


def test_array_api_strict():
    xps = pytest.importorskip("array_api_strict")
    x = np.array(SPECIAL + [-v for v in SPECIAL] + list(np.linspace(-7, 7, 1001)))
    got = _erf_for(xps)(xps.asarray(x))
    assert np.array_equal(np.from_dlpack(got), ERF(x))


def test_scalars_and_zero_d():
    for xp in (np, pytest.importorskip("array_api_strict")):
        erf = _erf_for(xp)
        for v in (0.3, -0.0, 2.5, -7.0, 1e300):
            got = erf(v)
            assert got.shape == () and float(got) == ERF(np.array([v]))[0]
