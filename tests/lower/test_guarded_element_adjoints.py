"""An element read only under a branch has its adjoint added under the same branch (``scatter_adjoints``).

The value a loop leaves in a state that copies an element (``prev = v`` over ``x``) is ``x[n - 1]`` where
the loop ran and the start value where it did not.  The adjoint's ``b_x[n - 1] += ...`` indexed an empty
array when ``n = 0`` and raised, where the plain function returns a number: the gradient was refused on
a valid input.  Compared with central differences of the plain function and across the backends.
"""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import finite_difference

import coarsen_nb as cn
from coarsen_nb.kernels.brachistochrone import brachistochrone

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


def last_value(x, a):
    prev = 0.5
    for v in x:
        prev = v
    return prev * a + a * a


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("n", [0, 1, 3])
def test_the_last_element_of_an_empty_loop(backend, n):
    x = np.linspace(0.2, 0.9, n)
    f = cn.coarsen(last_value, wrt=("x", "a"), backend=backend)
    value, (gx, ga) = f.value_and_grad(x, 1.5)
    assert value == pytest.approx(last_value(x, 1.5), rel=1e-14)
    assert gx.shape == x.shape
    np.testing.assert_allclose(ga, finite_difference(last_value, (x, 1.5), 1), rtol=1e-6)
    if n:
        np.testing.assert_allclose(gx, finite_difference(last_value, (x, 1.5), 0), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("n", [0, 1, 4])
def test_brachistochrone_with_no_interior_points(backend, n):
    y = -np.linspace(0.3, 1.5, n)
    args = (y, -2.0, 1.0, 9.81)
    f = cn.coarsen(brachistochrone, wrt=("y", "y_end"), backend=backend)
    gy, g_end = f.grad(*args)
    assert gy.shape == y.shape
    np.testing.assert_allclose(g_end, finite_difference(brachistochrone, args, 1), rtol=1e-6)
    if n:
        np.testing.assert_allclose(gy, finite_difference(brachistochrone, args, 0), rtol=1e-6, atol=1e-9)
