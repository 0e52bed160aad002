"""The arm that sums an infinite factor's terms one by one (``NestPrinting._times_taken_out``, lower/nests.py) is
an ``if`` marked ``exceptional`` where it is built (``lir.If``), the mark survives the writer's passes (dead
assignments, liveness, first contributions), and the cost model counts the ``else`` alone because of the mark,
not because of the shape of the test.

References: the generated VJP function run instrumented on finite data (tests/lower/measure.py: the operations
it does, counted by running it), and the test expression each arm's printer writes (``isinf``).
"""

import numpy as np
import pytest
from measure import measure

import coarsen_nb as cn
from coarsen_nb.kernels import KERNELS, function
from coarsen_nb.lower import lir, lir_ast
from coarsen_nb.lower.cost import estimate
from coarsen_nb.lower.module import ModuleWriter

#: kernels whose gradient takes an infinite-capable factor out of a sum (a vector's, a number's)
WITH_THE_ARM = ("gmm", "hookean_spring")


def _compiled(name):
    mod = KERNELS[name]
    args = mod.make_inputs(mod.META["quick_sizes"][0], seed=0)
    f = cn.coarsen(function(mod), wrt=mod.META["wrt"], backend="numpy")
    f.grad(*args)
    return f, args


def _calls_isinf(e: lir.Expr) -> bool:
    return any(isinstance(x, lir.Attr) and x.attr == "isinf" for x in lir.walk(e))


@pytest.mark.parametrize("name", WITH_THE_ARM)
def test_the_infinity_arm_is_marked_and_nothing_else_is(name):
    f, _ = _compiled(name)
    writer = ModuleWriter(f.plan, f.wrt)
    writer.source()
    body = writer.printed[f.plan.name + "_vjp"].body
    ifs = [s for s in lir.statements(body) if isinstance(s, lir.If)]
    marked = [s for s in ifs if s.exceptional]
    assert marked, f"{name}: no if marked exceptional in its VJP function"
    assert [s for s in ifs if _calls_isinf(s.test)] == marked


@pytest.mark.parametrize("name", WITH_THE_ARM)
def test_the_model_counts_a_finite_run_because_of_the_mark(name, monkeypatch):
    f, args = _compiled(name)
    counts = measure(f.source, f.name, args)
    assert np.all(np.isfinite(np.concatenate([np.ravel(a) for a in args])))     # (the arm never runs)
    shapes = tuple(getattr(a, "shape", ()) for a in args)
    ints = {p: int(a) for p, a in zip(f.params, args, strict=True) if isinstance(a, (int, np.integer))}
    with_mark = estimate(f.plan, f.wrt, shapes, ints=ints)
    assert with_mark.forward_ops == pytest.approx(counts.ops[0], rel=0.10)
    assert with_mark.derivative_ops == pytest.approx(counts.ops[1], rel=0.10)
    assert with_mark.allocations == pytest.approx(counts.allocations, rel=0.10)
    # the same function with the mark not read: the arm is an undecided `if`, counted at half weight
    monkeypatch.setattr(lir_ast, "exceptional", lambda node: False)
    without_mark = estimate(f.plan, f.wrt, shapes, ints=ints)
    assert without_mark.forward_ops + without_mark.derivative_ops > with_mark.forward_ops + with_mark.derivative_ops
    assert without_mark.allocations > with_mark.allocations
