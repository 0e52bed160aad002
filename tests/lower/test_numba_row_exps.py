"""A row contraction whose row calls exp runs its rows in tiles, the exponentials in one loop (``numba_row_exps``).

The tiled loop is compared with the NumPy backend (to 1e-12: ``_exp`` is within 1 ulp of libm's), with the
plain Python function (the value) and with a gradient written here in NumPy (``expit``, by hand): at row counts
around the tile (0, 1, 15, 16, 17, 33) and random ones (Hypothesis), with margins far beyond exp's range
(the exponential underflows to 0, sigmoid saturates) and a NaN in a row.  The structural tests: these
functions, hmc and logreg_nll run the tile loop (``range(a, b, TILE)``, ``_exp``, no libm ``_sigmoid``/
``_softplus`` in the adjoint), and a row without exp (``sin``) does not.
"""

from __future__ import annotations

import ast
import math

import numpy as np
import pytest
from gradcheck import assert_close
from hypothesis import given, settings
from hypothesis import strategies as st

import coarsen_nb as cn
from coarsen_nb.lower.numba_tiles import TILE

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)

ROWS = (0, 1, TILE - 1, TILE, TILE + 1, 2 * TILE + 1)


def logistic_rows(w, X, y):
    """hmc's shape: softplus of the margin in its overflow-free form, a branch on the margin's sign."""
    u = 0.0
    for i in range(X.shape[0]):
        z = 0.0
        for j in range(len(w)):
            z += X[i, j] * w[j]
        m = y[i] * z
        if m > 0:
            u += math.log1p(math.exp(-m))
        else:
            u += math.log1p(math.exp(m)) - m
    return u


def exp_rows(w, X, y):
    """exp itself of the row's value, beside a square: the exponential of -z and a sum over the rows."""
    u = 0.0
    for i in range(X.shape[0]):
        z = 0.0
        for j in range(len(w)):
            z += X[i, j] * w[j]
        u += y[i] * math.exp(-z) + 0.5 * z * z
    return u


def _expit(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0, e) / (1.0 + e)


def _hand_grad(which, w, X, y):
    """The gradient in NumPy, written from the functions above (not from coarsen_nb's output)."""
    z = X @ w
    if which == "logistic_rows":
        return -(_expit(-y * z) * y) @ X
    return (-y * np.exp(-z) + z) @ X


FUNCTIONS = {"logistic_rows": logistic_rows, "exp_rows": exp_rows}


@pytest.fixture(scope="module")
def compiled():
    return {k: (cn.coarsen(f, wrt=("w",), backend="numba"), cn.coarsen(f, wrt=("w",)), f)
            for k, f in FUNCTIONS.items()}


def _args(which, rows, cols, seed, scale=1.0, nan_at=None):
    rng = np.random.default_rng(seed)
    X = scale * rng.standard_normal((rows, cols))
    if which == "exp_rows":
        X = np.clip(X, -300.0, 300.0) / max(cols, 1)       # (exp(-z) within the plain function's range)
    y = np.sign(rng.standard_normal(rows)) if which == "logistic_rows" else rng.uniform(0.5, 1.5, rows)
    if nan_at is not None and rows:
        X[nan_at % rows, 0] = np.nan
    return rng.standard_normal(cols), X, y


def _check(compiled, which, args, what):
    numba_f, numpy_f, plain = compiled[which]
    value, grad = numba_f.value_and_grad(*args)
    want_value, want_grad = numpy_f.value_and_grad(*args)
    assert_close(grad, want_grad, rtol=1e-12, atol=1e-13, what=f"{which} numba vs numpy, {what}")
    assert_close(value, want_value, rtol=1e-12, atol=1e-13, what=f"{which} numba vs numpy value, {what}")
    assert_close(value, plain(*args), rtol=1e-12, atol=1e-13, what=f"{which} value vs the plain function, {what}")
    with np.errstate(all="ignore"):
        hand = _hand_grad(which, *args)
    assert_close(grad, hand, rtol=1e-10, atol=1e-12, what=f"{which} numba vs the hand gradient, {what}")


