"""L = 1 is operator-level AD: every operation of the user's statements its own SOI.

The three-address pass (:mod:`coarsen_nb.phi.operations`) splits each assignment into one assignment per
operation before lifting in operator mode; these tests check the split itself on the corpus, that the
SOIs it produces are single operations, and that it never hoists an operand the program only evaluates
conditionally (the arms of ``a if c else b``, the tail of ``and``/``or``).
"""

import math

import numpy as np
import pytest
from corpus import CORPUS, CORPUS_IDS
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn
from coarsen_nb import ir
from coarsen_nb.phi.gate import If, Let
from coarsen_nb.phi.operations import one_operation_per_let, softplus_operand
from coarsen_nb.phi.types import infer, signature_of

_LEAVES = (ir.Name, ir.Const, ir.Undef, ir.Attr)


def _lets(nodes):
    for n in nodes:
        if isinstance(n, Let):
            yield n
        elif isinstance(n, If):
            yield from _lets(n.then)
            yield from _lets(n.orelse)
        else:
            yield from _lets(n.header)
            yield from _lets(n.body)


def _always_evaluated(e):
    """The operands of ``e`` that run whenever ``e`` does."""
    if isinstance(e, ir.BoolOp):
        return e.values[:1]
    if isinstance(e, ir.IfExp):
        return (e.test,)
    if isinstance(e, ir.Index):
        return e.index
    if isinstance(e, ir.Update):
        return (*e.index, e.value)
    if isinstance(e, ir.Call) and softplus_operand(e) is not None:
        return (softplus_operand(e),)      # log(1 + exp(z)) is one operation: the guarded softplus
    return ir.children(e)


@pytest.mark.parametrize("entry", CORPUS, ids=CORPUS_IDS)
def test_every_assignment_is_one_operation(entry):
    f = cn.coarsen(entry.fn, wrt=entry.wrt or None)
    args = entry.make_args(np.random.default_rng(0))
    types = infer(f._gated, signature_of(args))
    g, split_types = one_operation_per_let(f._gated, types)
    before = {n.name for n in _lets(f._gated.body)}
    for let in _lets(g.body):
        for operand in _always_evaluated(let.value):
            assert isinstance(operand, _LEAVES), f"{let.name} = {let.value}: {operand} is not a leaf"
        assert let.name in before or let.name in split_types, let.name
    # the split keeps every original assignment and adds only new single-assignment names
    names = [n.name for n in _lets(g.body)]
    assert len(names) == len(set(names)) and before <= set(names)


PIECEWISE = """import math
def f(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 0:
            s += x[i] ** 2
        else:
            s += math.sin(x[i])
    return s
"""


def test_a_statement_of_three_operations_is_three_sois():
    """``s += x[i] ** 2`` is a read, a square and an add: at L = 1 three SOIs of one value each."""
    x = np.array([0.5, -1.25, 2.0, -0.3])
    f = cn.coarsen(PIECEWISE, max_soi=1)
    (g,) = (f.grad(x),)
    assert_close(g, np.where(x > 0, 2 * x, np.cos(x)), rtol=1e-14, atol=0, what="L=1 gradient")
    line6 = [k for k in f.plan.kernels() if k.lines == (6,)]
    assert len(line6) == 3 and all(len(k.body) == 1 for k in line6)
    ops = sorted(str(k.body[0][1]) for k in line6)
    assert any("**2" in o for o in ops) and any("+" in o for o in ops)


@pytest.mark.parametrize("x", [-2.0, -0.5, 0.5, 3.0])
def test_conditionally_evaluated_operands_stay_conditional(x):
    """log of a non-positive number is only in the arm or the ``and`` tail the program skips; hoisting it
    would raise (math domain error) or warn; operator level must run the program as written."""
    src = """import math
def f(x):
    a = math.log(x) * 3.0 if x > 0.0 else x * x
    if x > 0.0 and math.log(x) > 0.5:
        b = a + x
    else:
        b = a - x
    return a + b
"""
    namespace: dict = {}
    exec(compile(src, "<cell>", "exec"), namespace)
    with np.errstate(all="raise"):
        f = cn.coarsen(src, max_soi=1)
        assert math.isclose(f(x), namespace["f"](x), rel_tol=1e-14)
        g = f.grad(x)
    fd = finite_difference(namespace["f"], (x,), 0)
    assert_close(g, fd, rtol=1e-6, atol=1e-8, what="L=1 gradient vs FD")
