"""A loop nest's max/min and a log-sum-exp's row maximum under numba step with LLVM's ``llvm.maximum``
(vector instructions), then settle which zero or NaN the element loop keeps (``lower/numba_extrema.py``):
a zero extremum is the first zero, a NaN the last NaN (the exact loop again).

What must hold on any input (hypothesis: NaNs of both signs, infinities, signed zeros, ties, rows across the
vector widths): a nest's value is, bit for bit, the element loop's per row (the row's extremum made visible
by ``1 / m``, whose sign is the zero's), and value and gradient equal the NumPy backend's; a log-sum-exp over
each row (gmm's per-point form, run in tiles in the unchecked twin: its rows keep the exact scan) and over one
row (the nest's outermost: vectorized) equals the NumPy backend's.
"""

from __future__ import annotations

import math
import struct
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coarsen_nb as cn
from coarsen_nb.lower import numba_extrema
from coarsen_nb.numba_loader import NumbaFallbackWarning

pytest.importorskip("numba")


def rows_max(a):
    t = 0.0
    for i in range(a.shape[0]):
        m = -math.inf
        for j in range(a.shape[1]):
            m = max(m, a[i, j] * 2.0)
        t += 1.0 / m
    return t


def rows_min(a):
    t = 0.0
    for i in range(a.shape[0]):
        m = math.inf
        for j in range(a.shape[1]):
            m = min(m, a[i, j] * 2.0)
        t += 1.0 / m
    return t


def rows_logsumexp(x, mu):
    """gmm's per-point log-sum-exp: a running max and a scaled sum over the components."""
    ll = 0.0
    for i in range(x.shape[0]):
        m = -math.inf
        s = 0.0
        for k in range(mu.shape[0]):
            a = -(x[i] - mu[k]) ** 2
            if a > m:
                s = s * math.exp(m - a) + 1.0
                m = a
            else:
                s += math.exp(a - m)
        ll += m + math.log(s)
    return ll


def one_logsumexp(x, w):
    """The corpus's streaming log-sum-exp: one row, the nest's outermost, whose maximum is vectorized."""
    m = -math.inf
    s = 0.0
    for v in x:
        a = w * v
        if a > m:
            s = s * math.exp(m - a) + 1.0
            m = a
        else:
            s += math.exp(a - m)
    return m + math.log(s)


def element_loop(values, kind: str) -> float:
    """The reduction element by element, as NumPy defines it and the exact loop computes it (the reference)."""
    acc = -math.inf if kind == "max" else math.inf
    for v in values:
        if (v > acc if kind == "max" else v < acc) or v != v:
            acc = v
    return acc


def reference(a, kind: str) -> float:
    """rows_max / rows_min in Python floats from the element loop's extremum of each row (1/±0 is ±inf)."""
    t = 0.0
    for row in a * 2.0:
        m = element_loop(row, kind)
        t += math.copysign(math.inf, m) if m == 0 else 1.0 / m
    return t


def bits(v) -> int:
    return struct.unpack("<q", struct.pack("<d", float(v)))[0]


def close(got, want) -> None:
    """Equal to rounding: a sum over a row's softmax that cancels is ~1e-15 of the largest term, not 0."""
    finite = np.abs(want[np.isfinite(want)])
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12 * max(1.0, finite.max(initial=0.0)))


_FUNCTIONS = {"max": rows_max, "min": rows_min}


@pytest.fixture(scope="module")
def compiled():
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumbaFallbackWarning)      # (a fallback to NumPy code fails here)
        return _compiled()


def _compiled():
    out = {}
    for kind, fn in _FUNCTIONS.items():
        numba_f, numpy_f = cn.coarsen(fn, backend="numba"), cn.coarsen(fn, backend="numpy")
        numba_f(np.ones((2, 3)))
        numba_f.grad(np.ones((2, 3)))
        assert "_fwd_nest" in numba_f.source and numba_extrema.NAMES[kind] in numba_f.source, \
            "the nest's max must take the vectorized path"
        out[kind] = numba_f, numpy_f
    numba_f, numpy_f = cn.coarsen(rows_logsumexp, backend="numba"), cn.coarsen(rows_logsumexp, backend="numpy")
    numba_f.grad(np.ones(3), np.ones(2))
    # (a row at each point keeps the exact scan: numba_lse_rows)
    assert "row = xp.empty" in numba_f.source and "_ieee_maximum(top" not in numba_f.source
    out["lse"] = numba_f, numpy_f
    numba_f, numpy_f = cn.coarsen(one_logsumexp, backend="numba"), cn.coarsen(one_logsumexp, backend="numpy")
    numba_f.grad(np.ones(3), 0.5)
    assert "row = xp.empty" in numba_f.source and "_ieee_maximum(top" in numba_f.source, \
        "the log-sum-exp's one row must take the vectorized path"
    out["lse1"] = numba_f, numpy_f
    return out


