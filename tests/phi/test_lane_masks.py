"""Batched loop nests whose inner loop exits per lane (phi/lane_masks.py): a ``break`` on a path's value, a
``while`` with a trip count per lane.  Values against the plain function, gradients against central
differences under every selection, and for the knock-out barrier against its hand-written gradient on random
inputs; the outer loop is batched (the generated code runs only the inner loop step by step), and what cannot
be masked keeps its loop and its answers."""

from __future__ import annotations

import inspect
import math
import re

import numpy as np
import pytest
from corpus_inputs import entry
from entry_checks import SELECTIONS, check_value_and_gradient
from gradcheck import finite_difference
from hypothesis import given, settings
from hypothesis import strategies as st

import coarsen_nb as cn
from coarsen_nb.kernels import barrier_option


def barrier_break(z, s0, sigma, level):
    total = 0.0
    for p in range(z.shape[0]):
        s = s0
        alive = 1.0
        for t in range(z.shape[1]):
            s = s * math.exp(sigma * z[p, t] - 0.5 * sigma * sigma)
            if s > level:
                alive = 0.0
                break
        total += alive * max(s - s0, 0.0)
    return total / z.shape[0]


def stopped_at_level(z, s0, level):
    """The break's state leaves the loop: a path's value where it first crossed, with work after the break."""
    total = 0.0
    for p in range(z.shape[0]):
        s = s0
        for t in range(z.shape[1]):
            s = s * math.exp(0.1 * z[p, t])
            if s > level:
                break
            s = s + 0.01 * z[p, t]
        total += s * s
    return total


def first_passage(z, s0, level):
    """A while with a trip count per lane; the counter k runs in lockstep and its exit value is each lane's."""
    total = 0.0
    for p in range(z.shape[0]):
        s = s0
        k = 0
        while s < level and k < z.shape[1]:
            s = s * math.exp(0.2 * z[p, k])
            k += 1
        total += s * k
    return total


def first_passage_from(z, w, level):
    """Each lane starts from its own value: those already past the level run zero steps."""
    total = 0.0
    for p in range(z.shape[0]):
        s = w[p]
        k = 0
        while s < level and k < z.shape[1]:
            s = s * math.exp(0.2 * z[p, k])
            k += 1
        total += s + k
    return total


def fixed_point(a, x0):
    """Iterate to convergence, lane by lane: x = cos(x)/2 + a_p until the step is below a tolerance."""
    total = 0.0
    for p in range(a.shape[0]):
        x = x0
        dx = 1.0
        k = 0
        while abs(dx) > 1e-13 and k < 200:
            y = 0.5 * math.cos(x) + a[p]
            dx = y - x
            x = y
            k += 1
        total += x * x
    return total


def lockstep_index(x, c):
    """The index j runs in lockstep over the lanes: a lane that has left has the same j as one still live,
    so x[p, j] stays in range."""
    total = 0.0
    n = x.shape[1]
    for p in range(x.shape[0]):
        j = 0
        acc = 0.0
        while j < n and acc < c:
            acc = acc + x[p, j]
            j += 1
        total += acc * j
    return total


def nested_while(a, x0, n_outer):
    """A masked loop inside a masked loop: the inner iteration to convergence starts from the outer loop's
    live lanes (a lane that has left never runs it)."""
    total = 0.0
    for p in range(a.shape[0]):
        x = x0
        k = 0
        while k < n_outer and x < 3.0:
            y = x
            dy = 1.0
            while abs(dy) > 1e-12:
                y2 = 0.5 * math.cos(y) + a[p] + 0.1 * x
                dy = y2 - y
                y = y2
            x = x + y
            k += 1
        total += x * k
    return total


def _paths(rng, level=None):
    z = rng.normal(size=(int(rng.integers(1, 9)), int(rng.integers(1, 9))))
    return z, float(rng.uniform(0.8, 1.2)), float(rng.uniform(0.1, 0.4)), \
        float(rng.uniform(1.02, 1.3)) if level is None else level


