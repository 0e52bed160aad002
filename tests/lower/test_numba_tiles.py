"""``backend="numba"``: a nest's loop over points with a per-point row, in tiles of points (``lower/numba_tiles.py``).

The tiled nest must compute every value and sum as the loop over the points does, in the same order: its
values and gradients are checked bit for bit against the same module built without tiles
(``numba_nests.tiled`` answering None), and against the NumPy backend (1e-10, an independent computation) for
lengths on both sides of the tile boundaries, NaN points, components of weight zero, a constant term of any
sign (the refill of the row where the sum is not positive).  The shapes the pass must refuse (a number carried
over the points inside a loop over the components) are refused.
"""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import assert_close
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lower.test_numba_lse_rows import streaming as mixture  # (gmm's form; the same programs as there)
from lower.test_numba_lse_rows import with_constant
from numba_pairs import as_tuple

import coarsen_nb as cn
from coarsen_nb.lower import lir, numba_nests, numba_tiles
from coarsen_nb.lower.numba_tiles import TILE

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


PROGRAMS = {"mixture": (mixture, ("x", "mu", "w")), "with_constant": (with_constant, ("x", "mu", "c"))}
_COMPILED: dict = {}


def _compiled(name, tiles: bool):
    """The program under numpy, and under numba with or without tiles (a module of its own each)."""
    key = (name, tiles)
    if key not in _COMPILED:
        fn, wrt = PROGRAMS[name]
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("COARSEN_NB_PIPELINE_CACHE", "0")
            if not tiles:
                mp.setattr(numba_nests, "tiled", lambda body, rows, fresh: None)
            f = cn.coarsen(fn, wrt=wrt, backend="numba")
            f.value_and_grad(*_args(name, 3, 2, 0, 0.5))       # (compiled here, with the patch in place)
            f.grad(*_args(name, 3, 2, 0, 0.5))
        _COMPILED[key] = f
    return _COMPILED[key]


def _numpy(name):
    if (name, "numpy") not in _COMPILED:
        fn, wrt = PROGRAMS[name]
        _COMPILED[name, "numpy"] = cn.coarsen(fn, wrt=wrt, backend="numpy")
    return _COMPILED[name, "numpy"]


def _args(name, n, k, seed, c):
    rng = np.random.default_rng(seed)
    x, mu, w = rng.uniform(-2, 2, n), rng.uniform(-2, 2, k), rng.uniform(-1, 0.5, k)
    return (x, mu, w) if name == "mixture" else (x, mu, c)


def _same(name, args):
    """Tiled = untiled bit for bit (value, vjp, grad); both = the NumPy backend's to 1e-10, NaN where it is."""
    tiled, plain = _compiled(name, True), _compiled(name, False)
    assert "for tile" in tiled.source and "for tile" not in plain.source
    value, grad = tiled.value_and_grad(*args)
    want_value, want_grad = plain.value_and_grad(*args)
    np.testing.assert_array_equal(value, want_value)
    for got in (grad, tiled.grad(*args)):
        for g, w in zip(as_tuple(got), as_tuple(want_grad), strict=True):
            np.testing.assert_array_equal(g, w)
    with np.errstate(all="ignore"):
        np_value, np_grad = _numpy(name).value_and_grad(*args)
    assert_close(value, np_value, rtol=1e-10, atol=1e-12, what=f"{name} value")
    for g, w in zip(as_tuple(grad), as_tuple(np_grad), strict=True):
        assert_close(g, w, rtol=1e-10, atol=1e-12, what=f"{name} gradient")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(PROGRAMS)), n=st.integers(0, 3 * TILE + 3), k=st.integers(0, 10),
       seed=st.integers(0, 2**16), c=st.sampled_from([2.5, 0.0, -0.3, -50.0]),
       nans=st.lists(st.integers(0, 3 * TILE + 2), max_size=2), zero_weight=st.booleans())
def test_tiles_equal_the_loop_over_points_and_numpy(name, n, k, seed, c, nans, zero_weight):
    x, mu, third = _args(name, n, k, seed, c)
    for at in nans:
        if at < n:
            x[at] = np.nan
    if zero_weight and name == "mixture" and k:
        third[seed % k] = -np.inf
    _same(name, (x, mu, third))


@pytest.mark.parametrize("n", [TILE - 1, TILE, TILE + 1, 2 * TILE + 5])
def test_tile_edges(n):
    _same("mixture", _args("mixture", n, 8, n, 0.0))
    _same("with_constant", _args("with_constant", n, 3, n, -0.3))


def test_a_number_carried_inside_the_components_loop_is_not_tiled():
    """``acc += g(i, k)`` inside the loop over the components, carried from point to point: interchanged it
    would add in another order, so the pass leaves the loop as it is."""
    n, k, i, acc, row, v = (lir.Name(w) for w in ("n", "k", "i", "acc", "row", "v"))
    inner = lir.For(k, lir.Call(lir.Name("range"), (lir.Lit("0"), lir.Lit("8"))), (
        lir.Assign(lir.Index(row, (k,)), lir.Index(lir.Name("x"), (i,))),
        lir.AugAssign(acc, "+", lir.Index(row, (k,)))))
    body = [lir.Assign(row, lir.Call(lir.Attr(lir.Name("xp"), "empty"), (lir.Lit("8"),))),
            lir.Assign(acc, lir.Lit("0.0")),
            lir.For(i, lir.Call(lir.Name("range"), (lir.Lit("0"), n)), (lir.Assign(v, lir.Lit("1.0")), inner)),
            lir.Return(acc)]
    assert numba_tiles.tiled(body, {"row"}, lambda w: w + "2") is None


def test_a_scatter_at_a_number_of_the_point_is_not_tiled():
    """``b[at] += row[k]`` inside the loop over the components, ``at`` computed at each point: two points may
    add to one element, which the interchanged loops would add in another order; the pass refuses."""
    n, k, i, at, row, b = (lir.Name(w) for w in ("n", "k", "i", "at", "row", "b"))
    inner = lir.For(k, lir.Call(lir.Name("range"), (lir.Lit("0"), lir.Lit("8"))), (
        lir.Assign(lir.Index(row, (k,)), lir.Index(lir.Name("x"), (i,))),
        lir.AugAssign(lir.Index(b, (lir.Call(lir.Name("int"), (at,)),)), "+", lir.Index(row, (k,)))))
    body = [lir.Assign(row, lir.Call(lir.Attr(lir.Name("xp"), "empty"), (lir.Lit("8"),))),
            lir.For(i, lir.Call(lir.Name("range"), (lir.Lit("0"), n)), (
                lir.Assign(at, lir.BinOp("%", i, lir.Lit("3"))), inner))]
    assert numba_tiles.tiled(body, {"row"}, lambda w: w + "2") is None
    # (the same loop adding at the component instead is tiled)
    inner2 = lir.For(k, inner.iter, (inner.body[0], lir.AugAssign(lir.Index(b, (k,)), "+", lir.Index(row, (k,)))))
    body[1] = lir.For(i, body[1].iter, (body[1].body[0], inner2))
    assert numba_tiles.tiled(body, {"row"}, lambda w: w + "2") is not None
