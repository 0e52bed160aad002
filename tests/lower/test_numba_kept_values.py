"""Kept values on the numba tape of an iterated loop (``lower/numba_tape.py``, ``KeptValue``): a costly
function a step computes (``exp``, ``sin``, a square root, ...) is stored going forward, and the reverse
sweep's replay reads it instead of calling the function again.

Every gradient is compared with the NumPy backend's (which keeps no values: its tape is a list of
states) to 1e-12, every value with the plain Python function, the smooth ones with central differences
too; the paths and branches of the Monte Carlo loop are drawn by hypothesis.  The structural tests read
the generated gradient: how many calls of the function it makes, and that a value nothing reads again
has no array.
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import coarsen_nb as cn

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


# -- the programs: each as a user writes it ---------------------------------------------------------


def barrier(z, s0, sigma, level):
    """barrier_option's loops: a path's step multiplies by an exp its adjoint reads too; the knock-out is
    a branch of the body."""
    total = 0.0
    for p in range(z.shape[0]):
        s = s0
        alive = 1.0
        for t in range(z.shape[1]):
            s = s * math.exp(sigma * z[p, t] - 0.5 * sigma * sigma)
            if s > level:
                alive = 0.0
        total += alive * max(s - s0, 0.0)
    return total / z.shape[0]


def log_step(a, n):
    """A log whose derivative does not read it (1/u): nothing to keep."""
    x = a
    for i in range(n):  # noqa: B007
        x = 0.5 * x + math.log(x + a + 1.0)
    return x


def trig_step(a, n):
    """sin(x)·cos(a·x): the adjoint reads both products' factors again."""
    x = a
    for i in range(n):  # noqa: B007
        x = math.sin(x) * math.cos(a * x) + a
    return x


def root_step(a, n):
    """A square root (a power 1/2) the adjoint divides by."""
    x = a
    for i in range(n):  # noqa: B007
        x = (x * x * 0.5 + a) ** 0.5
    return x


def branch_step(a, x0, n):
    """The exp is computed in one arm of the step only: not every iteration has it to keep."""
    x = x0
    for i in range(n):  # noqa: B007
        x = math.exp(-x * a) if x > 0.5 else x * a + 0.3
    return x


def _central(fn, args, i, eps=1e-6):
    h = eps * max(1.0, abs(args[i]))
    up, down = list(args), list(args)
    up[i] += h
    down[i] -= h
    return (fn(*up) - fn(*down)) / (2 * h)


def _check(fn, wrt, args, fd=True):
    """The numba gradient equals NumPy's, the value the plain function's; returns the numba function."""
    ref = cn.coarsen(fn, wrt=wrt)
    f = cn.coarsen(fn, wrt=wrt, backend="numba")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = np.atleast_1d(np.asarray(f.grad(*args), dtype=float))
        value = f(*args)
    want = np.atleast_1d(np.asarray(ref.grad(*args), dtype=float))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    assert value == pytest.approx(fn(*args), rel=1e-12, abs=1e-14)
    if fd:
        params = list(ref.params)
        np.testing.assert_allclose(got, [_central(fn, args, params.index(w)) for w in wrt], rtol=1e-5, atol=1e-7)
    return f


def _grad_source(f, name):
    src = f.source
    start = src.index(f"def {name}_grad(")
    ends = [e for e in (src.find("\n@", start), src.find("\ndef ", start + 1)) if e > 0]
    return src[start:min(ends) if ends else None]


def _kept_loads(g, states):
    """The names the reverse sweep loads from a kept value's array (``t6_2 = _tape_line38_s_t6[k2]``): an
    array stored going forward (in the step, or ahead of the loop: ``numba_tape_ahead``) that is not one of
    the loop's ``states``'."""
    stores = set(re.findall(r"(_tape_\w+_s_(\w+))\[_tape_\w+_len\] = \2\n", g))
    stores |= set(re.findall(r"(_tape_\w+_s_(\w+))\[j\w*\] = _exp\(", g))
    loads = re.findall(r"(\w+) = (_tape_\w+_s_\w+)\[k\d*\]", g)
    return [(v, a) for v, a in loads if any(a == arr and word not in states for arr, word in stores)]


# -- gradients ---------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(z=arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(0, 8)), elements=st.floats(-2.5, 2.5)),
       sigma=st.floats(0.05, 0.6), level=st.floats(1.0, 2.0))
def test_barrier_paths_and_knock_outs(z, sigma, level):
    _check(barrier, ("s0", "sigma"), (z, 1.0, sigma, level), fd=False)     # (kinks: no differences)


def test_barrier_calls_exp_once_a_step():
    """The exp is the forward sweep's, stored (computed ahead of the step loop, ``numba_tape_ahead``: a
    ``_exp``); the reverse sweep loads it (the NumPy module calls it in the replay again)."""
    z = np.random.default_rng(3).standard_normal((20, 30))
    f = _check(barrier, ("s0", "sigma"), (z, 1.0, 0.2, 1.6), fd=False)
    g = _grad_source(f, "barrier")
    assert g.count("exp(") == 1 and g.count("_exp(") == 1, g
    assert len(_kept_loads(g, ("s", "alive"))) == 1, g
    ref = cn.coarsen(barrier, wrt=("s0", "sigma"))
    ref.grad(z, 1.0, 0.2, 1.6)
    assert _grad_source(ref, "barrier").count("exp(") == 2       # its replay calls it again


@pytest.mark.parametrize("n", [0, 1, 2, 60])
def test_a_log_the_adjoint_does_not_read_is_not_kept(n):
    f = _check(log_step, ("a",), (0.7, n))
    g = _grad_source(f, "log_step")
    assert _kept_loads(g, ("x",)) == [] and "log(" not in g.split("for k")[1], g


@pytest.mark.parametrize("n", [0, 1, 3, 80])
def test_sin_and_cos_kept(n):
    f = _check(trig_step, ("a",), (0.4, n))
    g = _grad_source(f, "trig_step")
    if n:
        assert len(_kept_loads(g, ("x",))) == 2, g
        assert g.count("math.sin(") + g.count("math.cos(") == 4, g     # 2 forward, 2 more in the adjoint


@pytest.mark.parametrize("n", [0, 1, 50])
def test_a_square_root_kept(n):
    f = _check(root_step, ("a",), (0.9, n))
    g = _grad_source(f, "root_step")
    assert len(_kept_loads(g, ("x",))) == 1 and "**" not in g.split("for k")[1], g


@settings(max_examples=25, deadline=None)
@given(a=st.floats(0.2, 2.0), x0=st.floats(-1.0, 2.0), n=st.integers(0, 12))
def test_an_exp_in_one_arm(a, x0, n):
    fn = cn.coarsen(branch_step, wrt=("a", "x0"), backend="numba")
    _check(branch_step, ("a", "x0"), (a, x0, n), fd=False)      # (the arms meet at a kink)
    fn.grad(a, x0, n)
    assert _kept_loads(_grad_source(fn, "branch_step"), ("x",)) == []