ENTRIES = [
    entry(barrier_break, _paths, "s0 sigma"),
    entry(barrier_break, lambda r: _paths(r, 0.1), "s0 sigma"),            # every lane leaves at step 0
    entry(barrier_break, lambda r: _paths(r, 1e300), "s0 sigma"),          # no lane leaves early
    entry(stopped_at_level, lambda r: (r.normal(size=(int(r.integers(1, 7)), int(r.integers(1, 9)))),
                                       float(r.uniform(0.9, 1.1)), float(r.uniform(1.05, 1.3))), "s0"),
    entry(first_passage, lambda r: (r.normal(size=(int(r.integers(1, 7)), int(r.integers(0, 9)))),
                                    float(r.uniform(0.9, 1.1)), float(r.uniform(1.05, 1.4))), "s0"),
    entry(first_passage, lambda r: (r.normal(size=(3, 5)), 1.0, 0.5), "s0"),    # the loop runs zero times
    entry(first_passage_from, lambda r: (r.normal(size=(6, 7)), r.uniform(0.8, 1.6, size=6), 1.2), "w"),
    entry(lockstep_index, lambda r: (np.abs(r.normal(size=(int(r.integers(1, 7)), int(r.integers(1, 8))))),
                                     float(r.uniform(0.5, 3.0))), "x"),
    entry(nested_while, lambda r: (r.uniform(-0.5, 0.8, size=int(r.integers(1, 8))), float(r.uniform(0, 0.5)), 5),
          "a x0"),
    entry(fixed_point, lambda r: (r.uniform(-1.0, 1.0, size=int(r.integers(1, 8))), float(r.uniform(-1, 1))), "a x0"),
]
IDS = ["barrier_break", "all_leave_at_once", "none_leave", "stopped_at_level", "first_passage", "zero_trips",
       "zero_trip_lanes", "lockstep_index", "nested_while", "fixed_point"]


@pytest.mark.parametrize("selection", list(SELECTIONS))
@pytest.mark.parametrize("e", ENTRIES, ids=IDS)
def test_value_and_gradient(e, selection):
    check_value_and_gradient(e, selection)


def _iterated_lines(f) -> set[int]:
    return {int(re.search(r"line (\d+)", ln).group(1)) for ln in f.source.splitlines()
            if "iteration by iteration" in ln}


@pytest.mark.parametrize("e", ENTRIES, ids=IDS)
def test_outer_loop_runs_over_its_lanes(e):
    """The outer loop is gone: its counter is the array of lanes, and the only loops run step by step are
    the inner ones, under a mask."""
    f = cn.coarsen(e.fn, wrt=e.wrt)
    f(*e.make_args(np.random.default_rng(0)))
    assert "lanes(" in str(f.plan)
    lines = inspect.getsource(e.fn).splitlines()
    outer = e.fn.__code__.co_firstlineno + next(k for k, ln in enumerate(lines) if ln.lstrip().startswith("for "))
    iterated = _iterated_lines(f)
    assert iterated and outer not in iterated, (iterated, outer)
    # the inner loop runs while a lane is live: its test counts the live mask (by its name, or the mask
    # the SOI computed it as)
    live = re.search(r"^\s*(live\w*) = (\w+)$", f.source, re.M)
    assert re.search(rf"xp\.sum\(({live[1]}|{live[2]})\)" if live else r"xp\.sum\(live", f.source)


_BARRIER = {}


def _barrier():
    """One compiled barrier_break for every example (its signature does not change with the sizes)."""
    if not _BARRIER:
        _BARRIER["f"] = cn.coarsen(barrier_break, wrt=("s0", "sigma"))
    return _BARRIER["f"]


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_paths=st.integers(1, 12), n_steps=st.integers(1, 12),
       level=st.floats(0.5, 2.0), sigma=st.floats(0.05, 0.6), s0=st.floats(0.7, 1.3))
def test_barrier_break_against_its_hand_written_gradient(seed, n_paths, n_steps, level, sigma, s0):
    """The knocked-out paths contribute nothing, as in the sticky-flag barrier: its hand-written gradient
    (kernels/barrier_option.py) is this one's too."""
    z = np.random.default_rng(seed).normal(size=(n_paths, n_steps))
    f = _barrier()
    assert math.isclose(f(z, s0, sigma, level), barrier_break(z, s0, sigma, level), rel_tol=1e-12, abs_tol=1e-14)
    g = f.grad(z, s0, sigma, level)
    np.testing.assert_allclose(g, barrier_option.grad(z, s0, sigma, level), rtol=1e-10, atol=1e-12)


def test_zero_paths_keep_the_zero_division_error():
    """A batched sum is a NumPy float, and ``0.0 / 0`` of it was nan with a warning: the division is the
    module's ``_div`` (lower/division_checks.py), as barrier_option's kernel's."""
    z = np.zeros((0, 5))
    with pytest.raises(ZeroDivisionError):
        barrier_break(z, 1.0, 0.2, 1.2)
    with pytest.raises(ZeroDivisionError):
        _barrier()(z, 1.0, 0.2, 1.2)
    with pytest.raises(ZeroDivisionError):
        barrier_option.barrier_option(z, 1.0, 0.2, 1.2)
    with pytest.raises(ZeroDivisionError):
        cn.coarsen(barrier_option.barrier_option, wrt=("s0", "sigma"))(z, 1.0, 0.2, 1.2)


