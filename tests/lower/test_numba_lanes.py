"""``backend="numba"`` runs a loop nest over independent paths as the user's nest, not as lanes of arrays.

Under NumPy, an outer loop over independent paths around an inner loop that stays iterated runs its paths as
lanes of arrays, one array operation per inner step (``phi/batching.py``).  Numba compiles iterated loops, so
there the nest is best run as written: each path's steps on numbers, its tape a few numbers
(``Backend.lanes``), and an inner loop lifted as a scan (asian_option) one compiled scan per path.
Each program here is checked three ways: numba's value and gradient against the NumPy backend's (which runs
the other schedule, the lanes) to 1e-10, NumPy's gradient against central differences of the plain function,
and which schedule each backend's plan has.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from lane_programs import damped_particles
from numba_pairs import BackendPairs

from coarsen_nb.kernels.asian_option import asian_option
from coarsen_nb.kernels.barrier_option import barrier_option

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


def barrier_break(z, s0, sigma, level):
    total = 0.0
    for p in range(z.shape[0]):
        s = s0
        for t in range(z.shape[1]):
            s = s * math.exp(sigma * z[p, t] - 0.5 * sigma * sigma)
            if s > level:
                s = 0.0
                break
        total += max(s - s0, 0.0)
    return total / z.shape[0]


def first_passage(z, s0, level):
    total = 0.0
    for p in range(z.shape[0]):
        s = s0
        steps = 0
        while s < level and steps < z.shape[1]:
            s = s * math.exp(0.2 * z[p, steps])
            steps += 1
        total += s * steps
    return total


PAIRS = BackendPairs({
    "barrier_option": (barrier_option, ("s0", "sigma")),
    "barrier_break": (barrier_break, ("s0", "sigma")),
    "damped_particles": (damped_particles, ("x0", "k", "dt")),
    "first_passage": (first_passage, ("s0",)),
    "asian_option": (asian_option, ("s0", "sigma", "strike")),
})


def _args(name, rng, paths, steps):
    z = rng.normal(size=(paths, steps))
    if name == "damped_particles":
        return rng.uniform(-1.0, 1.0, size=paths), float(rng.uniform(0.5, 2.0)), float(rng.uniform(0.05, 0.2))
    if name == "first_passage":
        return z, float(rng.uniform(0.9, 1.1)), float(rng.uniform(1.05, 1.4))
    if name == "asian_option":
        return z, float(rng.uniform(0.8, 1.2)), float(rng.uniform(0.1, 0.3)), float(rng.uniform(0.5, 0.8))
    return z, float(rng.uniform(0.8, 1.2)), float(rng.uniform(0.1, 0.3)), float(rng.uniform(1.02, 1.3))


# (asian_option with 4 paths of 0 steps: a scan's loop function runs NumPy's error model, and its mean over no
# steps was nan; the division is checked as Python's, lower/division_checks.py)
_CASES = [(name, paths, steps) for name in PAIRS.programs
          for paths, steps in [(1, 1), (3, 5), (7, 2), (40, 30), (0, 4), (4, 0)]]


@pytest.mark.parametrize("name, paths, steps", _CASES)
def test_numba_equals_the_lanes_of_numpy(name, paths, steps):
    rng = np.random.default_rng(paths * 100 + steps)
    args = _args(name, rng, paths, steps)
    try:
        PAIRS.programs[name][0](*args)
    except ZeroDivisionError:
        # a mean over no paths (or steps): numba's nest raises Python's error where the plain loop does
        with pytest.raises(ZeroDivisionError):
            PAIRS.pair(name)[2](*args)
        return
    if paths <= 7:
        PAIRS.check_with_differences(name, args)
    else:
        PAIRS.check(name, args)


@pytest.mark.parametrize("name", list(PAIRS.programs))
def test_the_schedule_of_each_backend(name):
    """NumPy runs each of these as lanes, numba as the user's loop nest."""
    _, by_numpy, by_numba = PAIRS.pair(name)
    args = _args(name, np.random.default_rng(0), 3, 4)
    by_numpy(*args)
    by_numba(*args)
    assert "lanes(" in str(by_numpy.plan)
    assert "lanes(" not in str(by_numba.plan)
