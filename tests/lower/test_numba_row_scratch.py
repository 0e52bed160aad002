"""``backend="numba"``: a tiled row contraction's tiles and lanes in one array its caller passes
(``numba_row_tiles.passed_scratch``).

The tiles' own ``xp.empty(64)`` and lanes' ``xp.zeros((K, 64))`` made Numba compile NumPy's allocations once
more for the loop function (horner_fit's cold compile); the caller's ``xp.zeros((size,))`` is the instance
its ``b_c = xp.zeros(c.shape)`` compiles anyway.  The views hold the same elements, read and added in the same
order: value and gradient bit for bit against the same module built with the tiles' own allocations, on both
sides of the tile's boundaries, with 0, 1 and several coefficients.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba_pairs import as_tuple

import coarsen_nb as cn
from coarsen_nb.kernels.horner_fit import horner_fit
from coarsen_nb.lower import lir, numba_row_tiles, numba_rows
from coarsen_nb.lower.numba_tiles import NEST_TILE as TILE

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


_COMPILED: dict = {}


def _compiled(passed: bool):
    if passed not in _COMPILED:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("COARSEN_NB_PIPELINE_CACHE", "0")
            if not passed:
                mp.setattr(numba_rows, "passed_scratch", lambda body, params, scratch, fresh: None)
            f = cn.coarsen(horner_fit, wrt=("c",), backend="numba")
            args = (np.ones(2), np.ones(3), np.ones(3))
            f(*args)                                    # (compiled here, with the patch in place)
            f.value_and_grad(*args)
            f.grad(*args)
            assert f.source     # (the whole module is printed when first read: here, with the patch in place)
        _COMPILED[passed] = f
    return _COMPILED[passed]


def _parts(text):
    return {p.split("(")[0][len("def "):]: p for p in ("\n" + text).split("\ndef ")[1:] for p in ["def " + p]}


def test_the_adjoint_allocates_nothing_its_caller_passes_the_tiles():
    parts = _parts(_compiled(True).source)
    adjoints = {k: p for k, p in parts.items() if "_vjp_rows_in_bounds" in k}
    assert adjoints
    for name, part in adjoints.items():
        body = part.split('"""')[2]
        assert "xp.empty(" not in body and "xp.zeros(" not in body, name
        # (the trip count max(0, n_c) as the conditional Numba computes: lower/numba_builtin_calls.py)
        assert f"lanes = scratch[{4 * TILE}:{4 * TILE} + (n_c if n_c > 0 else 0) * {TILE}]" in body, name
        assert f"= lanes[j * {TILE}:j * {TILE} + {TILE}]" in body and "lanes[j, " not in body, name
    grad = parts["horner_fit_grad"]
    assert f"xp.zeros(({4 * TILE} + max(0, n_c) * {TILE},))" in grad
    # (the forward has no lanes: its tiles stay its own, and its callers allocate nothing for it)
    assert all("scratch" not in p for k, p in parts.items() if "_fwd_" in k)
    assert "= scratch[" not in _compiled(False).source and f"xp.zeros(({4 * TILE}" not in _compiled(False).source


@pytest.mark.parametrize("n", [1, TILE - 1, TILE, TILE + 1, 3 * TILE + 5])
@pytest.mark.parametrize("degree", [0, 1, 9])
def test_values_bit_for_bit_against_the_tiles_own_allocations(n, degree):
    rng = np.random.default_rng(n + 10 * degree)
    args = (rng.standard_normal(degree), rng.uniform(-1.5, 1.5, n), rng.standard_normal(n))
    passed, own = _compiled(True), _compiled(False)
    value, grad = passed.value_and_grad(*args)
    want_value, want_grad = own.value_and_grad(*args)
    np.testing.assert_array_equal(value, want_value)
    for got in (grad, passed.grad(*args)):
        for g, w in zip(as_tuple(got), as_tuple(want_grad), strict=True):
            np.testing.assert_array_equal(g, w)
    # (and twice in a row: the caller's array is zero at each call, the lanes start from zero)
    np.testing.assert_array_equal(as_tuple(passed.grad(*args))[0], as_tuple(want_grad)[0])


def _tiled_scatter(count):
    """A row loop whose scatter ``b[j] += pw`` runs over ``range(count)``, in tiles."""
    j, i, b, pw = (lir.Name(w) for w in ("j", "i", "b", "pw"))
    inner = lir.For(j, lir.Call(lir.Name("range"), (lir.Lit("0"), count)), (
        lir.AugAssign(lir.Index(b, (j,)), "+", pw), lir.AugAssign(pw, "*", lir.Lit("2.0"))))
    body = [lir.For(i, lir.Call(lir.Name("range"), (lir.Lit("0"), lir.Name("m"))), (
        lir.Assign(pw, lir.Index(lir.Name("x"), (i,))), inner))]
    return numba_row_tiles.tiled_rows(body, lambda w: w + "2")


def test_the_lanes_flat_and_the_size_of_parameters_only():
    made = _tiled_scatter(lir.Name("n"))
    body, size = numba_row_tiles.passed_scratch(made, ["n", "m", "x", "b"], "s", lambda w: w + "2")
    text = "\n".join(lir.print_body(body))
    assert "xp." not in text
    assert f"pw = s[:{TILE}]" in text and f"lanes2 = s[{TILE}:{TILE} + max(0, n) * {TILE}]" in text
    # (by rows: an index Numba knows is not negative, which LLVM vectorizes)
    assert f"lanes2_row2 = lanes2[j * {TILE}:j * {TILE} + {TILE}]" in text
    assert "lanes2_row2[i - tile2] += pw[i - tile2]" in text and "b[j] += lanes2_row2[lane2]" in text
    assert "\n".join(lir.print_body((lir.ExprStmt(size),))).strip() == f"{TILE} + max(0, n) * {TILE}"
    # (a size the caller cannot compute: the tiles keep their own allocations)
    assert numba_row_tiles.passed_scratch(made, ["m", "x", "b"], "s", lambda w: w + "2") is None


def test_no_lanes_no_scratch():
    """Without a scatter the tiles are ``xp.empty`` s, which a caller without a ``zeros`` would compile anew."""
    i, acc = lir.Name("i"), lir.Name("acc")
    inner = lir.For(lir.Name("j"), lir.Call(lir.Name("range"), (lir.Lit("0"), lir.Name("n"))), (
        lir.AugAssign(acc, "+", lir.Index(lir.Name("x"), (i,))),))
    body = [lir.Assign(lir.Name("t"), lir.Lit("0.0")),
            lir.For(i, lir.Call(lir.Name("range"), (lir.Lit("0"), lir.Name("m"))), (
                lir.Assign(acc, lir.Lit("0.0")), inner, lir.AugAssign(lir.Name("t"), "+", acc)))]
    made = numba_row_tiles.tiled_rows(body, lambda w: w + "2")
    assert made is not None and "xp.empty(" in "\n".join(lir.print_body(made))
    assert numba_row_tiles.passed_scratch(made, ["n", "m", "x"], "s", lambda w: w + "2") is None


def test_a_table_read_outside_a_loop_over_its_rows_reads_it_flat():
    k, j = lir.Name("k"), lir.Name("j")
    read = (lir.Assign(lir.Name("v"), lir.Index(lir.Name("lanes"), (lir.BinOp("-", k, lir.Lit("1")), j))),)
    text = "\n".join(lir.print_body(numba_row_tiles._by_rows(read, {"lanes": lir.Lit("64")}, lambda w: w)))
    assert text.strip() == "v = lanes[(k - 1) * 64 + j]"