def lane_index(x, start, c):
    """Each lane's own position j indexes x: a lane that has left (j = n) would read x[p, n] in the masked
    body, which the plain loop never does."""
    total = 0.0
    n = x.shape[1]
    for p in range(x.shape[0]):
        j = start[p]
        acc = 0.0
        while j < n and acc < c:
            acc = acc + x[p, j]
            j += 1
        total += acc
    return total


def root_after_exit(z, s0):
    """A square root of a lane's value: the masked body would run it on lanes that have left (a negative
    frozen value, which Python never passes to it)."""
    total = 0.0
    for p in range(z.shape[0]):
        s = s0 + z[p, 0]
        k = 0
        while s > 1.0 and k < 10:
            s = math.sqrt(s) - 0.5
            k += 1
        total += s
    return total


def test_a_lane_dependent_index_keeps_the_loop():
    rng = np.random.default_rng(4)
    x, start = np.abs(rng.normal(size=(5, 6))), np.array([0, 2, 5, 6, 1])
    f = cn.coarsen(lane_index, wrt=("x",))
    assert abs(f(x, start, 1.5) - lane_index(x, start, 1.5)) < 1e-12
    assert "lanes(" not in str(f.plan)
    np.testing.assert_allclose(f.grad(x, start, 1.5), finite_difference(lane_index, (x, start, 1.5), 0), atol=1e-6)


def test_an_operation_that_raises_keeps_the_loop():
    z = np.random.default_rng(6).normal(size=(4, 2))
    f = cn.coarsen(root_after_exit)
    assert abs(f(z, 2.0) - root_after_exit(z, 2.0)) < 1e-12
    assert "lanes(" not in str(f.plan)


def test_the_tape_holds_one_array_state_per_inner_step():
    """The reverse sweep reads one entry per step of the longest lane, each an array over the lanes."""
    z = np.random.default_rng(7).normal(size=(40, 9))
    f = cn.coarsen(first_passage, wrt=("s0",))
    f(z, 1.0, 1.3)
    src = f.source
    grad = src[src.index("def first_passage_grad("):src.index("def first_passage_jvp(")]
    assert grad.count("_tape_") and "for p in" not in grad
    pushes = [ln for ln in grad.splitlines() if ".append((" in ln]
    assert len(pushes) == 1, pushes


@pytest.mark.parametrize("e", ENTRIES, ids=IDS)
def test_jvp_matches_the_gradient(e):
    """Forward mode runs the same masks: the derivative along a random direction is the gradient's dot
    product with it."""
    rng = np.random.default_rng(8)
    args = e.make_args(rng)
    f = cn.coarsen(e.fn, wrt=e.wrt)
    params = list(inspect.signature(e.fn).parameters)
    grads = f.grad(*args)
    grads = grads if isinstance(grads, tuple) else (grads,)
    direction = tuple(rng.normal(size=np.shape(args[params.index(w)])) if np.ndim(args[params.index(w)])
                      else float(rng.normal()) for w in e.wrt)
    _, t = f.jvp(args, direction)
    expected = sum(float(np.sum(np.asarray(g) * d)) for g, d in zip(grads, direction, strict=True))
    assert math.isclose(t, expected, rel_tol=1e-9, abs_tol=1e-12)


def test_an_overflow_after_a_lane_has_left_does_not_reach_the_gradient():
    """Path 0 is knocked out at step 1; at step 3 its shock would overflow math.exp, a step the plain loop
    never runs for it.  The masked body computes exp(0) there instead: no inf whose adjoint (0 times inf)
    would be a nan."""
    z = np.random.default_rng(9).normal(size=(4, 6)) * 0.1
    z[0, 1], z[0, 3] = 50.0, 1e5
    f = cn.coarsen(barrier_break, wrt=("s0", "sigma"))
    args = (z, 1.0, 0.2, 1.2)
    assert f(*args) == pytest.approx(barrier_break(*args), rel=1e-12, abs=1e-15)
    with np.errstate(over="raise", invalid="raise"):
        g = f.grad(*args)
    with np.errstate(over="ignore"):        # the reference's cumulative sum overflows on path 0 too
        ref = barrier_option.grad(*args)
    np.testing.assert_allclose(g, ref, rtol=1e-10, atol=1e-12)
