"""A number that meets every element of an array before a reduction (``np.sum(w * w + c)``, ``np.mean(w - c)``,
``np.prod``/``np.max``/``np.min`` of ``w`` plus a number, ``np.sum(c * w)``, a matrix plus a row, a column or
a number), in a kernel that may also hold arrays of another length (``np.sum(u[1:] * v[:-1])``).

``c``'s adjoint is its share of each element it met, summed over those elements: their count, not the count of
the kernel's elementwise level, which is the broadcast of every array the kernel holds and does not exist when
their lengths differ ("shapes ((5,), (5,), (6,)) do not broadcast" before ``Deps.reduce_to`` held the number at
the elements of its own array).  Each program runs under the NumPy and the numba backends: the value equals the
plain Python function's, the gradient w.r.t. ``x``, ``a`` and ``b`` central differences of it (where those are a
reference: no kink within a step), and nothing falls back.  The programs: one of each result kind of
``tests/vector_program_gen.py`` beside a sum of slices, then the generator's random programs with those results.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from gradcheck import finite_difference, one_sided_differences
from hypothesis import HealthCheck, assume, given, settings
from program_gen import Program, main_function
from vector_program_gen import RESULTS, mixed_programs

import coarsen_nb as cn
from coarsen_nb.errors import FallbackWarning
from coarsen_nb.numba_loader import NumbaFallbackWarning

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)

#: the result kinds where a number meets an array's elements (all but the plain sum of squares)
WITH_A_NUMBER = tuple(k for k in RESULTS if k != "sum_of_squares")

_EXAMPLES = int(os.environ.get("COARSEN_RANDOM_EXAMPLES", 0))
_HEALTH = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture]


def _beside_slices(kind: str) -> Program:
    """The result ``kind`` of the last array, in one kernel with a sum of slices one shorter than ``x``; the
    number is that sum plus the parameter ``a``."""
    result = RESULTS[kind].format(w="u3", c="(s2 + a)")
    source = ("import numpy as np\n\n\ndef f(x, a, b):\n    u0 = np.tanh(x)\n    u1 = x * a\n"
              "    s2 = np.tanh(np.sum(u1[1:] * u0[:-1]))\n    u3 = u0 * s2 + b\n"
              f"    return {result} + a + b\n")
    x = np.array([0.3, -0.7, 1.1, 0.2, -1.3, 0.9])
    return Program(source, (x, 0.7, -0.4), ("x", "a", "b"), ("x", "a", "b"))


def _check(p: Program, backend: str, exact: bool = False) -> None:
    """Value and gradient of ``p`` under ``backend`` against the plain function and central differences
    (``exact``: the differences must be a reference; else an example where they are not is discarded)."""
    where = f"\n{p.source}\nargs={p.args} backend={backend}"
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        warnings.simplefilter("error", NumbaFallbackWarning)
        f = cn.coarsen(p.source, name="f", wrt=p.wrt, backend=backend)
        value, grads = f.value_and_grad(*p.args)
    py = main_function(p.source, "f")
    np.testing.assert_allclose(value, py(*p.args), rtol=1e-9, atol=1e-12, err_msg=f"value{where}")
    for name, g in zip(p.wrt, grads, strict=True):
        i = p.params.index(name)
        fd = np.asarray(finite_difference(py, p.args, i, eps=1e-6))
        coarse = np.asarray(finite_difference(py, p.args, i, eps=1e-5))
        left, right = one_sided_differences(py, p.args, i, 1e-6)
        scale = 1.0 + np.abs(fd)
        smooth = np.all(np.abs(fd - coarse) <= 1e-6 * scale) and np.all(np.abs(left - right) <= 1e-3 * scale)
        if exact:
            assert smooth, f"d/d{name}: the central differences are not a reference here{where}"
        else:
            assume(smooth)
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-6, err_msg=f"d/d{name}{where}")


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("kind", sorted(RESULTS))
def test_each_result_beside_a_sum_of_slices(kind, backend):
    _check(_beside_slices(kind), backend, exact=True)


@settings(max_examples=_EXAMPLES or 40, deadline=None, suppress_health_check=_HEALTH)
@given(mixed_programs(results=WITH_A_NUMBER))
def test_random_programs_with_a_number_in_the_result_numpy(p):
    _check(p, "numpy")


@settings(max_examples=_EXAMPLES or 10, deadline=None, suppress_health_check=_HEALTH)
@given(mixed_programs(results=WITH_A_NUMBER))
def test_random_programs_with_a_number_in_the_result_numba(p):
    _check(p, "numba")
