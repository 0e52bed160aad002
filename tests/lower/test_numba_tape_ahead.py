"""A counted loop's kept exponentials of its data computed ahead, in a loop of ``_exp`` (``lower/numba_tape_ahead.py``).

Each program's numba gradient is compared with the NumPy backend's and with central differences; the structural
tests read the gradient's source: where the loop's condition is its counter alone and the exponential reads
the step's data, a loop ahead of it stores ``_exp`` of every step and the step loads it; where the loop may stop
early (a ``break``), or the exponential reads a state or an array the loop writes, the step calls ``math.exp``.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from numba_gradient_checks import numba_grad_source

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


def knocked_out(s0, sigma, z, level):
    """barrier_option's shape: the step's exponential reads the path's shock and sigma alone."""
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


def from_an_offset(a, x, lo):
    """A counter from ``lo``: the loop ahead's step j is the counter ``lo + j``."""
    s = 1.0
    for i in range(lo, x.shape[0]):
        s = s * math.exp(a * x[i]) * 0.9 + math.sin(s) * 0.1
    return s


def stopped_early(a, x):
    """A ``break`` on the state: the steps that run are not known before the loop."""
    s = 1.0
    for i in range(x.shape[0]):
        s = s * math.exp(a * x[i])
        if s > 3.0:
            break
    return s


def of_the_state(a, n):
    """The exponential reads the state: nothing to compute ahead."""
    y = a
    for i in range(n):  # noqa: B007
        y = y * 1.1 + math.exp(-y) * 0.2
    return y


def of_a_written_array(a, x):
    """The exponential reads an element the loop wrote the step before: nothing to compute ahead."""
    x = x.copy()
    s = 0.0
    for i in range(1, x.shape[0]):
        x[i] = x[i - 1] * 0.5 + a
        s = s * 0.7 + math.exp(a * x[i - 1])
    return s + x[-1]


_AHEAD = re.compile(r"for j\w* in range\(max\(0, [^\n]*\n(?: +[^\n]*\n)*? +(_tape_\w+)\[j\w*\] = _exp\(")


@pytest.mark.parametrize("paths,steps,seed", [(1, 1, 0), (7, 12, 1), (40, 50, 2), (3, 0, 3)])
def test_a_path_s_exponentials_are_computed_ahead(paths, steps, seed):
    z = np.random.default_rng(seed).standard_normal((paths, steps))
    g = numba_grad_source(knocked_out, ("s0", "sigma"), (1.0, 0.3, z, 1.6), fd_rtol=1e-4)
    ahead = _AHEAD.search(g)
    assert ahead, g
    # the step loads what the loop ahead stored, and calls no math.exp of its own
    assert re.search(rf"= {ahead.group(1)}\[_tape_\w+_len\]\n", g), g
    assert "math.exp(" not in g[g.index("while True"):], g


@pytest.mark.parametrize("lo,n", [(0, 9), (3, 9), (8, 9), (9, 9), (12, 9)])
def test_a_counter_from_an_offset(lo, n):
    x = np.linspace(-0.5, 0.7, n)
    g = numba_grad_source(from_an_offset, ("a",), (0.4, x, lo))
    assert _AHEAD.search(g), g


@pytest.mark.parametrize("a", [0.05, 0.6])
def test_a_loop_that_may_stop_early_calls_exp_in_the_step(a):
    x = np.linspace(0.5, 2.0, 30)
    g = numba_grad_source(stopped_early, ("a",), (a, x))
    assert "_exp(" not in g and "math.exp(" in g, g


def test_an_exponential_of_the_state_is_not_computed_ahead():
    g = numba_grad_source(of_the_state, ("a",), (0.2, 25))
    assert "_exp(" not in g and "math.exp(" in g, g


def test_an_exponential_of_a_written_array_is_not_computed_ahead():
    g = numba_grad_source(of_a_written_array, ("a",), (0.3, np.linspace(0.0, 1.0, 12)))
    assert "_exp(" not in g, g
