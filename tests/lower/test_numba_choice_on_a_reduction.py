"""A scalar ``if`` whose predicate reads a reduction, with integer arms (the derivative of ``return a`` taken
or not): the reverse sweep added the choice as ``b_a += xp.asarray(choice, dtype=xp.float64)`` because its
value "involved a reduction" (``OperatorPrinting.is_reduced`` looked into the predicate too).  The choice is a
Python number (an ``if`` picks one arm as it is), and Numba adds no 0-d array into a float: the numba backend
fell back to NumPy code (``NumbaFallbackWarning: ... No implementation of function iadd``).

Found by ``tests/phi/test_random_programs.py``'s extended programs (``np.sum(x[1:] * x[:-1] * ...)``) under
numba, stop 45."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)

RETURN_ON_A_SUM = '''def main(a, x, n):
    t = np.sum(x[1:] * x[:-1] * np.cos(0.5 * n))
    if t > 0.5:
        return a
    return 0.25
'''

LOOP_THEN_RETURN_ON_A_SUM = '''def main(a, x, n):
    s = a
    for i in range(len(x)):
        s -= math.cos(max(i * 0.25 - x[i], 0.1))
    t = np.sum(x[1:] * x[:-1] * np.cos(0.5 * n))
    if 3.0 > abs(t):
        return s
    return 0.25 * a
'''

POINTS = [(1.78, np.array([-0.70, 1.12, 0.79, 0.3, 1.45]), 4), (0.4, np.array([0.2, -0.5, 0.9]), 1),
          (-0.9, np.array([1.3, 1.1, 0.8, 1.2]), 0)]


def _python(src: str):
    scope = {"math": math, "np": np}
    exec(src, scope)        # noqa: S102 - the test's own program text, run as plain Python for the reference
    return scope["main"]


@pytest.mark.parametrize("src", [RETURN_ON_A_SUM, LOOP_THEN_RETURN_ON_A_SUM], ids=["return", "loop-then-return"])
@pytest.mark.parametrize("selection", [{}, {"max_soi": 1}, {"per_block": True}], ids=["default", "L=1", "per-block"])
@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_a_choice_on_a_reduction_adds_as_a_number(src, selection, backend):
    fn = _python(src)
    f = cn.coarsen(src, wrt=("a", "x"), backend=backend, **selection)
    for a, x, n in POINTS:
        with warnings.catch_warnings():
            warnings.simplefilter("error")      # no fallback to NumPy code or to a finer selection
            value, (da, dx) = f(a, x, n), f.grad(a, x, n)
        assert math.isclose(value, fn(a, x, n), rel_tol=1e-12, abs_tol=1e-14)
        assert_close(da, finite_difference(fn, (a, x, n), 0), rtol=1e-6, atol=1e-7, what="d/da")
        assert_close(dx, finite_difference(fn, (a, x, n), 1), rtol=1e-6, atol=1e-7, what="d/dx")
