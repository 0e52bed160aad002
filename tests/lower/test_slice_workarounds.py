"""Two bugs of the later stages that the slice desugaring works around (frontend/slices.py), written as
the loop code a user could write; strict xfails, so a fix shows up here and the workarounds can go.

1. An array written element by element, then used by array code in the same segment, is taken for a
   scalar: ``math.sin`` of the array (forward), an adjoint summed to a scalar (gradient).  The slice
   loops hand their array on through ``np.copy``, which ends the segment.
2. An integer ``(n + 2) // 3`` is lifted to SymPy's exact ``floor(n/3 + 2/3)`` and printed with float
   coefficients, one ulp short of the integer: ``floor(2.9999999999999996) == 2`` for n = 7.  The
   slice length is computed as a float floor division, then ``int``."""

from __future__ import annotations

import numpy as np
import pytest

import coarsen_nb as cn


@pytest.mark.xfail(strict=True, reason="an element-written array used in the same segment is taken for a scalar")
def test_written_array_used_by_array_code_in_its_segment():
    src = ("def f(x):\n    u = np.zeros(len(x))\n    for k in range(len(x)):\n        u[k] = x[k] * 2.0\n"
           "    return np.sum(np.sin(u) + x)\n")
    x = np.linspace(-1.0, 1.0, 7)
    assert np.isclose(cn.coarsen(src)(x), np.sum(np.sin(2.0 * x) + x))


@pytest.mark.xfail(strict=True, reason="the gradient through a written array read in the same segment")
def test_gradient_of_two_gathers_in_one_segment():
    src = ("def f(x):\n    m = len(x) - 1\n    t = np.zeros(m)\n    for k in range(m):\n        t[k] = x[1 + k]\n"
           "    u = np.zeros(m)\n    for k2 in range(m):\n        u[k2] = x[k2]\n"
           "    d = t - u\n    return np.sum(d * d)\n")
    x = np.linspace(-1.0, 1.0, 7) ** 2
    want = np.zeros(7)
    d = x[1:] - x[:-1]
    want[1:] += 2 * d
    want[:-1] -= 2 * d
    assert np.allclose(cn.coarsen(src).grad(x), want)


@pytest.mark.xfail(strict=True, reason="integer floor division printed with float coefficients")
def test_integer_floor_division_of_a_length():
    src = ("def f(x):\n    m = (len(x) + 2) // 3\n    t = np.zeros(m)\n"
           "    for k in range(m):\n        t[k] = x[3 * k]\n    return np.sum(t)\n")
    x = np.arange(7.0)
    assert cn.coarsen(src)(x) == np.sum(x[::3])