_SPECIAL = st.sampled_from([math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 2.5, -2.5])
_ELEMENT = st.one_of(_SPECIAL, st.floats(min_value=-1e300, max_value=1e300, width=64))
# (the NumPy module's softmax e^{g - L} is L's rounding away from the row's: 1e-9 relative needs |g| ~< 1e4)
_MODERATE = st.one_of(_SPECIAL, st.floats(min_value=-100, max_value=100, width=64))
_TABLES = st.tuples(st.integers(1, 4), st.integers(1, 40)).flatmap(
    lambda shape: st.lists(_ELEMENT, min_size=shape[0] * shape[1], max_size=shape[0] * shape[1]).map(
        lambda v: np.array(v, dtype=np.float64).reshape(shape)))


@pytest.mark.parametrize("kind", ["max", "min"])
@settings(max_examples=150, deadline=None)
@given(a=_TABLES)
def test_a_nests_extremum_is_the_element_loops_bits(compiled, kind, a):
    numba_f, numpy_f = compiled[kind]
    with np.errstate(all="ignore"):
        got, want = numba_f(a), numpy_f(a)
    assert bits(got) == bits(reference(a, kind)) or (got != got and want != want), (a.tolist(), got)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("row", [
    [-1.0, -0.0, 0.0, -2.0], [-1.0, 0.0, -0.0], [-0.0] * 9, [0.0] * 9 + [-0.0], [-0.0] * 17 + [0.0] * 3,
    [1.0, math.nan, 2.0, -math.nan], [-math.nan] + [1.0] * 20 + [math.nan], [3.0] * 33,
    [1.0, math.inf, -math.inf], list(np.linspace(-1, 1, 101)),
])
def test_edges(compiled, kind, row):
    """Zeros of both signs in every order (the first zero's sign is the row's), NaNs of both signs (the last
    one's bits), ties across the vector lanes; and the gradient where it is finite."""
    numba_f, numpy_f = compiled[kind]
    for v in (row, row[::-1]):
        a = np.array([v, [5.0] * len(v)])
        with np.errstate(all="ignore"):
            got = numba_f(a)
        assert bits(got) == bits(reference(a, kind)), (v, got)
    a = np.array([[-1.0, 3.0, 3.0, 2.0], [0.5, -4.0, -4.0, 1.0]])
    np.testing.assert_array_equal(numba_f.grad(a), numpy_f.grad(a))


@settings(max_examples=100, deadline=None)
@given(x=st.lists(_MODERATE, min_size=1, max_size=70), mu=st.lists(_SPECIAL, min_size=1, max_size=9))
def test_a_rows_logsumexp_is_the_numpy_backends(compiled, x, mu):
    numba_f, numpy_f = compiled["lse"]
    x, mu = np.array(x), np.array(mu)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(numba_f(x, mu), numpy_f(x, mu), rtol=1e-12)
        got, want = numba_f.grad(x, mu), numpy_f.grad(x, mu)
    # (the numba nest's softmax is its row times 1/total, the NumPy module's e^{g - L}: a few ulp apart, which
    # the adjoint's -2(x - mu) * softmax summed over a row may take to ~1e-12 relative; the row's maximum
    # itself is compared bit for bit above)
    for g, w in zip(got, want, strict=True):
        close(g, w)


@settings(max_examples=150, deadline=None)
@given(x=st.lists(_MODERATE, min_size=1, max_size=90), w=st.sampled_from([1.0, -1.0, 0.5, 0.0, -0.0, 3.0]))
def test_one_rows_logsumexp_is_the_numpy_backends(compiled, x, w):
    """The row's maximum in vector instructions, its zeros (``w = 0``: every term ±0) and NaNs settled."""
    numba_f, numpy_f = compiled["lse1"]
    x = np.array(x)
    with np.errstate(all="ignore"):
        got, want = numba_f(x, w), numpy_f(x, w)
        np.testing.assert_allclose(got, want, rtol=1e-12)
        assert bits(got) == bits(want) or got != got or abs(got) > 0, (x.tolist(), w, got, want)  # (a zero's sign)
        for g, v in zip(numba_f.grad(x, w), numpy_f.grad(x, w), strict=True):
            close(np.asarray(g), np.asarray(v))


@pytest.mark.parametrize("size", [1, 3, 64, 65, 200])
def test_a_rows_logsumexp_whose_maximum_is_zero(compiled, size):
    """A component at a point itself (the row's maximum -(x - mu)**2 is 0.0 there, of either sign as written:
    the search for the first zero) and one far (a row of -inf after the shift), gmm's tiles of 64 points."""
    numba_f, numpy_f = compiled["lse"]
    x = np.linspace(-3, 3, size)
    mu = np.array([x[size // 2], 1e200, -0.0, 0.0])
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(numba_f(x, mu), numpy_f(x, mu), rtol=1e-12)
        for g, w in zip(numba_f.grad(x, mu), numpy_f.grad(x, mu), strict=True):
            close(g, w)
