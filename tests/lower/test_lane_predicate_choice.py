"""A choice between numbers whose predicate varies over the lanes of a batched loop.

``for e in x`` run over all its lanes at once (``phi/batching.py``) makes ``e`` an array of the lanes, so
``a * i if a < math.sin(e) else 1.0`` is one number per lane though both of its arms are numbers.  Type
inference (``phi/types.py``) gave such an ``a if p else b`` the type of its arms only (a float, where a
γ already took its predicate's shape); under the operator-level selection (``max_soi=1``) the choice is
an SOI's input of its own, printed as a Python number: ``math.tanh`` of the lanes' array raised NumPy's
"only 0-dimensional arrays can be converted to Python scalars" (found by
``tests/phi/test_random_programs.py::test_operator_level_matches_python_and_fd``).  The values and
gradients are checked against the plain function and central differences, for each selection and for
the NumPy and Numba backends.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn

pytestmark = pytest.mark.usefixtures("private_numba_cache")

# the inner loop's choice: numbers in both arms, a predicate on the lane (and one short-circuit `or`)
NUMBER_ARMS = """import math
def f(a, x):
    s = 0.0
    for e in x:
        t = math.cos(a)
        for i in range(2):
            t += math.tanh(a * (i + 1.0) if a < math.sin(e) else 1.0)
        s += t * e
    return s
"""

SHORT_CIRCUIT = """import math
def f(a, x):
    s = 0.0
    for e in x:
        t = math.cos(a)
        for i in range(3):
            t += math.tanh(math.exp(math.tanh(0.25 * i)) if 0.25 * a < math.sin(e) or e >= e + a else 1.0)
        s += t * e * a
    return s
"""

SELECTIONS = {"operator": {"max_soi": 1}, "default": {}, "per_block": {"per_block": True}}
# lanes on both sides of each predicate, none near its boundary (central differences stay on one side)
X = np.array([0.1, 1.3, -1.2, 0.7, 2.5])
A = 0.3


def _plain(src: str):
    space = {"math": math}
    exec(src, space)
    return space["f"]


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("selection", sorted(SELECTIONS))
@pytest.mark.parametrize("src", [NUMBER_ARMS, SHORT_CIRCUIT], ids=["number_arms", "short_circuit"])
def test_lane_predicate_choice_matches_python_and_fd(src, selection, backend):
    plain = _plain(src)
    f = cn.coarsen(src, wrt=("a", "x"), backend=backend, **SELECTIONS[selection])
    assert_close(f(A, X.copy()), plain(A, X.copy()), what="value")
    g_a, g_x = f.grad(A, X.copy())
    assert_close(g_a, finite_difference(plain, (A, X.copy()), 0), rtol=1e-5, atol=1e-6, what="d/da")
    assert_close(g_x, finite_difference(plain, (A, X.copy()), 1), rtol=1e-5, atol=1e-6, what="d/dx")
