"""Regression tests for iterated loops, their state and what is hoisted out of them; each is named after
what broke, and each runs under the three selections (the default, L = 1 and per-block) with fallback
warnings turned into errors: a fix that only works by falling back to a finer selection is not a fix."""

from __future__ import annotations

import inspect
import math
import re
import warnings

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn

SELECTIONS = [pytest.param({}, id="default"), pytest.param({"max_soi": 1}, id="L=1"),
              pytest.param({"per_block": True}, id="per-block")]


def _check(fn, args, selection, wrt_indices=None):
    """Value against Python, gradient against central differences, JVP against the gradient."""
    wrt_indices = tuple(range(len(args)) if wrt_indices is None else wrt_indices)
    names = inspect.signature(fn).parameters
    f = cn.coarsen(fn, wrt=tuple(list(names)[k] for k in wrt_indices), **selection)
    diff_args = [args[k] for k in wrt_indices]
    tangents = tuple(np.ones_like(a) if isinstance(a, np.ndarray) else 1.0 for a in diff_args)
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # no fallback to a finer selection
        value = f(*args)
        grads = f.grad(*args)
        _, jvp = f.jvp(args, tangents)
    assert math.isclose(value, fn(*args), rel_tol=1e-13, abs_tol=1e-15)
    grads = grads if isinstance(grads, tuple) else (grads,)
    for k, g in zip(wrt_indices, grads, strict=True):
        assert_close(g, finite_difference(fn, args, k), rtol=1e-5, atol=1e-6, what=f"d/d arg {k}")
    directional = sum(float(np.sum(g * t)) for g, t in zip(grads, tangents, strict=True))
    assert math.isclose(jvp, directional, rel_tol=1e-12, abs_tol=1e-12)
    return f


# -- item 4 of issue 12: a while loop carrying one float ------------------------------------------


def newton_sqrt(a, x0, tol):
    x = x0
    while abs(x * x - a) > tol:
        x = 0.5 * (x + a / x)
    return x


def grow_until(a):
    while a < 10000:
        a = a * 1.1
    return a


@pytest.mark.parametrize("selection", SELECTIONS)
def test_a_while_loop_carrying_one_float_runs(selection):
    """The generated ``x_2, = x_1`` unpacked a float (TypeError on the first call): a state of one μ
    was printed as a one-tuple on the left only."""
    f = _check(newton_sqrt, (2.0, 1.0, 1e-10), selection, wrt_indices=(0, 1))
    assert not re.search(r"^ *\w+, = (?!_tape_)\w+$", f.source, re.M)     # no one-tuple unpacking of a value
    _check(newton_sqrt, (9.0, 4.0, 1e-12), selection, wrt_indices=(0, 1))


@pytest.mark.parametrize("selection", SELECTIONS)
def test_a_while_loop_with_one_float_state_and_many_iterations(selection):
    """Issue 19's ``while a < 10000: a = a * 1.1`` (97 iterations) failed the same way."""
    _check(grow_until, (1.0,), selection)
    _check(grow_until, (20000.0,), selection)        # no iteration at all


# -- item 6 of issue 12: a loop whose only state is its counter ----------------------------------


def first_after_continue(x):
    for i in range(1, len(x)):
        if x[i] > 0.65:
            continue
    return x[0]


def counter_only(a, n):
    for _ in range(n):
        pass
    return a * a


@pytest.mark.parametrize("selection", SELECTIONS)
def test_a_loop_whose_body_is_only_continue(selection):
    """The loop carries only its counter: ``k1_2, = k1_1`` unpacked an int (TypeError) under L = 1
    and per-block."""
    for x in (np.array([0.1, 0.7, 0.3]), np.array([0.9]), np.array([0.2, 0.8, 0.9, 0.1])):
        _check(first_after_continue, (x,), selection)


@pytest.mark.parametrize("selection", SELECTIONS)
def test_a_loop_that_carries_nothing_but_its_counter(selection):
    for n in (0, 1, 4):
        _check(counter_only, (1.5, n), selection, wrt_indices=(0,))
