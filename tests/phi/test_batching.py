"""Loop interchange of independent outer iterations (phi/batching.py): a loop nest whose outer iterations
start afresh and leave only a sum runs over all its lanes at once.  Values against the plain function,
gradients against central differences, under every selection; the batched form is used where it applies
(the generated code has no outer iteration-by-iteration loop) and not where it does not (an outer state
carried between iterations).  Per-lane exits (a mask over the lanes) are tests/phi/test_lane_masks.py's."""

from __future__ import annotations

import inspect
import math
import re

import numpy as np
import pytest
from corpus_inputs import entry
from entry_checks import SELECTIONS, check_value_and_gradient
from lane_programs import damped_particles

import coarsen_nb as cn
from coarsen_nb.kernels.asian_option import asian_option
from coarsen_nb.kernels.barrier_option import barrier_option


def _paths(rng):
    return (rng.normal(size=(int(rng.integers(1, 6)), int(rng.integers(1, 6)))), float(rng.uniform(0.8, 1.2)),
            float(rng.uniform(0.1, 0.3)), float(rng.uniform(1.05, 1.4)))


def _asian(rng):
    z, s0, sigma, _ = _paths(rng)
    return z, s0, sigma, float(rng.uniform(0.5, 0.8))


ENTRIES = [
    entry(barrier_option, _paths, "z s0 sigma"),
    entry(asian_option, _asian, "z s0 sigma strike"),
    entry(damped_particles, lambda r: (r.uniform(-1.0, 1.0, size=int(r.integers(1, 7))), float(r.uniform(0.5, 2.0)),
                                       float(r.uniform(0.05, 0.2))), "x0 k dt"),
]
IDS = [e.name for e in ENTRIES]


@pytest.mark.parametrize("selection", list(SELECTIONS))
@pytest.mark.parametrize("e", ENTRIES, ids=IDS)
def test_value_and_gradient(e, selection):
    check_value_and_gradient(e, selection)


@pytest.mark.parametrize("e", ENTRIES, ids=IDS)
def test_outer_loop_runs_over_its_lanes(e):
    """The outer loop is gone: its counter is the array of lanes, and the only loop run iteration by
    iteration is the inner one."""
    f = cn.coarsen(e.fn, wrt=e.wrt)
    f(*e.make_args(np.random.default_rng(0)))
    assert "lanes(" in str(f.plan)
    iterated = {int(re.search(r"line (\d+)", ln).group(1)) for ln in f.source.splitlines()
                if "iteration by iteration" in ln}
    outer = e.fn.__code__.co_firstlineno + next(k for k, ln in enumerate(
        inspect.getsource(e.fn).splitlines()) if ln.lstrip().startswith("for "))
    assert len(iterated) == 1 and outer not in iterated, (iterated, outer)


def carried_between_paths(z, s0):
    s = s0          # the state carries over from one path to the next: not independent
    total = 0.0
    for p in range(z.shape[0]):
        for t in range(z.shape[1]):
            s = s * math.exp(0.1 * z[p, t])
        total += s
    return total


def root_of_average(z, s0, k):
    total = 0.0
    for p in range(z.shape[0]):
        s = s0
        running = 0.0
        for t in range(z.shape[1]):
            s = s * math.exp(0.1 * z[p, t])
            running += s
        total += math.sqrt(running - k)     # Python raises ValueError for a path below k: NumPy would give nan
    return total


def test_a_lane_that_would_raise_keeps_the_loop():
    """An operation Python makes raise and NumPy makes nan (a square root of a lane's value) keeps the
    outer loop, so the compiled function raises Python's error where the plain one does."""
    rng = np.random.default_rng(5)
    z = rng.normal(size=(4, 5))
    f = cn.coarsen(root_of_average)
    assert abs(f(z, 1.0, 0.5) - root_of_average(z, 1.0, 0.5)) < 1e-12
    assert "lanes(" not in str(f.plan)
    with pytest.raises(ValueError):
        root_of_average(z, 1.0, 100.0)
    with pytest.raises(ValueError):
        f(z, 1.0, 100.0)


@pytest.mark.parametrize("fn", [carried_between_paths])
def test_not_batched_where_the_lanes_are_not_independent(fn):
    """Each stays a nest run iteration by iteration, with the same values and gradients as before."""
    rng = np.random.default_rng(3)
    z, s0 = rng.normal(size=(4, 5)), 1.0
    f = cn.coarsen(fn)
    assert abs(f(z, s0) - fn(z, s0)) < 1e-12
    g = f.grad(z, s0)
    eps = 1e-6
    assert abs(g[1] - (fn(z, s0 + eps) - fn(z, s0 - eps)) / (2 * eps)) < 1e-5
    assert "lanes(" not in str(f.plan)


def every_other_path(z, s0, stop):
    total = 0.0
    for p in range(1, stop, 2):
        s = s0
        for t in range(z.shape[1]):
            s = math.sin(s) * math.exp(0.1 * z[p, t]) + 0.01 * z[p, z.shape[1] - 1 - t]
        total += s * s
    return total


@pytest.mark.parametrize("stop", [0, 1, 2, 5, 7, 8])
def test_lane_reads_are_rows_of_the_array(stop):
    """``z[p, t]`` over the lanes ``range(1, stop, 2)`` is the rows ``1::2`` of z (a view, not a gather);
    with ``stop`` past the last row, Python's IndexError as the plain loop raises it."""
    rng = np.random.default_rng(stop)
    z, s0 = rng.normal(size=(6, 4)), 0.8
    f = cn.coarsen(every_other_path, wrt=("z", "s0"))
    if stop > 7:
        with pytest.raises(IndexError):
            every_other_path(z, s0, stop)
        with pytest.raises(IndexError):
            f(z, s0, stop)
        with pytest.raises(IndexError):
            f.grad(z, s0, stop)
        return
    assert math.isclose(f(z, s0, stop), every_other_path(z, s0, stop), rel_tol=1e-13, abs_tol=1e-15)
    gz, gs = f.grad(z, s0, stop)
    eps = 1e-6
    fd = (every_other_path(z, s0 + eps, stop) - every_other_path(z, s0 - eps, stop)) / (2 * eps)
    assert math.isclose(gs, fd, rel_tol=1e-6, abs_tol=1e-8)
    for i, j in [(1, 0), (3, 2), (2, 1), (5, 3)]:
        e = np.zeros_like(z)
        e[i, j] = eps
        fd = (every_other_path(z + e, s0, stop) - every_other_path(z - e, s0, stop)) / (2 * eps)
        assert math.isclose(gz[i, j], fd, rel_tol=1e-6, abs_tol=1e-8), (i, j)
    assert "lanes(" in str(f.plan) and "_take(z, 1, " in f.source
