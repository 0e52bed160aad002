"""``backend="numba"``: a loop that stores cosines and sines calls ``_cos``/``_sin`` and recomputes its far elements
with libm's (``lower/numba_trig.py``).

Three programs whose gradient is such a loop: piecewise_sum (a scatter, cos in one arm of a branch), a scatter of
sin and cos of a scaled argument, and an elementwise adjoint of sin and cos of two arrays.  The gradient against
the NumPy backend's (1e-12), on arrays of any length (the vector lanes and the scalar remainder) holding numbers
near 0, up to the bound and beyond it, huge, infinite and NaN; the far elements exactly libm's; the NumPy
gradient against central differences; and each program's module does call the vectorizable helpers.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numba_pairs import BackendPairs, as_tuple

from coarsen_nb.kernels.piecewise_sum import piecewise_sum
from coarsen_nb.lower.numba_helpers import TRIG_NEAR

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


def wave(x, w):
    s = 0.0
    for i in range(len(x)):
        s += math.sin(w * x[i]) * x[i]
    return s


def shifted(x):
    """A sum whose subscripts are not the loop variable alone: no test before the loop proves them in bounds,
    so the sum keeps libm's calls (its adjoint's scatter does not need the tests)."""
    s = 0.0
    for i in range(len(x) - 1):
        s += math.cos(x[i + 1]) * x[i]
    return s


def both(x, y):
    z = np.sin(x) * y + np.cos(y)
    return np.sum(z * z)


PROGRAMS = {"piecewise_sum": (piecewise_sum, ("x",)), "wave": (wave, ("x",)), "shifted": (shifted, ("x",)),
            "both": (both, ("x", "y"))}
PAIRS = BackendPairs(PROGRAMS)

# numbers of every kind a cos or sin may read: ordinary, up to the bound and just past it, huge, inf, NaN
_SPECIAL = [0.0, -0.0, TRIG_NEAR, -TRIG_NEAR, np.nextafter(TRIG_NEAR, np.inf), -1e6, 1e22, -1.7e308, np.inf,
            -np.inf, np.nan]
_ELEMENTS = st.one_of(st.floats(-10.0, 10.0), st.floats(-TRIG_NEAR, TRIG_NEAR), st.floats(),
                      st.sampled_from(_SPECIAL))


def _args(name, x):
    return (x, 1.5) if name == "wave" else (x, np.roll(x, 1)) if name == "both" else (x,)


def _numba_equals_numpy(name, args):
    """numba's value and gradient equal the NumPy backend's (:meth:`BackendPairs.equal_to_numpy`)."""
    return PAIRS.equal_to_numpy(name, args, grad_atol=0)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_the_loop_calls_the_vectorizable_helpers(name):
    _, _, by_numba = PAIRS.pair(name)
    by_numba.grad(*_args(name, np.linspace(-3.0, 3.0, 5)))
    assert "_cos(" in by_numba.source and "math.cos(" in by_numba.source     # (and libm's for the far elements)
    # a sum over a loop whose subscripts the tests before it find in bounds: in chunks, with _sin
    assert ("_fwd_reduce_in_bounds(" in by_numba.source) == (name in ("piecewise_sum", "wave"))


@pytest.mark.parametrize("name", ["piecewise_sum", "wave"])
def test_a_chunked_sum_adds_in_the_loops_order(name):
    """The value of a sum of sines by chunks: the plain function's (one term at a time, libm's sin) to the
    terms' 1 ulp, across several chunks and a partial last one; exactly it where an element is far (the sum
    again with libm's)."""
    fn, _, by_numba = PAIRS.pair(name)
    x = np.random.default_rng(1).uniform(-4.0, 4.0, 1000)
    np.testing.assert_allclose(by_numba(*_args(name, x)), fn(*_args(name, x)), rtol=1e-13)
    x[700] = -3e6 if name == "piecewise_sum" else 3e6
    assert by_numba(*_args(name, x)) == fn(*_args(name, x))


@pytest.mark.parametrize("name", list(PROGRAMS))
@pytest.mark.parametrize("n", [1, 3, 17])
def test_equals_numpy_and_central_differences(name, n):
    x = np.random.default_rng(n).uniform(-4.0, 4.0, n)
    PAIRS.check_with_differences(name, _args(name, x))


@settings(max_examples=60, deadline=None)      # (a first call of a type compiles: seconds)
@given(name=st.sampled_from(list(PROGRAMS)), x=arrays(np.float64, st.integers(0, 40), elements=_ELEMENTS))
def test_any_numbers_equal_numpy(name, x):
    _numba_equals_numpy(name, _args(name, x))


def test_a_far_element_is_libms_exactly():
    """piecewise_sum's gradient is cos(x_i) where x_i <= 0: libm's own value beyond the bound, within 1 ulp of
    it elsewhere (the neighbours of the far element, in the same vector lanes)."""
    x = -np.abs(np.random.default_rng(0).standard_normal(13))
    x[[2, 9]] = -1e7, -math.pi * 2**40
    (g,) = as_tuple(_numba_equals_numpy("piecewise_sum", (x,)))
    assert g[2] == math.cos(x[2]) and g[9] == math.cos(x[9])
    np.testing.assert_array_max_ulp(g, np.array([math.cos(v) for v in x]), maxulp=1)
