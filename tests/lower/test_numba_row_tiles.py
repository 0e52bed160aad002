"""``backend="numba"``: a row contraction's loop over the rows in tiles (``lower/numba_row_tiles.py``).

A Horner polynomial's row (``for k: p = p*x[i] + c[k]``, lifted to a running power over k) runs a tile of rows
at a time: its numbers are tiles, its loops over the coefficients run around a loop over the tile, its
scatters add by lanes.  Every value is the loop's over the rows, in the same order (the value bit for bit
against the same module built without the pass); the gradient's scatters add the same terms in another order
(to 1e-12).  Both against the NumPy backend (1e-10) and the value against the plain function, for row counts
on both sides of the tile's boundaries, coefficient counts 0 (no loop over k: ``_ipow``), 1 and several, NaN
and huge points, a start other than 0 (the power past the loop, read from the running one), a branch in the
row.  A row that reads a matrix's row ``X[i, j]`` keeps its loop over the rows (measured slower in tiles).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from gradcheck import assert_close
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba_pairs import as_tuple

import coarsen_nb as cn
from coarsen_nb.kernels.horner_fit import horner_fit
from coarsen_nb.lower import lir, numba_row_tiles, numba_rows
from coarsen_nb.lower.numba_tiles import NEST_TILE as TILE

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


def horner_from(c, xs, ys, p0):
    loss = 0.0
    for i in range(len(xs)):
        p = p0
        for k in range(len(c)):
            p = p * xs[i] + c[k]
        r = p - ys[i]
        loss += r * r
    return loss


def horner_hinge(c, xs, ys):
    loss = 0.0
    for i in range(len(xs)):
        p = 0.0
        for k in range(len(c)):
            p = p * xs[i] + c[k]
        r = p - ys[i]
        if r > 0.0:
            loss += r * r
        else:
            loss -= 0.5 * r
    return loss


def logistic_rows(theta, xs, y):
    u = 0.0
    for i in range(xs.shape[0]):
        z = 0.0
        for j in range(len(theta)):
            z += xs[i, j] * theta[j]
        if y[i] > 0.5:
            u += math.log(1.0 + math.exp(-z))
        else:
            u += math.log(1.0 + math.exp(z))
    return u


PROGRAMS = {"horner_fit": (horner_fit, ("c",)), "horner_from": (horner_from, ("c", "p0")),
            "horner_hinge": (horner_hinge, ("c",))}
_COMPILED: dict = {}


def _args(name, n, degree, seed):
    rng = np.random.default_rng(seed)
    c, xs, ys = rng.standard_normal(degree), rng.uniform(-1.5, 1.5, n), rng.standard_normal(n)
    return (c, xs, ys, 0.7) if name == "horner_from" else (c, xs, ys)


def _compiled(name, tiles: bool):
    """The program under numba with or without the rows in tiles (a module of its own each)."""
    key = (name, tiles)
    if key not in _COMPILED:
        fn, wrt = PROGRAMS[name]
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("COARSEN_NB_PIPELINE_CACHE", "0")
            if not tiles:
                mp.setattr(numba_rows, "tiled_rows", lambda body, fresh: None)
            f = cn.coarsen(fn, wrt=wrt, backend="numba")
            args = _args(name, 3, 2, 0)
            f(*args)                                    # (compiled here, with the patch in place)
            f.value_and_grad(*args)
            f.grad(*args)
            assert f.source     # (the whole module is printed when first read: here, with the patch in place)
        _COMPILED[key] = f
    return _COMPILED[key]


def _numpy(name):
    if (name, "numpy") not in _COMPILED:
        fn, wrt = PROGRAMS[name]
        _COMPILED[name, "numpy"] = cn.coarsen(fn, wrt=wrt, backend="numpy")
    return _COMPILED[name, "numpy"]


def _same(name, args):
    """Tiled = untiled: the value bit for bit, the gradients to 1e-12; both = the NumPy backend's to 1e-10
    (NaN where it is); the value = the plain function's."""
    tiled, plain = _compiled(name, True), _compiled(name, False)
    value, grad = tiled.value_and_grad(*args)
    want_value, want_grad = plain.value_and_grad(*args)
    np.testing.assert_array_equal(value, want_value)
    np.testing.assert_array_equal(tiled(*args), plain(*args))
    for got in (grad, tiled.grad(*args)):
        for g, w in zip(as_tuple(got), as_tuple(want_grad), strict=True):
            assert_close(g, w, rtol=1e-12, atol=1e-12, what=f"{name} tiled gradient")
    with np.errstate(all="ignore"):
        np_value, np_grad = _numpy(name).value_and_grad(*args)
        plain_value = PROGRAMS[name][0](*args) if len(args[1]) else None
    if plain_value is not None:
        assert_close(value, plain_value, rtol=1e-10, atol=1e-12, what=f"{name} value, plain function")
    assert_close(value, np_value, rtol=1e-10, atol=1e-12, what=f"{name} value")
    for g, w in zip(as_tuple(grad), as_tuple(np_grad), strict=True):
        assert_close(g, w, rtol=1e-10, atol=1e-12, what=f"{name} gradient")


