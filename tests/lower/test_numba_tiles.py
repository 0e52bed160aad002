"""``backend="numba"``: a nest's loop over points with a per-point row, in tiles of points (``lower/numba_tiles.py``).

The tiled nest must compute every value as the loop over the points does, in the same order: its values are
checked bit for bit against the same module built without tiles (``numba_nests.tiled`` answering None); its
gradients add each scatter's terms by lanes of the tile (``numba_tiles._scatters``), the same terms in another
order: equal to the untiled module's to 1e-12.  Both are checked against the NumPy backend (1e-10, an
independent computation), the value against the plain function, for lengths on both sides of the tile
boundaries, NaN points, components of weight zero, a constant term of any sign (the refill of the row where
the sum is not positive, the only place its logarithm is read in the gradient).  The shapes the pass must
refuse (a number carried over the points inside a loop over the components) are refused.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from gradcheck import assert_close
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lower.test_numba_lse_rows import streaming as mixture  # (gmm's form; the same programs as there)
from lower.test_numba_lse_rows import with_constant
from numba_pairs import as_tuple

import coarsen_nb as cn
from coarsen_nb.lower import lir, numba_flat_tiles, numba_nests, numba_tiles
from coarsen_nb.lower.numba_tiles import NEST_TILE as TILE

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
            assert f.source     # (the whole module is printed when first read: here, with the patch in place)
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
    """Tiled = untiled: the value bit for bit, the gradients (value_and_grad's, grad's) to 1e-12; both = the
    NumPy backend's to 1e-10, NaN where it is; the value = the plain function's."""
    tiled, plain = _compiled(name, True), _compiled(name, False)
    assert "for tile" in tiled.source and "for tile" not in plain.source
    value, grad = tiled.value_and_grad(*args)
    want_value, want_grad = plain.value_and_grad(*args)
    np.testing.assert_array_equal(value, want_value)
    for got in (grad, tiled.grad(*args)):
        for g, w in zip(as_tuple(got), as_tuple(want_grad), strict=True):
            assert_close(g, w, rtol=1e-12, atol=1e-12, what=f"{name} tiled gradient")
    with np.errstate(all="ignore"):
        np_value, np_grad = _numpy(name).value_and_grad(*args)
    try:
        plain_value = PROGRAMS[name][0](*args)
    except (ValueError, OverflowError):
        plain_value = None      # (math.log of 0 or less: Python raises where the compiled code is IEEE's)
    if plain_value is not None:
        assert_close(value, plain_value, rtol=1e-10, atol=1e-12, what=f"{name} value, plain function")
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


@pytest.mark.parametrize("n", [0, 1, TILE - 1, TILE, TILE + 1, 2 * TILE + 5])
def test_tile_edges(n):
    _same("mixture", _args("mixture", n, 8, n, 0.0))
    _same("with_constant", _args("with_constant", n, 3, n, -0.3))


@pytest.mark.parametrize("n", [0, 1, TILE + 1])
def test_a_component_of_weight_zero_with_few_or_no_points(n):
    """A log weight ``-inf`` (``exp(-2 w_k)`` infinite) with no points: mu's and w's gradient are 0 under
    both backends (the NumPy backend's ``(g @ M) * h`` was NaN: ``nests.unless_empty``); hypothesis draws it
    only outside the derandomized profile."""
    x, mu, w = _args("mixture", n, 4, n, 0.0)
    w[1] = -np.inf
    _same("mixture", (x, mu, w))
    if n == 0:
        for g in _numpy("mixture").grad(x, mu, w)[1:]:
            np.testing.assert_array_equal(g, np.zeros(4))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiles=st.integers(0, 3), edge=st.sampled_from([0, 1, 15, 16, 17, TILE - 1]), k=st.integers(1, 9),
       seed=st.integers(0, 2**16), scale=st.sampled_from([1.0, 1e-150, 1e150, 30.0]),
       nan=st.booleans(), c=st.sampled_from([2.5, -0.3, -1e300]))
def test_lanes_over_many_tiles_equal_the_loop_and_numpy(tiles, edge, k, seed, scale, nan, c):
    """Point counts around the tile (0, 1, 15, 16, 17 past a multiple of it), 1 to 9 components, points far
    out (terms whose exponential underflows to 0 but at the maximum), tiny and huge, NaN points."""
    n = tiles * TILE + edge
    for name in PROGRAMS:
        x, mu, third = _args(name, n, k, seed, c)
        x *= scale
        if nan and n:
            x[seed % n] = np.nan
        _same(name, (x, mu, third))


def test_the_tiled_gradient_reads_its_points_through_views_and_adds_by_lanes():
    """The generated tile: the points' array read at the tile's lane of its view (a vector load, where ``x[i]``
    gathers), each scatter added into lanes (a vector add, where one number per element is an ordered
    chain), the logarithm that only the refill reads computed in the refill's branch.  The row and the lanes
    are flat tables, ``[k * 64 + lane]``, allocated by the 1-D ``xp.empty`` and the lanes zeroed by a loop
    (``numba_flat_tiles``: no 2-D ``empty``/``zeros`` compiled for them)."""
    f = _compiled("with_constant", True)
    text = f.source
    unchecked = text[text.index("def _soi"):]
    assert "x_tile = x[tile" in unchecked and "x_tile[lane" in unchecked and "x_tile[i - tile" not in unchecked
    # (a scatter indexed by its loop's counter, no int() of it: lower/numba_builtin_calls.py)
    assert f"* {TILE} + lane" in unchecked and "b_mu[k" in unchecked and "b_mu[int(" not in unchecked
    grad_nest = [part for part in text.split("\n@") if "in_bounds" in part and "b_mu" in part and "tile" in part]
    assert grad_nest
    for part in grad_nest:
        assert f", {TILE}))" not in part and "xp.zeros" not in part and "lanes[j" in part
        refill = part[part.index("if not ("):]
        # (each math.log of the adjoint's nest is inside the refill's branch)
        assert part.count("math.log(total") == refill.count("math.log(total") >= 1


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


def test_the_forward_reads_the_log_sum_exps_costly_terms_from_a_table():
    """``math.exp(-w[k])`` inside the log-sum-exp over k varies over k alone: the forward nest computes it once
    per component before the points (``nest_analysis.costly_inner_values``), not at each point-component;
    its values are the loop's (the tests above, against NumPy and the plain function)."""
    text = _compiled("mixture", True).source
    soi = re.search(r"def (_soi\d+)_fwd_nest\(", text).group(1)      # (the SOI's number: the plan's)
    for twin in (f"def {soi}_fwd_nest(", f"def {soi}_fwd_nest_in_bounds("):
        fwd = text[text.index(twin):]
        fwd = fwd[:fwd.index("\n@")]
        points = fwd[fwd.index("for i in range(") if "for tile" not in fwd else fwd.index("for tile"):]
        assert "table[" in points and "math.exp(w" not in points and "math.exp(-w" not in points
        head = fwd[:fwd.index("for tile")] if "for tile" in fwd else fwd[:fwd.index("for i in range(")]
        assert "math.exp(w_k_scaled)" in head


def test_a_table_read_whole_keeps_its_two_dimensions():
    """``numba_flat_tiles.flat_tables`` flattens a tile's (K, 64) tables only where every read is a pair of
    indices: a table passed whole (``f(row)``) would be read by rows by its callee, so the body stays."""
    n, k, i, row, x = (lir.Name(w) for w in ("n", "k", "i", "row", "x"))
    inner = lir.For(k, lir.Call(lir.Name("range"), (lir.Lit("0"), lir.Lit("8"))), (
        lir.Assign(lir.Index(row, (k,)), lir.Index(x, (i,))),))
    body = [lir.Assign(row, lir.Call(lir.Attr(lir.Name("xp"), "empty"), (lir.Lit("8"),))),
            lir.For(i, lir.Call(lir.Name("range"), (lir.Lit("0"), n)), (inner,))]
    made = numba_tiles.tiled(body, {"row"}, lambda w: w + "2")
    assert made is not None
    flat = numba_flat_tiles.flat_tables(made, lambda w: w + "3")
    text = "\n".join(lir.print_body(flat))
    assert f"row = xp.empty(8 * {TILE})" in text and f"row[k * {TILE} + lane3]" in text
    assert "for lane3 in range(0, stop2 - tile2)" in text and "x_tile2[lane3]" in text and "[k, " not in text
    whole = [*made, lir.ExprStmt(lir.Call(lir.Name("f"), (row,)))]
    assert numba_flat_tiles.flat_tables(whole, lambda w: w + "3") == whole
