"""Branches inside the terms of a sum whose terms have different signs.

The printer computes a sum's positive terms first and its negated terms after (``a - b``, not ``a + (-b)``);
its pre-pass (``lower/soi_levels.py``) walked the terms in SymPy's order.  Where two terms held branches,
the walk decided them in the other order, and the printer asked for a branch the walk had not decided
there: ``UndecidedLevel``, an internal error, on programs as plain as ``r = z - 1.0 if z > 1.0 else 0.0;
return r if c else x`` (its derivative in x is ``γ(0, c; 1) - z·γ(γ(1, z > 1; 0), c; 0)``).  Found while
fixing a per-block bug: the corpus's ``early_return_top`` hit it once a γ of an undefined value folded."""

from __future__ import annotations

import math
import warnings

import pytest
from gradcheck import assert_close, finite_difference
from hypothesis import given, settings
from hypothesis import strategies as st

import coarsen_nb as cn

NOT_EITHER = '''def f(x, y):
    z = math.exp(-x) * y
    if not (z > 1.0 or x < 0.0):
        r = z * x
    elif z > 1.0:
        r = z - 1.0
    else:
        r = 0.0
    return r
'''

FLAGGED = '''def f(x, y):
    z = math.exp(-x) * y
    done = x < 0.0
    r = 0.0
    if z > 1.0:
        done = True
        r = z - 1.0
    if not done:
        r = z * x
    return r
'''

CHOICES = '''def f(x, y):
    z = math.exp(-x) * y
    c = z > 1.0 or x < 0.0
    r = z - 1.0 if z > 1.0 else 0.0
    return r if c else z * x
'''

POINTS = [(0.5, 2.0), (0.5, 0.3), (-0.5, 1.0), (1.5, 0.2), (-0.2, 3.0)]


def _python(src: str):
    scope = {"math": math}
    exec(src, scope)        # noqa: S102 - the test's own program text, the plain-Python reference
    return scope["f"]


def _agrees(src: str, points, **options) -> None:
    fn = _python(src)
    f = cn.coarsen(src, **options)
    for x, y in points:
        with warnings.catch_warnings():
            warnings.simplefilter("error")      # no fallback to a finer selection or another backend
            value, (dx, dy) = f(x, y), f.grad(x, y)
        assert math.isclose(value, fn(x, y), rel_tol=1e-12, abs_tol=1e-14)
        assert_close(dx, finite_difference(fn, (x, y), 0), rtol=1e-6, atol=1e-7, what=f"d/dx at {x, y}")
        assert_close(dy, finite_difference(fn, (x, y), 1), rtol=1e-6, atol=1e-7, what=f"d/dy at {x, y}")


@pytest.mark.parametrize("src", [NOT_EITHER, FLAGGED, CHOICES], ids=["not-either", "flagged", "choices"])
@pytest.mark.parametrize("selection", [{}, {"max_soi": 1}, {"per_block": True}], ids=["default", "L=1", "per-block"])
@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_branches_in_terms_of_both_signs(src, selection, backend):
    pytest.importorskip(backend)
    _agrees(src, POINTS, backend=backend, **selection)


# a sum of conditional terms, each added or subtracted, each scaled by a value of x (so that its derivative
# is a product of a branch with a factor SymPy may sign either way)
TERM = st.tuples(st.sampled_from(["+", "-"]), st.sampled_from(["x", "y", "z", "(x * y)"]),
                 st.sampled_from(["z > 1.0", "x < 0.0", "y > 0.5", "z > 1.0 or x < 0.0", "x > y"]),
                 st.sampled_from(["z - 1.0", "x * x", "0.0", "y"]))


@settings(max_examples=25, deadline=None)
@given(terms=st.lists(TERM, min_size=2, max_size=4))
def test_sums_of_conditional_terms(terms):
    lines = ["def f(x, y):", "    z = math.exp(-x) * y", "    s = 0.0"]
    for k, (sign, scale, cond, arm) in enumerate(terms):
        lines.append(f"    c{k} = {arm} if {cond} else {scale}")
        lines.append(f"    s = s {sign} {scale} * c{k}")
    src = "\n".join(lines + ["    return s", ""])
    # away from the branches' kinks (z = 1, x = 0, y = 0.5, x = y), where central differences straddle them
    _agrees(src, [(0.5, 2.0), (0.7, 0.3), (-0.5, 1.0)], backend="numpy")
