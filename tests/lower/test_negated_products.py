"""A product whose difference factor is another's the other way round is printed as that value negated.

The adjoint of ``x[i + 1] - x[i]`` adds ``g`` to one end and ``g`` with the difference turned round to the
other: ``k*(a - b)*d/s`` and ``k*(b - a)*d/s`` are the same numbers but one sign.  The printer computes the
first and writes ``-t`` for the second (``emit.Printer._negation_known``), which halves a spring's divisions
(hookean_spring).  What must hold: the gradients are right (Python's function by central differences, and the
NumPy backend's equal to numba's), and the second product is the first's negation in the module.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import coarsen_nb as cn

SPRINGS = '''
def springs(x, k, rest):
    e = 0.0
    for i in range(len(x) - 1):
        d = x[i + 1] - x[i]
        s = math.sqrt(d * d + 1.0)
        e += k * (s - rest) ** 2
    return e
'''


def _python(x, k, rest):
    e = 0.0
    for i in range(len(x) - 1):
        d = x[i + 1] - x[i]
        e += k * (math.sqrt(d * d + 1.0) - rest) ** 2
    return e


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_the_other_end_of_a_spring_is_the_negated_value(backend):
    x, k, rest = np.random.default_rng(3).uniform(-2.0, 2.0, 9), 1.7, 0.4
    f = cn.coarsen(SPRINGS, backend=backend, namespace={"math": math})
    gx, gk, grest = f.grad(x, k, rest)
    h = 1e-6
    fd = [(_python(x + h * np.eye(len(x))[j], k, rest) - _python(x - h * np.eye(len(x))[j], k, rest)) / (2 * h)
          for j in range(len(x))]
    np.testing.assert_allclose(gx, fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gk, (_python(x, k + h, rest) - _python(x, k - h, rest)) / (2 * h), rtol=1e-6)
    np.testing.assert_allclose(grest, (_python(x, k, rest + h) - _python(x, k, rest - h)) / (2 * h), rtol=1e-6)
    if backend == "numba":
        want = cn.coarsen(SPRINGS, backend="numpy", namespace={"math": math}).grad(x, k, rest)
        for got, w in zip((gx, gk, grest), want, strict=True):
            np.testing.assert_allclose(got, w, rtol=1e-12, atol=0)
        negated = re.findall(r"^\s+(\w+) = -(\w+)$", f.source, re.M)
        assert negated, "the other end's contribution is computed again, not negated"
