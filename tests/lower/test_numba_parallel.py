"""``parallel=True`` (issue 14, "Threads"): the numba backend's independent loops on threads.

Oracles: the NumPy backend's values and gradients (to 1e-12 relative: a threaded sum adds its partials in
another order), Python's own loop for the loops a thread must not split, and the records themselves for
which loops :func:`coarsen_nb.lower.numba_threads.threadable` lets run on threads: a sum or product into an
accumulator and writes to the iteration's own element may; a maximum, a scatter to another element, an
accumulation under an ``if`` and a name read after the loop may not.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from gradcheck import assert_close
from hypothesis import given, settings
from hypothesis import strategies as st

import coarsen_nb as cn
from coarsen_nb import CoarsenError
from coarsen_nb.kernels import KERNELS
from coarsen_nb.lower import lir
from coarsen_nb.lower.lir import Assign, AugAssign, BinOp, Call, For, If, Index, Lit, Name, Return
from coarsen_nb.lower.numba_threads import THREADED_FROM, threadable
from coarsen_nb.numba_loader import NumbaFallbackWarning

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)

i, acc, x, out = Name("i"), Name("acc"), Name("x"), Name("out")
xi = Index(x, (Call(Name("int"), (i,)),))


def _loop(*body):
    return For(i, Call(Name("range"), (Lit("0"), Name("n"))), tuple(body))


def test_sums_products_and_own_elements_are_threadable():
    assert threadable(_loop(Assign(Name("t"), BinOp("*", xi, xi)), AugAssign(acc, "+", Name("t"))), {"acc"})
    assert threadable(_loop(AugAssign(acc, "*", xi)), {"acc"})
    assert threadable(_loop(Assign(Index(out, (i,)), BinOp("+", xi, Lit("1.0")))), set())
    assert threadable(_loop(AugAssign(Index(Name("b_x"), (Call(Name("int"), (i,)),)), "+", xi)), set())
    assert threadable(_loop(If(lir.Compare(">", xi, Lit("0")), (Assign(Name("t"), xi),),
                               (Assign(Name("t"), Lit("0.0")),)), AugAssign(acc, "+", Name("t"))), {"acc"})


def test_what_two_threads_could_both_touch_is_not():
    # NumPy's NaN-propagating maximum: a read and a write of the accumulator, no reduction Numba splits
    assert not threadable(_loop(If(lir.Compare(">", xi, acc), (Assign(acc, xi),))), {"acc"})
    # a scatter to the next element: iterations i and i + 1 both add to b_x[i + 1]
    assert not threadable(_loop(AugAssign(Index(Name("b_x"), (BinOp("+", i, Lit("1")),)), "+", xi)), set())
    # a sum under an if
    assert not threadable(_loop(If(lir.Compare(">", xi, Lit("0")), (AugAssign(acc, "+", xi),))), {"acc"})
    # a subtraction into the accumulator is not a sum Numba knows
    assert not threadable(_loop(AugAssign(acc, "-", xi)), {"acc"})
    # a name the iterations assign, read after the loop: whose value would it be?
    assert not threadable(_loop(Assign(Name("last"), xi)), set(), after=(Return(Name("last")),))
    assert threadable(_loop(Assign(Name("last"), xi)), set(), after=(Return(Name("acc")),))
    # a loop inside, a break
    assert not threadable(_loop(_loop(AugAssign(acc, "+", xi))), {"acc"})
    assert not threadable(_loop(lir.Break()), set())


def _grads(f, args):
    g = f.grad(*args)
    return g if isinstance(g, tuple) else (g,)


THREADED_KERNELS = ["black_scholes", "rosenbrock", "conv1d"]


@pytest.mark.parametrize("size", [1000, THREADED_FROM + 7])     # (a loop runs on threads from THREADED_FROM on)
@pytest.mark.parametrize("name", THREADED_KERNELS)
def test_kernels_on_threads_equal_numpy(name, size):
    m = KERNELS[name]
    args = m.make_inputs(size)
    wrt = tuple(m.META["wrt"])
    ref = cn.coarsen(getattr(m, name), wrt=wrt, backend="numpy")
    f = cn.coarsen(getattr(m, name), wrt=wrt, backend="numba", parallel=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumbaFallbackWarning)
        assert_close(np.asarray(f(*args)), np.asarray(ref(*args)), rtol=1e-12, atol=1e-12, what=f"{name} value")
        for g, r in zip(_grads(f, args), _grads(ref, args), strict=True):
            assert_close(np.asarray(g), np.asarray(r), rtol=1e-12, atol=1e-12, what=f"{name} gradient")
    assert "Options: backend=numba, parallel=True," in f.source
    assert f.parallel and "parallel" in repr(f)


def test_the_threaded_kernels_have_threaded_loops_and_keep_the_rest():
    """black_scholes's elementwise map and sums run on threads; rosenbrock's adjoint adds into x[i] and
    x[i + 1] (two iterations share an element), so that loop stays a plain range."""
    m = KERNELS["rosenbrock"]
    f = cn.coarsen(m.rosenbrock, wrt=("x",), backend="numba", parallel=True)
    f.grad(*m.make_inputs(100))
    forward = f.source[re.search(r"def _soi\d+_fwd_reduce", f.source).start():]
    adjoint = f.source[re.search(r"def _soi\d+_vjp_scatter", f.source).start():]
    assert "numba.prange(" in forward.split("\n\n\n")[0]
    assert f"if n_x_shifted >= {THREADED_FROM}:" in forward.split("\n\n\n")[0]     # (a short loop: one thread)
    assert "numba.prange(" not in adjoint.split("\n\n\n")[0]
    plain = cn.coarsen(m.rosenbrock, wrt=("x",), backend="numba")
    plain.grad(*m.make_inputs(100))
    assert "prange" not in plain.source and "parallel=True" not in plain.source


SUM_MAX = '''
def sum_and_max(x, a):
    s = 0.0
    m = -1e300
    for i in range(len(x)):
        s += a * x[i] * x[i]
        if x[i] > m:
            m = x[i]
    return s + m
'''


@settings(max_examples=15, deadline=None)
@given(st.sampled_from([1, 2, 17, 5000, THREADED_FROM - 1, THREADED_FROM, 3 * THREADED_FROM + 5]),
       st.floats(-3, 3), st.integers(0, 2**31))
def test_a_threaded_sum_beside_a_sequential_maximum_equals_the_plain_loop(n, a, seed):
    x = np.random.default_rng(seed).normal(size=n)
    f = cn.coarsen(SUM_MAX, backend="numba", parallel=True)
    space = {}
    exec(SUM_MAX, space)                    # noqa: S102 (the test's own program)
    assert_close(np.asarray(f(x, a)), np.asarray(space["sum_and_max"](x, a)), rtol=1e-12, atol=1e-12, what="value")
    assert_close(np.asarray(f.grad(x, a)[1]), np.asarray(np.sum(x * x)), rtol=1e-12, atol=1e-12, what="d/da")


def test_parallel_is_an_option_of_the_numba_backend_only():
    with pytest.raises(CoarsenError, match="parallel=True needs the numba backend"):
        cn.coarsen(SUM_MAX, backend="numpy", parallel=True)
    with pytest.raises(CoarsenError, match="parallel must be True or False"):
        cn.coarsen(SUM_MAX, backend="numba", parallel="yes")
    f = cn.coarsen(SUM_MAX, backend="numba", parallel=True)
    assert f.retune(max_soi=4).parallel
