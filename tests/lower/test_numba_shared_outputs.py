"""``backend="numba"``: an element loop's contributions that store the same value share one output array.

periodic_laplacian_2d's adjoint gives each of its four rolls ``0.5 * U``: the loop wrote that value into four
new arrays, one per roll's adjoint (``lower/numba_loops.LoopFunction.same_output``).  Now it writes one array,
returned once, and the four contributions read it.  Such an output is only read by its call's ``+=``; it must
never become an adjoint itself (``numba_fusion`` claims no shared output as an adjoint's first contribution),
or two gradients would be one array.

Each program is checked against the NumPy backend to 1e-12 (bit for bit where the loop computes the same
operations), the plain function's central differences, and which arrays the numba module's loop returns.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn

pytestmark = [pytest.mark.usefixtures("private_numba_cache"),     # (tests/lower/conftest.py)
              pytest.mark.filterwarnings("error::coarsen_nb.numba_loader.NumbaFallbackWarning")]


def periodic_laplacian(U):
    lap = np.roll(U, 1, axis=0) + np.roll(U, -1, axis=0) + np.roll(U, 1, axis=1) + np.roll(U, -1, axis=1) - 4 * U
    return 0.5 * np.sum(U * lap)


def two_leaves_one_weight(x, y, z):
    """d/dx and d/dy are both sin(z): one array in the loop, two distinct gradients for the user."""
    return np.sum((x + y) * np.sin(z))


def _loop_returns(src: str) -> list[str]:
    """The return statements of the module's element-loop adjoints (``_soiN_vjp_elem*``)."""
    out = []
    for m in re.finditer(r"def (_soi\d+_vjp_elem\w*)\(.*?\n(.*?)\n\n", src, re.S):
        out += [line.strip() for line in m.group(2).splitlines() if line.strip().startswith("return ")]
    return out


def _check(fn, wrt, args):
    by_numpy = cn.coarsen(fn, wrt=wrt, backend="numpy")
    by_numba = cn.coarsen(fn, wrt=wrt, backend="numba")
    want, got = by_numpy.grad(*args), by_numba.grad(*args)
    if len(wrt) == 1:           # (one argument's gradient is the array itself)
        want, got = (want,), (got,)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    for k, name in enumerate(wrt):
        numeric = finite_difference(fn, args, fn.__code__.co_varnames.index(name))
        assert_close(got[k], numeric, rtol=1e-6, atol=1e-6)
    return by_numba, got


def test_periodic_laplacian_writes_one_array_for_its_four_rolls():
    U = np.random.default_rng(0).standard_normal((7, 5))
    f, _ = _check(periodic_laplacian, ("U",), (U,))
    returns = _loop_returns(f.source)
    # (the loop storing 0.5 * U returns one array: four before this change)
    assert any(r.count("reshape") == 1 and "," not in r.split("reshape")[0] for r in returns), returns
    assert not any(r.count("reshape") == 4 for r in returns), returns


def test_two_gradients_of_one_value_are_two_arrays():
    rng = np.random.default_rng(1)
    x, y, z = (rng.standard_normal((6, 3)) for _ in range(3))
    f, (gx, gy, gz) = _check(two_leaves_one_weight, ("x", "y", "z"), (x, y, z))
    assert re.search(r"b_x \+= _sum_to\((\w+), x.shape\)\n\s*b_y \+= _sum_to\(\1, y.shape\)", f.source)
    np.testing.assert_allclose(gx, np.sin(z), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(gy, np.sin(z), rtol=1e-14, atol=1e-15)
    assert not np.shares_memory(gx, gy)
    gx[0, 0] = 123.0                        # (the user's arrays: writing one leaves the other)
    assert abs(gy[0, 0] - np.sin(z[0, 0])) < 1e-14
    again = f.grad(x, y, z)                 # (and the next call's)
    np.testing.assert_allclose(again[0], np.sin(z), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(again[1], np.sin(z), rtol=1e-14, atol=1e-15)
