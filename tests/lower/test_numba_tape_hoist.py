"""An inner loop's tape allocated once before the loops around it (``lower/numba_tape_hoist.py``).

Each program's numba gradient is compared with the NumPy backend's and with central differences
(as ``test_numba_tape``); the structural tests read where the inner tape's allocation is printed: before
the outer reverse loop where its capacity reads nothing the outer loop binds, inside it where it does.
The inner loops run a different number of steps in different outer iterations (a ``break`` on data), so a
shared array holds a longer run's entries past the current run's end: the gradient shows none is read.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from numba_gradient_checks import numba_grad_source

from coarsen_nb.lower import lir
from coarsen_nb.lower.numba_tape_hoist import hoisted

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


def nested(a, m, n):
    """An inner loop inside an outer one, both with scalar state: the inner capacity is ``n`` every time."""
    x = a
    for i in range(m):  # noqa: B007
        y = x
        for j in range(n):  # noqa: B007
            y = math.sin(y) * 0.9 + a * 0.05
        x = x * 0.5 + y
    return x


def triangular(a, m):
    """The inner loop's bound is the outer counter: its capacity differs per iteration, so it stays inside."""
    x = a
    for i in range(m):
        y = x
        for j in range(i):  # noqa: B007
            y = math.sin(y) * 0.9 + a * 0.05
        x = x * 0.5 + y
    return x


def stopped_early(a, m, n):
    """The inner loop stops when its state passes 2: runs of different lengths share the hoisted tape."""
    x = a
    for i in range(m):  # noqa: B007
        y = x
        for j in range(n):  # noqa: B007
            y = y * 1.2 + math.exp(-y) * 0.1
            if y > 2.0:
                break
        x = x * 0.3 + y * 0.4
    return x


def knocked_out(s0, sigma, z, level):
    """barrier_option's shape: paths of steps, a sticky flag, the payoff of the paths that survive."""
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


def _before_the_outer_reverse_loop(g: str) -> str:
    """The grad's text before its first reverse loop (``for k in range(``)."""
    return g[:g.index("for k in range(")]


@pytest.mark.parametrize("m,n", [(0, 5), (1, 0), (3, 1), (4, 30)])
def test_an_inner_tape_is_allocated_once(m, n):
    g = numba_grad_source(nested, ("a",), (0.3, m, n))
    inner = re.findall(r"(_tape_\w+_s_y) = xp\.empty\(max\(0, n - ", g)
    assert len(inner) == 1 and inner[0] + " = xp.empty" in _before_the_outer_reverse_loop(g), g


@pytest.mark.parametrize("m", [0, 1, 2, 7])
def test_a_capacity_the_outer_loop_binds_stays_inside(m):
    g = numba_grad_source(triangular, ("a",), (0.3, m))
    inner = re.search(r"(_tape_\w+_s_y) = xp\.empty\(max\(0, i - ", g)
    assert inner and inner.group(1) + " = xp.empty" not in _before_the_outer_reverse_loop(g), g


@pytest.mark.parametrize("a,m,n", [(0.2, 5, 40), (1.9, 3, 40), (0.5, 6, 1), (0.05, 4, 3)])
def test_runs_of_different_lengths_share_the_tape(a, m, n):
    g = numba_grad_source(stopped_early, ("a",), (a, m, n))
    assert re.search(r"_tape_\w+ = xp\.empty\(", _before_the_outer_reverse_loop(g)), g


@pytest.mark.parametrize("paths,seed", [(1, 0), (7, 1), (40, 2)])
def test_paths_of_steps(paths, seed):
    z = np.random.default_rng(seed).standard_normal((paths, 12))
    g = numba_grad_source(knocked_out, ("s0", "sigma"), (1.0, 0.3, z, 1.6), fd_rtol=1e-4)
    assert re.search(r"_tape_\w+_float64 = xp\.empty\(\(2, ", _before_the_outer_reverse_loop(g)), g


def _alloc(name: str, size: str = "n") -> lir.Assign:
    return lir.Assign(lir.Name(name), lir.Call(lir.Attr(lir.Name("xp"), "empty"), (lir.Name(size),)))


def test_what_stays_in_the_loop():
    """An allocation in a branch, one bound twice in the loop, and a name that is not a tape's stay where
    they are; a row of a hoisted block moves with it, one of a block that stays does not."""
    block = _alloc("_tape_a_float64")
    row = lir.Assign(lir.Name("_tape_a_s_x"), lir.Index(lir.Name("_tape_a_float64"), (lir.Lit("0"),)))
    in_branch = lir.If(lir.Name("c"), (_alloc("_tape_b_s_y"),))
    twice = _alloc("_tape_c_s_z")
    other = _alloc("scratch")
    body = (block, row, in_branch, twice, other, _alloc("_tape_c_s_z"))
    out = hoisted((lir.For(lir.Name("k"), lir.Name("r"), body),))
    assert out[:2] == (block, row)
    assert out[2] == lir.For(lir.Name("k"), lir.Name("r"), (in_branch, twice, other, _alloc("_tape_c_s_z")))
    bound = (lir.Assign(lir.Name("n"), lir.Name("k")), _alloc("_tape_d_s_w"))
    assert hoisted((lir.For(lir.Name("k"), lir.Name("r"), bound),)) == (lir.For(lir.Name("k"), lir.Name("r"), bound),)
    by_counter = (_alloc("_tape_e_s_v", size="k"),)
    assert hoisted((lir.For(lir.Name("k"), lir.Name("r"), by_counter),))[0].body == by_counter
