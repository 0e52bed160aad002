"""Branches over arrays: an arm runs only on its own points, gathered by index.

A Piecewise over a level of points is printed one of three ways (``lower/branches.py``): one ``where``
when every arm is cheap arithmetic or already computed on all points; otherwise the cheapest such arm
is the result's buffer and the other arms run on the index arrays of their points (``nonzero``,
``take``, ``_put``); with no cheap arm, every arm runs on its own points.  These tests check the values
against the plain function and finite differences, for 1-D loop levels and for elementwise values of
any shape, with the untaken arm's domain errors made fatal, and that an operand is gathered once per
arm's points however often the arm (and its adjoint) reads it.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from corpus import CORPUS
from gradcheck import assert_close, finite_difference
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import coarsen_nb as cn
from coarsen_nb.kernels import KERNELS, function

ELEMENTWISE = """import numpy as np
def f(A, B):
    C = np.maximum(np.sin(A) * B, np.exp(B) - 2.0)
    return np.sum(C * C)
"""

LOOP = """import math
def f(x, c):
    s = 0.0
    for i in range(len(x)):
        if x[i] > c:
            s += x[i] * x[i] - c
        elif x[i] > -1.0:
            s += math.log(1.0 + x[i]) * math.cos(c * x[i])
        else:
            s += math.sqrt(-x[i]) + math.sin(x[i])
    return s
"""


def _plain(src):
    ns: dict = {}
    exec(compile(src, "<test>", "exec"), ns)
    return ns["f"]


@pytest.mark.parametrize("shape", [(7,), (4, 5), (2, 3, 4)])
def test_elementwise_arms_of_any_shape(shape):
    rng = np.random.default_rng(sum(shape))
    A, B = rng.standard_normal(shape), rng.uniform(0.5, 2.0, shape)
    f, plain = cn.coarsen(ELEMENTWISE), _plain(ELEMENTWISE)
    assert abs(f(A, B) - plain(A, B)) <= 1e-12 * abs(plain(A, B))
    gA, gB = f.grad(A, B)
    C = np.maximum(np.sin(A) * B, np.exp(B) - 2.0)
    m = np.sin(A) * B >= np.exp(B) - 2.0
    assert_close(gA, np.where(m, np.cos(A) * B, 0.0) * 2 * C, rtol=1e-13, atol=1e-13, what="dA")
    assert_close(gB, np.where(m, np.sin(A), np.exp(B)) * 2 * C, rtol=1e-13, atol=1e-13, what="dB")
    assert "xp.nonzero(xp.reshape(" in f.source      # the masked arm numbers the points of the flat array


@settings(max_examples=40, deadline=None)
@given(x=arrays(np.float64, st.integers(0, 12), elements=st.floats(-4.0, 4.0)), c=st.floats(0.0, 2.0))
def test_three_arms_on_their_own_points(x, c):
    """Points in every arm, in none, in one: the log arm sees only x > -1, the sqrt arm only x <= -1."""
    f, plain = cn.coarsen(LOOP), _plain(LOOP)
    with np.errstate(divide="raise", invalid="raise", over="raise"):     # (x * x may underflow)
        value = f(x, c)
        gx, gc = f.grad(x, c)
    assert abs(value - plain(x, c)) <= 1e-12 * max(1.0, abs(plain(x, c)))
    # finite differences away from the guards (where the derivative jumps or is infinite)
    if x.size and np.min(np.abs(np.concatenate([x - c, x + 1.0]))) > 1e-3:
        assert_close(gx, finite_difference(plain, (x, c), 0), rtol=1e-5, atol=1e-6, what="dx")
        assert_close(gc, finite_difference(plain, (x, c), 1), rtol=1e-5, atol=1e-6, what="dc")


def test_the_cheap_arm_is_the_buffer_and_only_the_other_is_gathered():
    """piecewise_sum's gradient: 2x on every point as the buffer, cos on the other arm's points alone."""
    mod = KERNELS["piecewise_sum"]
    f = cn.coarsen(function(mod), wrt=mod.META["wrt"])
    x = np.array([0.5, -1.0, 2.0, -0.25, 0.0])
    assert_close(f.grad(x), mod.grad(x), rtol=1e-15, atol=0, what="grad")
    names, texts = _functions(f.source)
    grad_src = texts[names.index(f"def {f.name}_grad")]
    assert "xp.where" not in grad_src and grad_src.count("xp.nonzero(") == 1
    gathered = re.search(r"xp\.cos\((\w+)\)", grad_src)
    assert grad_src.count("xp.cos(") == 1 and ("xp.cos(xp.take(" in grad_src or
                                               gathered and f"{gathered.group(1)} = xp.take(" in grad_src)


def _functions(source):
    """The generated module's functions, as (name, text)."""
    parts = re.split(r"^def ", source, flags=re.M)
    return [("def " + p).split("(")[0] for p in parts[1:]], ["def " + p for p in parts[1:]]


def _sources():
    for e in CORPUS:
        if e.differentiable and e.wrt:
            yield e.name, e.fn, e.wrt, e.make_args(np.random.default_rng(0))
    for name, mod in sorted(KERNELS.items()):
        yield name, function(mod), mod.META["wrt"], mod.make_inputs(mod.META["quick_sizes"][0], seed=0)


# Known gaps, each a compiler issue reported with its reproducer (the entry itself); strict, so a fix shows.
_GATHERED_TWICE: dict[str, str] = {}


@pytest.mark.parametrize("name,fn,wrt,args", [
    pytest.param(*s, id=s[0], marks=[pytest.mark.xfail(strict=True, reason=_GATHERED_TWICE[s[0]])]
                 if s[0] in _GATHERED_TWICE else []) for s in _sources()])
def test_an_operand_is_gathered_once_per_arm(name, fn, wrt, args):
    f = cn.coarsen(fn, wrt=wrt)
    f.grad(*args)
    for fname, text in zip(*_functions(f.source), strict=True):
        gathers = re.findall(r"xp\.take\(([^()]*(?:\([^()]*\))?[^()]*), (ix\d*), axis=0\)", text)
        repeated = {g for g in gathers if gathers.count(g) > 1}
        assert not repeated, f"{name}: {fname} gathers {sorted(repeated)} more than once"


def test_a_clamp_of_a_quotient_by_an_invariant_is_one_where():
    """segment_distance's ``min(max(t, 0), 1)`` of ``t = (...) / l2``: the predicates divide by ``l2`` on
    every point, so the arms may too (one ``where`` each, no masked arms); and the zero-trip guard of
    ``l2`` is one scalar before the loop, not a copy of each predicate per arm of the guard."""
    mod = KERNELS["segment_distance"]
    f = cn.coarsen(function(mod), wrt=mod.META["wrt"])
    args = mod.make_inputs(50, seed=1)
    assert_close(f.grad(*args), mod.grad(*args), rtol=1e-12, atol=1e-14, what="grad")
    assert "xp.nonzero(" not in f.source
    for text in _functions(f.source)[1]:
        assert text.count("n_px") <= 3, text        # n_px = ..., the guard's test, the trip count
    empty = (np.zeros(0), np.zeros(0), 0.5, 0.5, 0.5, 0.5)       # zero points and a == b: 0 / 0 nowhere
    assert f(*empty) == mod.segment_distance(*empty) == 0.0
    assert f.grad(*empty) == (0.0, 0.0, 0.0, 0.0)
