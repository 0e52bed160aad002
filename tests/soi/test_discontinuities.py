"""Parametric discontinuities: which tests depend on a differentiated parameter."""

import coarsen_nb as cn
from coarsen_nb.kernels import KERNELS, function
from coarsen_nb.phi.discontinuities import find

BRANCH = "def f(x, y):\n    if x > 0:\n        z = x * y\n    else:\n        z = y\n    return z\n"
WHILE = """def descend(lr, w0):
    w = w0
    k = 0
    while k < 100:
        step = lr * 2.0 * w
        w = w - step
        k += 1
        if abs(step) < 1e-3:
            break
    return w
"""


def test_branch_on_x_is_flagged_for_x_only():
    g = cn.coarsen(BRANCH)._gated
    [d] = find(g, ("x",))
    assert (d.line, d.kind, d.predicate, d.inputs) == (2, "branch", "x > 0", ("x",))
    assert find(g, ("y",)) == []


def test_convergence_break_on_lr_is_a_loop_exit():
    g = cn.coarsen(WHILE)._gated
    exits = [d for d in find(g, ("lr",)) if d.kind == "loop exit"]
    assert [(d.line, d.predicate) for d in exits] == [(8, "abs(step) < 0.001")]
    assert [d.kind for d in find(g, ("lr",))] == ["loop exit", "min/max"]   # abs(step) is a kink too


def test_min_max_and_shapes():
    src = "def f(x, a):\n    n = len(a)\n    return min(x, 1.0) + n\n"
    assert [(d.kind, d.predicate) for d in find(cn.coarsen(src)._gated, ("x", "a"))] == [("min/max", "min(x, 1.0)")]


def test_kernels_report_their_known_jumps():
    found = {name: {d.kind for d in find(cn.coarsen(function(m))._gated, m.META["wrt"])}
             for name, m in KERNELS.items()}
    assert "loop exit" in found["bgd_hyperopt"]          # the convergence break on lr
    assert "branch" in found["pairwise_energy"]          # the cutoff r < 2.5
    assert found["rosenbrock"] == set() and found["horner_fit"] == set()   # loops over len(x) are not parametric
