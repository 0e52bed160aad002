"""The numba namespace's reductions over axes and SciPy's special functions, compiled by Numba, against
NumPy's and SciPy's (``coarsen_nb/lower/numba_xp_reductions.py``, ``numba_xp_groups.py``, ``numba_xp_special.py``).

The generated code passes ``axis=`` and ``keepdims=`` as constants, which the implementations need
(they fix the result's rank), so each combination is compiled as its own function here, printed with
the constants in its text as the module writer prints them.  Values, dtype and shape must equal
NumPy's: the generated code's gradients depend on exactly these answers.
"""

from __future__ import annotations

import functools
import warnings

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from test_numba_xp import _numpy_helper

from coarsen_nb.lower.numba_xp_groups import xp  # (the reductions and the adjoints' helpers over axes)
from coarsen_nb.lower.numba_xp_special import xp as xp_special

scipy_special = pytest.importorskip("scipy.special")

_floats = st.floats(-3, 3, allow_nan=False, width=64)


# Each (axis, keepdims, ddof) is a function of its own, compiled by Numba (5-15 s each, a transpose
# more): a fixed set that takes every path of the implementations printed at typing
# (numba_xp_reductions._make_reduction: axes from None, a negative int, an int, a tuple; the reduced axes
# already last -- the pairwise sum -- or moved last by a transpose; the result kept with ones, reshaped to
# the kept axes, or one number), each compiled once and checked on many arrays of its rank (shapes with a
# reduced axis of 1 give ddof=1's nan/inf).  It was 15 hypothesis draws of (shape, axis, keepdims, ddof):
# 15 compilations, each checked on one array.
_AXIS_CHOICES = [
    (1, None, False, 0),        # all reduced (None): one number; no transpose, the pairwise row sum
    (1, -1, True, 1),           # an axis counted from the end; keepdims
    (2, 1, True, 0),            # the last axis: no transpose; keepdims
    (2, (0, 1), False, 1),      # a tuple of every axis: one number
    (3, (0, 2), False, 1),      # not trailing: moved last by a transpose; reshaped to the kept axis
    (3, (1, 2), False, 0),      # a trailing tuple: no transpose; one kept axis
]


_CALLS = {
    "sum": "xp.sum(x, axis={axis}, keepdims={keep})",
    "prod": "xp.prod(x, axis={axis}, keepdims={keep})",
    "mean": "xp.mean(x, axis={axis}, keepdims={keep})",
    "var": "xp.var(x, axis={axis}, ddof={ddof}, keepdims={keep})",
    "std": "xp.std(x, axis={axis}, ddof={ddof}, keepdims={keep})",
    "max": "xp.max(x, axis={axis}, keepdims={keep})",
    "min": "xp.min(x, axis={axis}, keepdims={keep})",
    "norm": "xp.linalg.norm(x, ord=None, axis={axis}, keepdims={keep})",
    "logsumexp": "xp.logsumexp(x, axis={axis}, b=None, keepdims={keep}, return_sign=False)",
    "int_sum": "xp.sum(x > 0, axis={axis}, keepdims={keep})",
}


@functools.cache
def _compiled(axis, keep, ddof):
    body = ", ".join(c.format(axis=axis, keep=keep, ddof=ddof) for c in _CALLS.values())
    namespace = {"xp": xp}
    exec(f"def reductions(x):\n    return ({body},)\n", namespace)
    return numba.njit(namespace["reductions"])


def _norm(x, axis, keep):
    """NumPy's norm where it takes these axes (one or two, or all of a vector or matrix); its definition
    for ord=None, the square root of the sum of squares, where it does not."""
    if isinstance(axis, int) or isinstance(axis, tuple) and len(axis) == 2 or axis is None and x.ndim <= 2:
        return np.linalg.norm(x, axis=axis, keepdims=keep)
    return np.sqrt(np.sum(x * x, axis=axis, keepdims=keep))


def _numpy(x, axis, keep, ddof):
    kw = {"axis": axis, "keepdims": keep}
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)            # (var of one element with ddof=1: nan)
        return (np.sum(x, **kw), np.prod(x, **kw), np.mean(x, **kw), np.var(x, ddof=ddof, **kw),
                np.std(x, ddof=ddof, **kw), np.max(x, **kw), np.min(x, **kw), _norm(x, axis, keep),
                scipy_special.logsumexp(x, **kw), np.sum(x > 0, **kw))


def _same(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (what, got, want)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13, err_msg=what)


@pytest.mark.parametrize("ndim, axis, keep, ddof", _AXIS_CHOICES,
                         ids=[f"{n}d-axis={a}-keepdims={k}-ddof={d}".replace(" ", "") for n, a, k, d in _AXIS_CHOICES])
@settings(deadline=None, max_examples=20)       # (the first example compiles)
@given(data=st.data())
def test_reductions_over_every_axis_choice(ndim, axis, keep, ddof, data):
    x = data.draw(arrays(np.float64, st.tuples(*[st.integers(1, 4)] * ndim), elements=_floats))
    for name, got, want in zip(_CALLS, _compiled(axis, keep, ddof)(x), _numpy(x, axis, keep, ddof), strict=True):
        _same(got, want, f"{name} axis={axis} keepdims={keep} ddof={ddof} shape={x.shape}")


