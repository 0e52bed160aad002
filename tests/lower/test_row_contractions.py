"""``np.sum(M * v, axis=-1)`` of a matrix and a vector compiles to the contraction step ``_rowdot``
(phi/array_contractions.py, rules/contractions.py), whose value, gradient and tangent are the plain
function's under NumPy's broadcasting of a size-1 axis, which the step checks at run time: M of one
column times v of d elements, M of d columns times v of one element, a one-row M, and M of one
column and v of one element.  References: the plain function, central differences, ``jax.grad`` and
``jax.jvp`` of the same code with ``np`` rebound to ``jax.numpy``."""

from __future__ import annotations

import types
import warnings

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn
from coarsen_nb.lower import array_helpers


def softplus_rows(X, w):
    return np.sum(np.log(1.0 + np.exp(np.sum(X * w, axis=1))))


def vector_first(X, w):
    return np.sum(np.sin(np.sum(w * X, axis=-1)) * np.arange(X.shape[0]))


def computed_operands(X, w):
    return np.sum(np.sum(np.cos(X) * (w + 1.0), axis=1) ** 2)


def product_read_twice(X, w):
    p = X * w
    return np.sum(np.sum(p, axis=1) ** 2) + np.sum(p)


PROGRAMS = [softplus_rows, vector_first, computed_operands]
SELECTIONS = [{}, {"max_soi": 1}, {"per_block": True}]
SELECTION_IDS = ["default", "L=1", "per-block"]
#: (X's shape, w's shape): the lengths match, or one of them is 1 and NumPy broadcasts it
SHAPES = [((6, 4), (4,)), ((6, 1), (4,)), ((6, 4), (1,)), ((1, 4), (4,)), ((6, 1), (1,)), ((1, 1), (3,))]
SHAPE_IDS = ["matched", "one-column", "one-weight", "one-row", "both-one", "one-by-one"]


def _args(shapes, seed):
    rng = np.random.default_rng(seed)
    return rng.normal(size=shapes[0]), rng.normal(size=shapes[1])


