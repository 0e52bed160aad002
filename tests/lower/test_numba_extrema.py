"""A fused loop's max/min under numba steps with LLVM's ``llvm.maximum``/``minimum`` (vector instructions)
and runs the exact element loop again for a NaN or a zero result (``lower/numba_extrema.py``).

What must hold, on any input (hypothesis: NaNs of both signs, infinities, signed zeros, ties, lengths across
the vector widths): the value is, bit for bit, the element loop's -- the first element equal to the extremum
(so the sign of a zero maximum is the first zero's), a NaN where there is one (the last NaN, as
``if v > acc or v != v: acc = v`` keeps it) -- and value and gradient equal the NumPy backend's (which
agrees on NaN and on the value, but picks among signed zeros by its own rule).
"""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coarsen_nb as cn
from coarsen_nb.lower import numba_extrema

pytest.importorskip("numba")


def loop_max(x):
    m = -math.inf
    for i in range(len(x)):
        m = max(m, x[i] * 2.0)
    return m


def loop_min(x):
    m = math.inf
    for i in range(len(x)):
        m = min(m, x[i] * 2.0)
    return m


def element_loop(values, kind: str) -> float:
    """The reduction element by element, as NumPy defines it and the exact loop computes it (the reference)."""
    acc = -math.inf if kind == "max" else math.inf
    for v in values:
        if (v > acc if kind == "max" else v < acc) or v != v:
            acc = v
    return acc


def bits(v) -> int:
    return struct.unpack("<q", struct.pack("<d", float(v)))[0]


_FUNCTIONS = {"max": loop_max, "min": loop_min}


@pytest.fixture(scope="module")
def compiled():
    out = {}
    for kind, fn in _FUNCTIONS.items():
        numba_f = cn.coarsen(fn, backend="numba")
        numpy_f = cn.coarsen(fn, backend="numpy")
        x = np.array([1.0, 2.0, 3.0])
        numba_f.grad(x)                 # (compiled here: a fallback to NumPy code would warn, pytest errors)
        assert numba_extrema.NAMES[kind] in numba_f.source, "the loop must take the vectorized path"
        out[kind] = numba_f, numpy_f
    return out


_SPECIAL = st.sampled_from([math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 2.5, -2.5])
# (finite ones below 1e300: doubled, they stay finite, and no overflow warns)
_ELEMENT = st.one_of(_SPECIAL, st.floats(min_value=-1e300, max_value=1e300, width=64))
_ARRAYS = st.lists(_ELEMENT, min_size=1, max_size=70).map(lambda v: np.array(v, dtype=np.float64))


@pytest.mark.parametrize("kind", ["max", "min"])
@settings(max_examples=150, deadline=None)
@given(x=_ARRAYS)
def test_the_element_loops_bits_and_the_numpy_backends_values(compiled, kind, x):
    numba_f, numpy_f = compiled[kind]
    got = numba_f(x)
    want = element_loop(x * 2.0, kind)
    assert bits(got) == bits(want), (x.tolist(), got, want)
    np.testing.assert_array_equal(got, numpy_f(x))       # (NaN equal to NaN; 0.0 to -0.0)
    g_numba, g_numpy = numba_f.grad(x), numpy_f.grad(x)
    np.testing.assert_array_equal(g_numba, g_numpy)


@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("values", [
    [-1.0, -0.0, 0.0, -2.0], [-1.0, 0.0, -0.0], [-0.0] * 9, [0.0] * 9 + [-0.0], [-0.0] * 17 + [0.0] * 3,
    [1.0, math.nan, 2.0, -math.nan], [-math.nan] + [1.0] * 20 + [math.nan], [math.inf, math.nan, -math.inf],
    [-math.inf] * 5, [math.inf] * 5, [3.0] * 33, [1.0, math.inf, -math.inf], list(np.linspace(-1, 1, 101)),
])
def test_edges(compiled, kind, values):
    """Zeros of both signs in every order (the case the exact loop runs again for), NaNs of both signs, the
    identity itself, ties across the vector lanes."""
    numba_f, numpy_f = compiled[kind]
    for v in (values, values[::-1]):
        x = np.array(v)
        got = numba_f(x)
        assert bits(got) == bits(element_loop(x * 2.0, kind)), (v, got)
        np.testing.assert_array_equal(got, numpy_f(x))
        np.testing.assert_array_equal(numba_f.grad(x), numpy_f.grad(x))


def test_the_intrinsic_takes_integers_and_booleans():
    """An integer or boolean operand is converted to float64, as the exact loop's accumulator (a float from
    its start at -inf) takes it."""
    import numba
    import numba.extending

    space: dict = {"numba": numba}
    exec(numba_extrema.source("max") + numba_extrema.source("min"), space)
    maximum, minimum = (numba.extending.intrinsic(space[n]) for n in ("_ieee_maximum", "_ieee_minimum"))

    @numba.njit
    def both(a, b):
        return maximum(a, b), minimum(a, b)

    assert both(3, 2.5) == (3.0, 2.5)
    assert both(True, -1.0) == (1.0, -1.0)
    hi, lo = both(-0.0, 0.0)
    assert (bits(hi), bits(lo)) == (bits(0.0), bits(-0.0))       # (llvm.maximum: -0.0 below 0.0)
    assert all(v != v for v in both(math.nan, 1.0)) and all(v != v for v in both(1.0, math.nan))
