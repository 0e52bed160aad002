"""A helper with an early ``return``, called inside an outer loop that runs over its lanes at once
(phi/batching.py): the helper's branch becomes γs, one of which reads its ``$ret = undef`` by name.

Under ``per_block=True`` and the NumPy backend that γ could not become SymPy (the undefined name had "no
scalar value"), was left an opaque step, and the printer raised ``cannot lower γ(...)``.  Found by
``test_random_programs.test_per_block_matches_python_and_fd``.  φ(a, undef) = a holds for a name bound to
undef as for undef itself: the path that picks it never reads it."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn

COMPARED = '''def h(p, q):
    if p > q:
        return p * q
    return p - q


def main(a, x):
    s0 = 0.0
    for e1 in x:
        s2 = 0.0
        for e3 in x:
            s2 += math.tanh(a * e3)
        s0 += math.tanh(h(a, e1)) + s2
    return s0
'''

# the test folds to False: the first return never runs, and only the γ of its undefined value is left
FOLDED = '''def h(p, q):
    if (p < p) and (p < p):
        return p
    return p * q


def main(a, x):
    s0 = 0.0
    for e1 in x:
        s2 = 0.0
        for e3 in x:
            s2 += math.tanh(a)
        s0 += math.tanh(h(a, e1)) * s2
    return s0
'''

# three returns, the middle one on a lane's value
THREE_RETURNS = '''def h(p, q):
    if q > 0.4:
        return p * q
    if q < -0.1:
        return math.sin(p) + q
    return p - q


def main(a, x):
    s0 = 0.0
    for e1 in x:
        s2 = 0.0
        for e3 in x:
            s2 += math.tanh(a * e3)
        s0 += h(a, e1) * s2
    return s0
'''


def _python(src: str):
    scope = {"math": math}
    exec(src, scope)        # noqa: S102 - the test's own program text, run as plain Python for the reference
    return scope["main"]


@pytest.mark.parametrize("src", [COMPARED, FOLDED, THREE_RETURNS], ids=["compared", "folded", "three-returns"])
@pytest.mark.parametrize("selection", [{"per_block": True}, {}, {"max_soi": 1}], ids=["per-block", "default", "L=1"])
@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_a_helpers_early_return_inside_batched_lanes(src, selection, backend):
    pytest.importorskip(backend)
    fn = _python(src)
    f = cn.coarsen(src, wrt=("a", "x"), backend=backend, **selection)
    for a, x in ((0.3, np.array([0.1, 0.5, -0.2])), (-0.7, np.array([0.9, -0.4, 0.45, 0.0]))):
        with warnings.catch_warnings():
            warnings.simplefilter("error")      # no fallback to a finer selection or another backend
            value, (da, dx) = f(a, x), f.grad(a, x)
        assert math.isclose(value, fn(a, x), rel_tol=1e-12, abs_tol=1e-14)
        assert_close(da, finite_difference(fn, (a, x), 0), rtol=1e-6, atol=1e-7, what="d/da")
        assert_close(dx, finite_difference(fn, (a, x), 1), rtol=1e-6, atol=1e-7, what="d/dx")