def _defined(part):
    """The name of the function ``part`` (a decorated definition of the module's text) defines."""
    lines = [x for x in part.splitlines() if x.startswith("def ")]
    return lines[0][4:].split("(")[0] if lines else ""


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_rows_loops_are_tiled(name):
    text = _compiled(name, True).source
    tiled = {_defined(part): part for part in text.split("\n@") if "_rows_in_bounds" in _defined(part)}
    assert any("_vjp_" in k for k in tiled) and any("_fwd_" in k for k in tiled)
    for k, part in tiled.items():
        assert "for tile" in part and ("lanes" in part or "_fwd_" in k), k
    assert "for tile" not in _compiled(name, False).source


@pytest.mark.parametrize("n", [1, TILE - 1, TILE, TILE + 1, 3 * TILE + 5])
@pytest.mark.parametrize("degree", [0, 1, 9])
def test_tile_edges(n, degree):
    for name in PROGRAMS:
        _same(name, _args(name, n, degree, n + degree))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(PROGRAMS)), n=st.integers(1, 3 * TILE + 3), degree=st.integers(0, 10),
       seed=st.integers(0, 2**16), scale=st.sampled_from([1.0, 1e-150, 1e30, 3.0]),
       nans=st.lists(st.integers(0, 3 * TILE + 2), max_size=2))
def test_tiles_equal_the_loop_over_rows_and_numpy(name, n, degree, seed, scale, nans):
    args = _args(name, n, degree, seed)
    args[1][:] *= scale
    for at in nans:
        if at < n:
            args[1][at] = np.nan
    _same(name, args)


def test_a_row_of_a_matrix_is_not_tiled():
    """``X[i, j]`` over a tile is a strided column read; the row's dot product reads it contiguously."""
    rng = np.random.default_rng(0)
    args = (rng.standard_normal(4), rng.standard_normal((70, 4)), (rng.random(70) > 0.5) * 1.0)
    f = cn.coarsen(logistic_rows, wrt=("theta",), backend="numba")
    g = f.grad(*args)
    want = cn.coarsen(logistic_rows, wrt=("theta",), backend="numpy").grad(*args)
    assert_close(as_tuple(g)[0], as_tuple(want)[0], rtol=1e-10, atol=1e-12, what="logistic rows gradient")
    assert "_rows_in_bounds" in f.source and "for tile" not in f.source


def test_a_backwards_loop_over_the_coefficients_adds_by_lanes():
    """The scatter of ``for j in range(n - 1, -1, -1)`` (a running power's order) adds into ``lanes[j, ...]``:
    the lanes span ``range(0, n)``, the same elements."""
    n, j, i, b, pw = (lir.Name(w) for w in ("n", "j", "i", "b", "pw"))
    back = lir.Call(lir.Name("range"), (lir.BinOp("-", n, lir.Lit("1")), lir.Lit("-1"), lir.Lit("-1")))
    inner = lir.For(j, back, (lir.AugAssign(lir.Index(b, (j,)), "+", pw), lir.AugAssign(pw, "*", lir.Lit("2.0"))))
    body = [lir.For(i, lir.Call(lir.Name("range"), (lir.Lit("0"), lir.Name("m"))), (
        lir.Assign(pw, lir.Index(lir.Name("x"), (i,))), inner))]
    made = numba_row_tiles.tiled_rows(body, lambda w: w + "2")
    text = "\n".join(lir.print_body(made))
    assert "xp.zeros((max(0, n), 64))" in text and "lanes2[j, i - tile2] += pw[i - tile2]" in text
