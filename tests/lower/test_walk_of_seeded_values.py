"""The level walk and the values the numba loop writers put into a printer's memo, for the rows and the
log-sum-exp rows (the nest's case, an outer loop's count read by an inner one, is in
test_loop_in_a_scalar_arm.py).

The printer's pre-pass (``lower/soi_levels.py``, ``LevelWalk``) decides the levels of each request before it is
printed; the scalar branches of one level take its ``cond`` levels in the order they were opened.  The writers
give their printers values computed outside them (a row's invariant, a row's sum over its columns, a softmax
read from a log-sum-exp's row): the walk walked into them, opened the branches inside them that the printer
never printed, and a later branch at that level got one of those: an internal ``UndecidedLevel`` (a numba
compile error).  The walk now knows the memo (``printing.Level.memo``) and walks a product as the printer
computes it (a factor ``y**-1`` as ``y``: a row's invariant ``1/n`` known to the memo hid ``n``'s guard,
``n if n > 0 else 1.0``, which the printer divides by: tests/dask/test_dask_chunk_counts.py's ramped_rows).

Each program has a scalar branch of three arms (a nested ``if``) printed after a value the writer seeded; all
failed to compile before.  References: the plain function's value, central differences for the gradient."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn

pytest.importorskip("numba")

#: a row contraction (numba_rows): an invariant branch seeded into the row's printer, then a nested branch
ROWS = '''
def f(X, w, a, b):
    n = X.shape[0]
    s = 0.0
    for i in range(n):
        z = 0.0
        for j in range(X.shape[1]):
            z += X[i, j] * w[j]
        s += (a if a > b else b) * TERM + (z if a > 0.5 else (a * z if b > 0.1 else z * z))
    return s / n
'''

#: a log-sum-exp per row through a row of its terms (numba_lse_rows): its softmax seeded into the printer of
#: each (i, k), whose terms hold a branch; the scatter there has a nested branch of its own
G2 = "X[i, k] * w[k] if X[i, k] > 0 else a * X[i, k]"
G3 = "X[i, k] * w[k] if X[i, k] > 0.5 else (a * w[k] if X[i, k] > -0.5 else b * w[k])"
LSE_ROWS = '''
def f(X, w, a, b):
    s = 0.0
    for i in range(X.shape[0]):
        t = 0.0
        u = 0.0
        for k in range(X.shape[1]):
            t += math.exp(GL)
            u += GH
        s += math.log(t) + u
    return s
'''

PROGRAMS = {
    # (each with what its module holds where the writer ran: a rows function, a nest with a log-sum-exp's row)
    "rows": (ROWS.replace("TERM", "z"), ("_vjp_rows(",)),
    "rows-tiled-exp": (ROWS.replace("TERM", "math.log1p(math.exp(z))"), ("_vjp_rows(",)),
    "lse-rows": (LSE_ROWS.replace("GL", G2).replace("GH", G3), ("_vjp_nest(", "row = xp.empty(")),
    "lse-rows-both-nested": (LSE_ROWS.replace("GL", G3).replace("GH", G3.replace("0.5", "0.25")),
                             ("_vjp_nest(", "row = xp.empty(")),
}


def _python(src: str):
    scope = {"math": math}
    exec(src, scope)        # noqa: S102 - the test's own program text, the plain-Python reference
    return scope["f"]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_branch_printed_after_a_value_the_numba_writer_seeded(name):
    src, _ = PROGRAMS[name]
    fn = _python(src)
    f = cn.coarsen(src, wrt=("w", "a", "b"), backend="numba", namespace={"math": math})
    rng = np.random.default_rng(1)
    X, w = rng.standard_normal((6, 3)), rng.standard_normal(3)
    # (both arms of every branch: a > b and not, a > 0.5 and not, b > 0.1 and not)
    for a, b in ((0.7, 0.2), (0.3, 0.05), (0.2, 0.4)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")      # no fallback to a finer selection or another backend
            value, grads = f(X, w, a, b), f.grad(X, w, a, b)
        assert math.isclose(value, fn(X, w, a, b), rel_tol=1e-12, abs_tol=1e-13)
        args = (X, w, a, b)
        for k, g in zip((1, 2, 3), grads, strict=True):
            assert_close(g, finite_difference(fn, args, k), rtol=1e-6, atol=1e-6, what=f"d/d arg {k} at a={a}, b={b}")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_programs_run_through_the_writer_they_are_named_for(name):
    """(so that a change of schedule cannot leave the seeded values these test untested)"""
    src, marks = PROGRAMS[name]
    f = cn.coarsen(src, wrt=("w", "a", "b"), backend="numba", namespace={"math": math})
    f.grad(np.ones((4, 3)), np.ones(3), 0.5, 0.5)
    assert all(m in f.source for m in marks), name