_first_extremum = _numpy_helper("_first_extremum")


@numba.njit
def _extremum_picks(x, v):
    return (xp.argmax(x, axis=0, keepdims=False), xp.argmin(x, axis=1, keepdims=True), xp.argmax(v), xp.argmin(x),
            xp.max(x, axis=1, keepdims=False), xp.first_extremum(x, (1,), 1),
            xp.first_extremum(x, (0,), -1), xp.first_extremum(x, (0, 1), 1),
            xp.prod_except_axes(x, (1,)), xp.prod_except_axes(x, (0, 1)))


def _prod_except(a, axes):
    """The products of the other elements over axes, by brute force (each element set to 1 in turn)."""
    out = np.empty(a.shape)
    for idx in np.ndindex(a.shape):
        b = a.copy()
        b[idx] = 1.0
        out[idx] = np.prod(b, axis=axes, keepdims=True)[tuple(0 if d in axes else i for d, i in enumerate(idx))]
    return out


@settings(deadline=None)       # (the first example compiles)
@given(arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 5)), elements=_floats), st.data())
def test_arg_extrema_with_ties_nans_and_zeros(m, data):
    m = np.round(m)                                          # ties, and zeros for the products
    v = data.draw(arrays(np.float64, st.integers(1, 6), elements=_floats))
    if data.draw(st.booleans()):
        m[data.draw(st.integers(0, m.shape[0] - 1)), data.draw(st.integers(0, m.shape[1] - 1))] = np.nan
    want = (np.argmax(m, axis=0), np.argmin(m, axis=1, keepdims=True), np.argmax(v), np.argmin(m), np.max(m, axis=1),
            _first_extremum(m, (1,), 1), _first_extremum(m, (0,), -1),
            _first_extremum(m, (0, 1), 1), _prod_except(m, (1,)), _prod_except(m, (0, 1)))
    for k, (got, w) in enumerate(zip(_extremum_picks(m, v), want, strict=True)):
        got, w = np.asarray(got), np.asarray(w)
        assert got.shape == w.shape and got.dtype == w.dtype, (k, got, w)
        np.testing.assert_allclose(got, w, rtol=1e-13, atol=0, err_msg=str(k))


@numba.njit
def _specials(x, y):
    return xp_special.gammaln(x), xp_special.digamma(x), xp_special.xlogy(y, x), xp_special.gammaln(x[0])


@settings(deadline=None)       # (the first example compiles)
# (not subnormal: SciPy's gammaln of x < 1e-308 is inf, C's lgamma the finite -log(x); numba_xp_special says so)
@given(arrays(np.float64, st.integers(1, 6), elements=st.floats(-30, 60, allow_nan=False, allow_subnormal=False,
                                                                  width=64)
              .filter(lambda t: t > 0 or abs(t - round(t)) > 1e-3)),
       st.data())
def test_special_functions_equal_scipy(x, data):
    y = data.draw(arrays(np.float64, x.shape, elements=st.sampled_from([0.0, 0.5, -1.5, 2.0])))
    xp_ = np.abs(x) + 1e-3                                  # (xlogy's y > 0; x of any sign for the others)
    got = _specials(x, y)
    with np.errstate(all="ignore"):
        want = (scipy_special.gammaln(x), scipy_special.digamma(x), scipy_special.xlogy(y, x),
                scipy_special.gammaln(x[0]))
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12, err_msg=str(k))
    np.testing.assert_allclose(_specials(xp_, y)[2], scipy_special.xlogy(y, xp_), rtol=1e-13)


def test_first_extremum_compiles_the_pick_of_its_literal_sign_alone():
    """The sign is a literal at every call (the rule prints 1 or -1; the generated helper passes it on with
    ``numba.literally``): the implementation printed is that sign's pick alone, and a sign known only at run
    time is not typed.  Through the helper's own text, both signs equal the NumPy helper's on ties and NaN."""
    from coarsen_nb.lower.numba_helpers import NUMBA_HELPERS

    @numba.njit
    def at_run_time(x, sign):
        return xp.first_extremum(x, (1,), sign)

    with pytest.raises(numba.core.errors.TypingError):
        at_run_time(np.ones((2, 3)), 1)
    space: dict = {"xp": xp, "numba": numba}
    exec(NUMBA_HELPERS["_first_extremum"], space)    # noqa: S102 (the generated module's helper text)
    helper = numba.njit(space["_first_extremum"])

    @numba.njit
    def both(x):
        return helper(x, (1,), 1), helper(x, (0,), -1)

    m = np.array([[1.0, 3.0, 3.0], [np.nan, 2.0, np.nan], [-0.0, 0.0, -1.0], [-1.0, -1.0, -1.0]])
    for got, want in zip(both(m), (_first_extremum(m, (1,), 1), _first_extremum(m, (0,), -1)), strict=True):
        np.testing.assert_array_equal(got, want)
