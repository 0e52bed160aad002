"""The NumPy printer's pre-pass (``lower/soi_levels.py``) walks a sum's terms in the order the printer prints
them: ``OperatorPrinting._op`` prints the negated terms last, each as its negation.  Two scalar ``if``s at one
level take that level's ``cond`` levels in the order they are opened, so when the walk went through a sum's
terms in SymPy's order and the printer in its own, a branch in a term printed first got the other branch's
level: ``InternalCompilerError: UndecidedLevel: the pre-pass opened no level ('branch', ...)``.

The first is a corpus entry; the other two were drawn by ``tests/phi/test_random_programs.py`` (stop 45, a
far larger budget than the suite's); each adjoint is a sum where a negated term with a branch comes before a
term whose adjoint reads another branch."""

from __future__ import annotations

import math
import warnings

import pytest
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn

# the adjoint of s0 is a sum over the loop's lanes plus the negated derivative of 1/(1 + c*c), both with a
# branch (with ``c = ...`` assigned once, SymPy orders the terms the other way and the walk agreed)
MAXIMUM_THEN_BRANCH = '''def main(a, b, n):
    s0 = b + a
    for i1 in range(1, n + 1):
        t2 = math.cos((i1 * 0.25) * (0.5 * n))
        s0 = max(s0, math.log(abs(b) + 1.0) if 2.0 * t2 >= 1.5 else math.sin(0.5 * n))
    return 1.0 / (1.0 + (s0 if s0 * (0.5 * n) >= math.sin(0.5 * n) else a)
                  * (s0 if s0 * (0.5 * n) >= math.sin(0.5 * n) else a))
'''

HELPER_IN_BRANCHES = '''def h(p, q):
    return min(p, p) + p / (1.0 + 1.0 * 1.0)


def main(a, n):
    if (0.5 * n > math.tanh(a)) and (math.tanh(2.0) <= a):
        return 1.0
    t0 = math.log(abs(a + 0.1) + 1.0)
    if (1.5 / (1.0 + a * a) >= 2.0 / (1.0 + 0.5 * 0.5)) and (abs(a) > a):
        if min(a, 1.5) > a * a:
            t1 = math.cos(a + a)
        else:
            t1 = (0.5 * n + a) if math.sin(a) > a and (a / (1.0 + a * a)) > math.cos(a) else min(a, a)
        t0 = h(t1 * a, a * a)
    if (t0 >= 0.5 * n * 0.1) and ((0.5 * n if math.tanh(a) >= 0.5 * n else 0.1) <= a):
        t2 = 0.5 * n
    else:
        t2 = math.log(abs(math.tanh(a)) + 1.0)
        if (t0 >= a) and (h(t0, 1.0) > math.sin(t0)):
            return (0.5 * n - a) if 2.0 < a * a < 0.5 * n else t0
    return (0.5 * n + t2) / (1.0 + t0 * t0)
'''

# tests/corpus.py's early_return_top: the default selection raised the same since ea4f86b (a γ arm naming an
# undefined value folds as undef does), which changed the shape of its adjoint's sum
EARLY_RETURN_TOP = '''def main(x, y):
    if x < 0.0:
        return -x * x + y
    z = math.exp(-x) * y
    if z > 1.0:
        return z - 1.0
    return z * x
'''

CASES = {
    "early-return-top": (EARLY_RETURN_TOP, ("x", "y"), [(0.3, 0.7), (-0.4, 1.2), (0.2, 2.5)]),
    "maximum-then-branch": (MAXIMUM_THEN_BRANCH, ("a", "b"), [(-0.1976, -0.8434, 1), (0.3, 0.2, 3), (0.9, -0.4, 2)]),
    "helper-in-branches": (HELPER_IN_BRANCHES, ("a",), [(6.88e-72, 5), (0.37, 1), (-0.6, 4), (0.95, 2)]),
}


def _python(src: str):
    scope = {"math": math}
    exec(src, scope)        # noqa: S102 - the test's own program text, run as plain Python for the reference
    return scope["main"]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("selection", [{}, {"max_soi": 1}, {"per_block": True}], ids=["default", "L=1", "per-block"])
def test_sum_terms_walked_in_printing_order(case, selection):
    src, wrt, points = CASES[case]
    fn = _python(src)
    f = cn.coarsen(src, wrt=wrt, backend="numpy", **selection)
    for args in points:
        with warnings.catch_warnings():
            warnings.simplefilter("error")      # no fallback to a finer selection
            value, grads = f(*args), f.grad(*args)
        grads = grads if isinstance(grads, tuple) else (grads,)
        assert math.isclose(value, fn(*args), rel_tol=1e-12, abs_tol=1e-14)
        for i, g in enumerate(grads):
            fd = finite_difference(fn, args, i, eps=1e-7)
            assert_close(g, fd, rtol=1e-5, atol=1e-6, what=f"d/d{wrt[i]} at {args}")