def _in_jax(fn):
    """``fn``'s own code with ``np`` rebound to ``jax.numpy`` (float64)."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax, types.FunctionType(fn.__code__, {**fn.__globals__, "np": jax.numpy})


@pytest.mark.parametrize("selection", SELECTIONS, ids=SELECTION_IDS)
@pytest.mark.parametrize("shapes", SHAPES, ids=SHAPE_IDS)
@pytest.mark.parametrize("fn", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_value_gradient_and_tangent_under_broadcasting(fn, shapes, selection):
    f = cn.coarsen(fn, **selection)
    jax, jfn = _in_jax(fn)
    args = _args(shapes, 0)
    assert_close(f(*args), fn(*args), rtol=1e-12, atol=1e-12, what="value")
    grads = f.grad(*args)
    want = jax.grad(jfn, argnums=(0, 1))(*args)
    for k in range(2):
        assert_close(grads[k], finite_difference(fn, args, k), rtol=1e-6, atol=1e-7, what=f"d/d{k} vs FD")
        assert_close(grads[k], np.asarray(want[k]), rtol=1e-10, atol=1e-12, what=f"d/d{k} vs jax.grad")
    t = _args(shapes, 1)
    value, tangent = f.jvp(args, t)
    _, jax_tangent = jax.jvp(jfn, args, t)
    assert_close(value, fn(*args), rtol=1e-12, atol=1e-12, what="jvp value")
    assert_close(tangent, float(jax_tangent), rtol=1e-10, atol=1e-12, what="jvp vs jax.jvp")


@pytest.mark.parametrize("fn", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_the_product_array_is_not_made(fn):
    """The rows' dot products are one step of the matrix and the vector: no n×d product, no n×d
    adjoint of it (the loop style's cost)."""
    f = cn.coarsen(fn)
    f.grad(*_args(SHAPES[0], 0))
    entries = f.source[f.source.index(f"def {fn.__name__}("):]      # (after the helpers)
    assert "_rowdot(" in entries
    assert "axis=" not in entries


def test_a_product_read_elsewhere_stays_the_reduction():
    f = cn.coarsen(product_read_twice)
    jax, jfn = _in_jax(product_read_twice)
    for shapes in SHAPES:
        args = _args(shapes, 2)
        assert_close(f(*args), product_read_twice(*args), rtol=1e-12, atol=1e-12, what=f"{shapes} value")
        grads, want = f.grad(*args), jax.grad(jfn, argnums=(0, 1))(*args)
        for k in range(2):
            assert_close(grads[k], np.asarray(want[k]), rtol=1e-10, atol=1e-12, what=f"{shapes} d/d{k}")
    assert "_rowdot(" not in f.source


def squared_rows(X, w):
    return np.sum(np.sum(X * w, axis=1) ** 2)


@pytest.mark.parametrize("kinds", [("int", "float"), ("bool", "float"), ("float", "int"), ("int", "int"),
                                   ("bool", "int"), ("bool", "bool")])
def test_integer_and_boolean_operands_are_numpys_sum(kinds):
    """matmul promotes as the product does, except of two boolean arrays (a logical or of ands, where the
    sum of the products counts): those keep the product and the reduction."""
    rng = np.random.default_rng(4)
    make = {"float": lambda s: rng.normal(size=s), "int": lambda s: rng.integers(-3, 4, size=s),
            "bool": lambda s: rng.normal(size=s) > 0}
    args = (make[kinds[0]]((6, 4)), make[kinds[1]]((4,)))
    f = cn.coarsen(squared_rows)
    assert_close(f(*args), squared_rows(*args), rtol=1e-12, atol=0.0, what="value")
    assert ("_rowdot(" in f.source) == (kinds != ("bool", "bool"))
    for k, kind in enumerate(kinds):
        if kind == "float":
            g = f.grad(*args)
            assert_close(g[k] if isinstance(g, tuple) else g, finite_difference(squared_rows, args, k),
                         rtol=1e-6, atol=1e-7, what=f"d/d{k}")


@pytest.mark.parametrize("shapes", SHAPES + [((0, 3), (3,))], ids=SHAPE_IDS + ["no-rows"])
def test_the_helper_is_numpys_broadcasting_sum(shapes):
    m, v = _args(shapes, 3)
    got = array_helpers._rowdot(m, v)
    assert got.shape == np.sum(m * v, axis=1).shape
    assert_close(got, np.sum(m * v, axis=1), rtol=1e-13, atol=1e-14)


def test_lengths_that_do_not_broadcast_raise_numpys_error():
    with pytest.raises(ValueError):
        array_helpers._rowdot(np.ones((3, 2)), np.ones(4))


def test_numba_runs_the_step_as_numpy_does(tmp_path, monkeypatch):
    """Under backend="numba" the helper compiles (no fallback to NumPy code) and gives NumPy's values,
    gradients and tangents at every broadcast shape."""
    pytest.importorskip("numba")
    from coarsen_nb.numba_loader import NumbaFallbackWarning

    monkeypatch.setenv("COARSEN_NB_CACHE", str(tmp_path))      # Numba's disk cache: this test's own
    ref, f = cn.coarsen(softplus_rows), cn.coarsen(softplus_rows, backend="numba")
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumbaFallbackWarning)
        for shapes in SHAPES:
            args, t = _args(shapes, 0), _args(shapes, 1)
            assert_close(f(*args), ref(*args), rtol=1e-12, atol=1e-14, what=f"{shapes} value")
            for k, (a, b) in enumerate(zip(f.grad(*args), ref.grad(*args), strict=True)):
                assert_close(a, b, rtol=1e-12, atol=1e-14, what=f"{shapes} d/d{k}")
            assert_close(f.jvp(args, t)[1], ref.jvp(args, t)[1], rtol=1e-12, atol=1e-14, what=f"{shapes} jvp")


@pytest.mark.parametrize("selection", SELECTIONS, ids=SELECTION_IDS)
def test_the_step_is_array_api_code(selection):
    """Under ``array_api_strict`` (the standard's 2024.12 names only) the module gives the NumPy build's
    values, VJPs and tangents at every broadcast shape."""
    xps = pytest.importorskip("array_api_strict")
    from test_array_api import _check

    with xps.ArrayAPIStrictFlags(api_version="2024.12"):
        _check(softplus_rows, ["X", "w"], [_args(shapes, 0) for shapes in SHAPES], selection)


def test_shapes_that_do_not_broadcast_are_the_users_error_at_the_users_line():
    f = cn.coarsen(softplus_rows)
    for call in (f, f.grad):
        with pytest.raises(ValueError, match=r"could not be broadcast(.|\n)*np\.sum\(X \* w, axis=1\)"):
            call(np.ones((5, 3)), np.ones(4))
