"""A running maximum's (or minimum's) adjoint is evaluated at its arg-extremum alone (lower/emit.py,
``_at_arg_extremum``): Σ_k [k = argmax g]·h(k) is h at that one point, not h on every point times a
one-hot.  The value must not change: the first of equal maxima wins (Python's ``max`` keeps the
earlier), an initial value that is never beaten gives a zero derivative, an empty loop gives zero,
and the JVP agrees with the gradient.  References: the plain function (value), central differences
(the gradient, where no tie is near) and the first-arg-extremum rule written out by hand (ties).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import coarsen_nb as cn
from coarsen_nb.kernels import KERNELS, function


def worst_fit(x, a, b):
    worst = -1.0
    for i in range(len(x)):
        d = math.sin(a * x[i]) * b + (x[i] - a) ** 2
        worst = max(worst, d)
    return worst


def best_fit(x, a, b):
    best = 50.0
    for i in range(len(x)):
        best = min(best, math.cos(b * x[i]) + a * x[i] * x[i])
    return best


def _hand(fn, x, a, b):
    """d/da, d/db at the first arg-extremum (0 when the initial value is the extremum)."""
    if fn is worst_fit:
        d = np.sin(a * x) * b + (x - a) ** 2
        if not len(x) or not d.max() > -1.0:
            return 0.0, 0.0
        i = int(np.argmax(d))
        return math.cos(a * x[i]) * x[i] * b - 2 * (x[i] - a), math.sin(a * x[i])
    d = np.cos(b * x) + a * x * x
    if not len(x) or not d.min() < 50.0:
        return 0.0, 0.0
    i = int(np.argmin(d))
    return x[i] * x[i], -math.sin(b * x[i]) * x[i]


FNS = [worst_fit, best_fit]
SELECTIONS = [{}, {"max_soi": 1}]


@pytest.mark.parametrize("selection", SELECTIONS, ids=["default", "L=1"])
@pytest.mark.parametrize("fn", FNS, ids=lambda f: f.__name__)
@settings(max_examples=30, deadline=None)
@given(x=arrays(np.float64, st.integers(0, 9), elements=st.sampled_from([-1.0, -0.5, 0.0, 0.25, 0.5, 1.5])),
       a=st.floats(0.2, 1.5), b=st.floats(0.2, 1.5))
def test_ties_take_the_first_extremum(fn, selection, x, a, b):
    """Drawn from six values, so ties are common: the derivative is the first tied point's."""
    f = cn.coarsen(fn, wrt=("a", "b"), **selection)
    assert math.isclose(f(x, a, b), fn(x, a, b), rel_tol=1e-13, abs_tol=1e-13)
    got = f.grad(x, a, b)
    want = _hand(fn, x, a, b)
    for g, w in zip(got, want, strict=True):
        assert math.isclose(g, w, rel_tol=1e-12, abs_tol=1e-12), (got, want)
    _, jvp = f.jvp((x, a, b), (0.3, -0.7))
    assert math.isclose(jvp, 0.3 * got[0] - 0.7 * got[1], rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.parametrize("fn", FNS, ids=lambda f: f.__name__)
@settings(max_examples=30, deadline=None)
@given(x=arrays(np.float64, st.integers(1, 12), elements=st.floats(-2.0, 2.0)),
       a=st.floats(0.2, 1.5), b=st.floats(0.2, 1.5))
def test_gradient_against_central_differences(fn, x, a, b):
    """Away from ties (the two best points apart by 1e-3): a tie is the other test's."""
    d = np.sin(a * x) * b + (x - a) ** 2 if fn is worst_fit else -(np.cos(b * x) + a * x * x)
    top = np.sort(np.append(d, -1.0 if fn is worst_fit else -50.0))[::-1]
    assume(top[0] - top[1] > 1e-3)
    f = cn.coarsen(fn, wrt=("x", "a", "b"))
    gx, ga, gb = f.grad(x, a, b)
    h = 1e-6
    for k, (g, bump) in enumerate([(ga, (h, 0.0)), (gb, (0.0, h))]):
        up, down = fn(x, a + bump[0], b + bump[1]), fn(x, a - bump[0], b - bump[1])
        if abs(up + down - 2 * fn(x, a, b)) < 1e-7:        # no change of arg-extremum in between
            assert math.isclose(g, (up - down) / (2 * h), rel_tol=1e-5, abs_tol=1e-6), (k, g)
    for i in range(len(x)):
        e = np.zeros(len(x))
        e[i] = h
        up, down = fn(x + e, a, b), fn(x - e, a, b)
        if abs(up + down - 2 * fn(x, a, b)) < 1e-7:
            assert math.isclose(gx[i], (up - down) / (2 * h), rel_tol=1e-5, abs_tol=1e-6), (i, gx[i])


def test_segment_distance_evaluates_its_adjoint_at_one_point():
    """The worst point's derivative alone: no one-hot over all points in the gradient."""
    mod = KERNELS["segment_distance"]
    f = cn.coarsen(function(mod), wrt=mod.META["wrt"])
    args = mod.make_inputs(200, seed=3)
    np.testing.assert_allclose(f.grad(*args), mod.grad(*args), rtol=1e-12, atol=1e-14)
    grad_source = f.source[f.source.index(f"def {f.name}_grad("):f.source.index(f"def {f.name}_jvp(")]
    assert "== xp.argmax(" not in grad_source and "xp.argmax(" in grad_source
