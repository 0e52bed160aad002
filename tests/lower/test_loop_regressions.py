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


# -- item 7 of issue 12: work moved out of a loop that runs zero times -----------------------------


def sqrt_in_a_loop(a, n):
    s = a
    for _ in range(n):
        s = s + math.sqrt(a - 2.0)
    return s


def invariant_let_in_a_loop(a, n):
    s = a
    for _ in range(n):
        r = math.sqrt(a - 2.0)          # a Let of invariants only: loop-invariant code motion moved it
        s = math.sin(s) + r
    return s


def divide_over_an_array(a, x):
    s = a
    for v in x:
        s = s + v / (a - 1.0)
    return s


def divide_in_a_counted_loop(a, x):
    s = a
    for _ in x:
        s = s + 1.0 / (a - 1.0)
    return s


def sum_inside_an_iterated_loop(a, x):
    w = a
    for _ in range(3):
        g = 0.0
        for j in range(len(x)):
            g = g + x[j] * w * math.sqrt(a - 2.0)
        w = math.sin(w) + g
    return w


@pytest.mark.parametrize("selection", SELECTIONS)
@pytest.mark.parametrize("fn", [sqrt_in_a_loop, invariant_let_in_a_loop], ids=lambda f: f.__name__)
def test_code_hoisted_out_of_a_loop_that_runs_zero_times_is_not_evaluated(fn, selection):
    """``math.sqrt(a - 2.0)`` in the body of a loop that runs zero times raised ValueError (math domain
    error) at a = 1, where Python returns a: the closed form computed it once outside its Σ, and
    loop-invariant code motion moved the assignment before the loop."""
    _check(fn, (1.0, 0), selection, wrt_indices=(0,))
    _check(fn, (3.0, 0), selection, wrt_indices=(0,))
    _check(fn, (3.0, 4), selection, wrt_indices=(0,))


@pytest.mark.parametrize("selection", SELECTIONS)
@pytest.mark.parametrize("fn", [divide_over_an_array, divide_in_a_counted_loop], ids=lambda f: f.__name__)
def test_a_division_in_a_loop_over_an_empty_array_is_not_evaluated(fn, selection):
    """``1.0 / (a - 1.0)`` in a loop over an empty array raised ZeroDivisionError at a = 1."""
    _check(fn, (1.0, np.zeros(0)), selection)
    _check(fn, (3.0, np.array([0.5, -1.5, 2.0])), selection)


@pytest.mark.parametrize("selection", SELECTIONS)
def test_a_sum_over_an_empty_array_inside_an_iterated_loop_is_not_evaluated(selection):
    """The inner Σ_j x[j]·w·sqrt(a - 2) over an empty x evaluated sqrt(a - 2) at a = 1."""
    _check(sum_inside_an_iterated_loop, (1.0, np.zeros(0)), selection)
    _check(sum_inside_an_iterated_loop, (3.0, np.array([0.25, -0.5])), selection)


def descend(a, x, steps):
    w = a
    k = 0
    while k < steps:
        g = 0.0
        for j in range(len(x)):
            g = g + x[j] * w * math.sqrt(a - 2.0)
        w = w - 0.1 * g
        k = k + 1
    return w


@pytest.mark.parametrize("selection", SELECTIONS)
def test_a_sum_hoisted_before_a_while_loop_that_runs_zero_times_is_not_evaluated(selection):
    """Σ_j x[j]·sqrt(a - 2), an invariant sum of the descent, was computed once before the while loop
    (``HoistContext``), so zero steps at a = 1 raised math domain error."""
    _check(descend, (1.0, np.array([0.5, 1.5]), 0), selection, wrt_indices=(0, 1))
    _check(descend, (3.0, np.array([0.5, 1.5]), 3), selection, wrt_indices=(0, 1))


def test_a_closed_form_still_holds_when_its_loop_has_a_guarded_divisor():
    """The γ that guards a divisor keeps the loop a closed form (no iterated loop appears)."""
    f = _check(divide_over_an_array, (3.0, np.array([0.5, -1.5, 2.0])), {})
    assert "iteration by iteration" not in f.source


def sqrt_in_a_nest(a, n, m):
    s = a
    for i in range(n):
        for _ in range(m):
            s = s + math.sqrt(a - 2.0) * i
    return s


def divide_in_a_triangle(a, x):
    s = a
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            s = s + x[j] / (a - 1.0)
    return s


def divide_counting_down(a, n):
    s = a
    for _ in range(n, 0, -1):
        s = s + 1.0 / (a - 1.0)
    return s


def log_of_a_parameter(a, x):
    s = 0.0
    for v in x:
        s = s + v * math.log(a)
    return s


@pytest.mark.parametrize("selection", SELECTIONS)
@pytest.mark.parametrize("fn,args", [
    (sqrt_in_a_nest, (1.0, 3, 0)), (sqrt_in_a_nest, (1.0, 0, 3)), (sqrt_in_a_nest, (3.0, 3, 2)),
    (divide_in_a_triangle, (1.0, np.array([2.0]))), (divide_in_a_triangle, (3.0, np.array([1.0, 2.0, 3.0]))),
    (divide_counting_down, (1.0, 0)), (divide_counting_down, (3.0, 4)),
    (log_of_a_parameter, (-1.0, np.zeros(0))), (log_of_a_parameter, (2.0, np.ones(3))),
], ids=lambda v: getattr(v, "__name__", None) or "")
def test_the_empty_range_guard_in_nests_triangles_and_negative_steps(fn, args, selection):
    """An inner range that is empty (m = 0, or j > i for the last i), a step of -1, and a math.log whose
    argument is invalid only where the loop never runs: Python's value, and the gradient."""
    floats = tuple(k for k, a in enumerate(args) if not isinstance(a, int))
    _check(fn, args, selection, wrt_indices=floats)
