"""A loop's closed form (a product or sum over an inner loop) read in an arm of a branch whose test is one
number, inside an outer loop run over its points: ``s += c if v < a else v + i`` with ``v`` made by an inner
loop.  The arm's points are the outer loop's (``cond`` points that vary over i); the level walk opened the inner
loop there as one loop at one point, and the printer then reduced it as segments with no segment map
(``_segment_prod(None, ...)``: an internal error).  Drawn by h-fuzz20's extended random programs (stop 45).

Two more, older, on the way (the ``outer-count`` case, an inner ``range(i1)``):

* under ``max_soi=1`` and ``per_block`` the outer loop ran over its lanes (phi/batching.py) although the inner
  loop's count differs by lane: ``range()`` of an array, a CoarsenError blaming the user's valid program;
* under numba the level walk walked into a value a loop writer had put into the printer's memo (a nest's
  accumulator), opening a branch level the printer never took, and a later branch got it: ``UndecidedLevel``
  (the walk now knows the memo, ``printing.Level.memo``, and walks a product as the printer computes it:
  tests/lower/test_walk_of_seeded_values.py has the rows' and the log-sum-exp rows' cases)."""

from __future__ import annotations

import math
import warnings

import pytest
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn

BODY = '''def main(a, b, c, n):
    s0 = a
    for i1 in range(n):
        v2 = math.log(b)
        for i3 in range(INNER):
            v2 = 0.5 * v2 + c
        s0 += ARM
    return s0
'''

CASES = {
    # the inner loop never runs (as drawn), runs a fixed count, or a count that depends on the outer index
    "never-runs": BODY.replace("INNER", "0").replace("ARM", "c if v2 < a else v2 + i1"),
    "fixed-count": BODY.replace("INNER", "3").replace("ARM", "c * v2 if v2 < a else v2 + i1"),
    "outer-count": BODY.replace("INNER", "i1").replace("ARM", "c * v2 if b < a else v2 + i1"),
    "and-test": BODY.replace("INNER", "2").replace("ARM", "math.cos(c * v2 if (v2 < a) and (i1 < 2) else v2 + i1)"),
}


def _python(src: str):
    scope = {"math": math}
    exec(src, scope)        # noqa: S102 - the test's own program text, the plain-Python reference
    return scope["main"]


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("selection", [{}, {"max_soi": 1}, {"per_block": True}], ids=["default", "L=1", "per-block"])
@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_a_loop_read_in_an_arm_of_a_scalar_branch_inside_a_loop(name, selection, backend):
    pytest.importorskip(backend)
    src = CASES[name]
    fn = _python(src)
    f = cn.coarsen(src, wrt=("a", "b", "c"), backend=backend, **selection)
    for args in ((1.42, 0.977, -0.5, 3), (-0.3, 2.5, 0.7, 4), (0.2, 1.3, 0.4, 0)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")      # no fallback to a finer selection or another backend
            value, grads = f(*args), f.grad(*args)
        assert math.isclose(value, fn(*args), rel_tol=1e-12, abs_tol=1e-14)
        for k in range(3):
            assert_close(grads[k], finite_difference(fn, args, k), rtol=1e-6, atol=1e-7, what=f"d/d arg {k} at {args}")