@pytest.mark.parametrize("which", sorted(FUNCTIONS))
@pytest.mark.parametrize("rows", ROWS)
def test_rows_around_the_tile_equal_numpy_the_plain_function_and_by_hand(compiled, which, rows):
    _check(compiled, which, _args(which, rows, 3, rows), f"{rows} rows")


@pytest.mark.parametrize("rows", ROWS[1:])
def test_margins_beyond_exp_range(compiled, rows):
    """Margins of +-1e3..1e4: exp(-|m|) underflows to 0, the softplus is the margin or 0, sigmoid 0 or 1."""
    _check(compiled, "logistic_rows", _args("logistic_rows", rows, 3, rows, scale=3e3), f"{rows} rows, |m| ~ 1e3")


@pytest.mark.parametrize("which", sorted(FUNCTIONS))
@pytest.mark.parametrize("rows", (1, TILE, TILE + 1))
def test_a_nan_in_a_row(compiled, which, rows):
    numba_f, numpy_f, plain = compiled[which]
    args = _args(which, rows, 3, rows, nan_at=rows - 1)
    value, grad = numba_f.value_and_grad(*args)
    want_value, want_grad = numpy_f.value_and_grad(*args)
    assert math.isnan(value) and math.isnan(want_value) and math.isnan(plain(*args))
    assert_close(grad, want_grad, rtol=1e-12, atol=1e-13, what=f"{which} with a NaN, {rows} rows")
    assert np.isnan(grad).all()


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(0, 3 * TILE), cols=st.integers(0, 5), seed=st.integers(0, 2**31 - 1),
       scale=st.sampled_from([1.0, 50.0, 1e3]), which=st.sampled_from(sorted(FUNCTIONS)))
def test_random_shapes(compiled, rows, cols, seed, scale, which):
    _check(compiled, which, _args(which, rows, cols, seed, scale), f"{rows}x{cols}, scale {scale}")


def _row_functions(source):
    return {n.name: ast.unparse(n) for n in ast.parse(source).body
            if isinstance(n, ast.FunctionDef) and n.name.startswith("_soi") and "_rows" in n.name}


def _tiled(text):
    return f", {TILE}):" in text and "_exp(" in text


@pytest.mark.parametrize("which", sorted(FUNCTIONS))
def test_the_adjoint_runs_in_tiles(compiled, which):
    numba_f, _, _ = compiled[which]
    numba_f.grad(*_args(which, 4, 3, 0))
    texts = _row_functions(numba_f.source)
    assert texts and all(_tiled(t) for t in texts.values()), texts
    assert not any(word in t for t in texts.values() for word in ("_sigmoid(", "_softplus(", "math.exp(")), texts


@pytest.mark.parametrize("name", ["hmc", "logreg_nll"])
def test_the_kernels_run_in_tiles(name):
    import importlib

    mod = importlib.import_module(f"coarsen_nb.kernels.{name}")
    f = cn.coarsen(getattr(mod, name), wrt=mod.META["wrt"], backend="numba")
    f.grad(*mod.make_inputs(4))
    vjp = {k: t for k, t in _row_functions(f.source).items() if "_vjp_" in k}
    assert vjp and all(_tiled(t) for t in vjp.values()), vjp


def without_exp(w, X, y):
    u = 0.0
    for i in range(X.shape[0]):
        z = 0.0
        for j in range(len(w)):
            z += X[i, j] * w[j]
        u += y[i] * math.sin(z)
    return u


def invariant_exp(w, X, y):
    """exp of a number that does not vary over the rows: computed once, nothing to tile."""
    u = 0.0
    for i in range(X.shape[0]):
        z = 0.0
        for j in range(len(w)):
            z += X[i, j] * w[j]
        u += y[i] * math.exp(w[0]) * z
    return u


@pytest.mark.parametrize("fn", [without_exp, invariant_exp])
def test_a_row_without_exp_of_the_row_is_not_tiled(fn):
    f = cn.coarsen(fn, wrt=("w",), backend="numba")
    args = _args("logistic_rows", TILE + 1, 3, 0)
    f.grad(*args)
    texts = _row_functions(f.source)
    assert texts and not any(_tiled(t) or "xp.empty" in t for t in texts.values()), texts
    assert_close(f.grad(*args), cn.coarsen(fn, wrt=("w",)).grad(*args), rtol=1e-12, atol=1e-13, what=fn.__name__)
