"""A truth value used as a number: ``a * (x > 0)``, ``-(x < 1) * x**2``, ``np.sum(a * (x > c))``.

Python and NumPy read a comparison in arithmetic as 1 where it holds, else 0. The lifter made SymPy
multiply a relation (a ``TypeError``, surfacing as an internal compiler error); the comparison is now the
γ that picks 1 or 0. Two truth values added or subtracted are not lifted: ``True + True`` is 2 for
Python's bools but ``True`` for NumPy's (their ``or``), and which one a value is, the lifter does not
know — so that must never give the other's answer.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from gradcheck import finite_difference
from hypothesis import given, settings
from hypothesis import strategies as st

import coarsen_nb as cn
from coarsen_nb.errors import CoarsenError

PROGRAMS = {
    "vectorized": '''
import numpy as np
def f(a, x):
    return np.sum(a * (x > 0.25)) + np.sum((x < 0.5) * x ** 2)
''',
    "loop": '''
def f(a, x):
    s = 0.0
    for i in range(len(x)):
        s += a[i] * (x[i] > 0.25) - (x[i] < 0.5) * x[i] ** 2 + (x[i] > a[i])
    return s
''',
    "one_minus": '''
import numpy as np
def f(a, x):
    return np.sum((1.0 - (x > 0.25)) * a) + np.sum(np.exp(a) * (a <= x))
''',
    "count": '''
import numpy as np
def f(a, x):
    return np.sum(x > 0.25) * np.sum(a) + np.mean(a < 0.5) * np.sum(a * (a > x))
''',
}
MODES = {"default": {}, "L=1": {"max_soi": 1}, "per-block": {"per_block": True}}


def _plain(src):
    ns: dict = {}
    exec(src, ns)
    return ns["f"]


def _away_from_thresholds(values, a=None):
    """Points at least 1e-3 from where a comparison flips, so that central differences see no jump."""
    v = np.asarray(values, dtype=float)
    for c in (0.25, 0.5):
        v = np.where(np.abs(v - c) < 1e-3, v + 3e-3, v)
    if a is not None:
        v = np.where(np.abs(v - a) < 1e-3, v + 3e-3, v)
    return v


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("program", PROGRAMS)
@settings(max_examples=8, deadline=None)
@given(data=st.lists(st.tuples(st.floats(-2, 2), st.floats(-2, 2)), min_size=1, max_size=6))
def test_a_comparison_in_arithmetic_counts_as_one_or_zero(program, mode, data):
    src = PROGRAMS[program]
    a = _away_from_thresholds([p[0] for p in data])
    x = _away_from_thresholds([p[1] for p in data], a)
    plain = _plain(src)
    f = cn.coarsen(src, **MODES[mode])
    assert math.isclose(f(a, x), plain(a, x), rel_tol=1e-12, abs_tol=1e-12)
    grads = f.grad(a, x)
    for i, g in enumerate(grads):
        np.testing.assert_allclose(g, finite_difference(plain, (a, x), i), rtol=1e-6, atol=1e-6)


def test_truth_values_times_scalars():
    src = "def f(a, b):\n    return a * (b > 0.5) + -(a > b) + (a > 1) * (b > 0)\n"
    plain, f = _plain(src), cn.coarsen(src)
    for a, b in ((1.5, 0.7), (0.2, 0.9), (-1.0, -3.0)):
        assert f(a, b) == plain(a, b)
        assert f.grad(a, b) == (float(b > 0.5), 0.0)


def test_two_truth_values_added_never_give_the_wrong_ones_answer():
    """NumPy adds bool arrays as ``or``: 4.1 here, where numbers would give 7.0. The default selection
    refuses (a clear error), L = 1 runs NumPy's own addition: never 7.0."""
    src = '''
import numpy as np
def f(a, x):
    return np.sum(a * ((x > 0) + (a > 0.6)))
'''
    a, x = np.array([0.5, 0.7, 0.9, 2.0]), np.array([1.0, -2.0, 3.0, 0.5])
    want = _plain(src)(a, x)
    for kw in MODES.values():
        try:
            got = cn.coarsen(src, **kw)(a, x)
        except CoarsenError as e:
            assert "adds two comparisons" in str(e) and "(x > 0) + (a > 0.6)" in str(e)
            continue
        assert got == pytest.approx(want, rel=1e-12)


def test_the_hints_for_two_comparisons_added_give_the_sum_and_the_or():
    """What the error suggests, written out, gives NumPy's `or` and the count, compiled."""
    a, x = np.array([0.5, 0.7, 0.9, 2.0]), np.array([1.0, -2.0, 3.0, 0.5])
    for body in ("np.sum(a * np.maximum(1.0 * (x > 0), 1.0 * (a > 0.6)))",
                 "np.sum(a * (1.0 * (x > 0) + 1.0 * (a > 0.6)))"):
        src = f"import numpy as np\ndef f(a, x):\n    return {body}\n"
        plain, f = _plain(src), cn.coarsen(src)
        assert f(a, x) == pytest.approx(plain(a, x), rel=1e-12)
        np.testing.assert_allclose(f.grad(a, x)[0], finite_difference(plain, (a, x), 0), rtol=1e-6)
