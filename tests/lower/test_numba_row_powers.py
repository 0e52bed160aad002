"""``backend="numba"``: a row's power read from the running power of its inner loop (``lower/numba_rows.py``).

Horner's rule from a starting value p0 lifts to p0·x^D + Σ_k c_k x^(D-1-k); the row loop keeps x^(D-1-k) as a
running product over k, and x^D is where that product ends after the loop, so it is read from it (computed
by ``_ipow`` where the loop did not run: no coefficients).  Values and gradients against the NumPy backend
(1e-10), the NumPy gradient against central differences, at edge values of x (0, negative, NaN, an overflow
to inf) and of the coefficient count (0, 1, several).
"""

from __future__ import annotations

import numpy as np
import pytest
from numba_pairs import BackendPairs

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


def horner_from(c, xs, ys, p0):
    loss = 0.0
    for i in range(len(xs)):
        p = p0
        for k in range(len(c)):
            p = p * xs[i] + c[k]
        r = p - ys[i]
        loss += r * r
    return loss


PAIRS = BackendPairs({"horner_from": (horner_from, ("c", "p0"))})


def _inputs(rows, degree, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(degree), rng.uniform(-1.5, 1.5, rows), rng.standard_normal(rows), 0.7


@pytest.mark.parametrize("rows,degree", [(0, 3), (5, 0), (6, 1), (9, 5)])
def test_horner_from_a_start_equals_numpy_and_central_differences(rows, degree):
    PAIRS.check_with_differences("horner_from", _inputs(rows, degree, seed=rows + degree))


@pytest.mark.parametrize("x", [0.0, -2.0, np.nan, 1e80])
def test_edge_values_of_x_equal_numpy(x):
    c, xs, ys, p0 = _inputs(4, 5, seed=1)
    xs[2] = x
    with np.errstate(all="ignore"):
        PAIRS.check("horner_from", (c, xs, ys, p0))


def test_the_rows_power_is_the_running_one():
    PAIRS.check("horner_from", _inputs(5, 4))
    source = PAIRS.pair("horner_from")[2].source
    rows = [part for part in source.split("\n\n\n") if "_vjp_rows" in part.split("(")[0]]
    assert rows and all("pw_end = pw if " in part for part in rows), rows
