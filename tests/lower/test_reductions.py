"""The reductions over axes beyond the corpus (issue 15): where a derivative does not exist (a norm or a
standard deviation at 0; ties of max and min), the method forms against the functions, the whole-array
code kept as it was, and the cost model against the generated code run instrumented on every corpus entry.

References are independent of the compiler: the plain function, central finite differences, formulas
written here with NumPy, ``np.argmax``/``np.argmin`` for NumPy's tie rule.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from corpus_reductions import REDUCTIONS
from gradcheck import assert_close, finite_difference
from measure import measure

import coarsen_nb as cn
from coarsen_nb.lower.cost import estimate


def _compile(src: str, **options):
    return cn.coarsen("import numpy as np\n\n\n" + src, name="f", **options)


# -- where the derivative does not exist ------------------------------------------------------------------


def test_norm_at_zero_has_the_zero_subgradient():
    """``||x||`` at ``x = 0``: NumPy's formula x / ||x|| is 0/0 (NaN); the compiled gradient and tangent are
    0 there (the least-norm subgradient), in that row only: the other rows keep x / ||x||."""
    f = _compile("def f(X, w):\n    return np.sum(np.linalg.norm(X, axis=1) * w) + np.linalg.norm(X[0])\n")
    X = np.array([[0.0, 0.0, 0.0], [3.0, -4.0, 12.0], [1.0, 2.0, 2.0]])
    w = np.array([2.0, 1.0, -1.0])
    with np.errstate(invalid="ignore"):
        naive = X / np.linalg.norm(X, axis=1, keepdims=True)
    assert np.isnan(naive[0]).all()
    want = np.where(np.isnan(naive), 0.0, naive) * w[:, None]
    gX, gw = f.grad(X, w)
    assert np.isfinite(gX).all()
    assert_close(gX, want, rtol=1e-14, atol=0.0, what="d/dX at a zero row")
    assert_close(gw, np.linalg.norm(X, axis=1), rtol=1e-14, atol=0.0, what="d/dw")
    dX = np.random.default_rng(0).normal(size=X.shape)
    assert_close(f.jvp((X, w), (dX, np.zeros(3)))[1], np.sum(want * dX), rtol=1e-12, atol=1e-14, what="jvp")
    g = _compile("def f(x):\n    return np.linalg.norm(x)\n")
    assert_close(g.grad(np.zeros(4)), np.zeros(4), rtol=0.0, atol=0.0, what="whole-array norm at 0")
    assert g.jvp((np.zeros(4),), (np.ones(4),))[1] == 0.0


def test_std_of_a_constant_slice_has_the_zero_subgradient():
    """``std`` of a constant column: 0/0 in the formula c / ((n - ddof) std); the compiled gradient is 0 in
    that column and finite differences elsewhere.  ``var`` there is smooth: its gradient is the formula's 0."""
    f = _compile("def f(X, w):\n    return np.sum(X.std(axis=0, ddof=1) * w) + np.sum(np.var(X, axis=0))\n")
    rng = np.random.default_rng(1)
    X = rng.uniform(-1.0, 1.0, size=(5, 3))
    X[:, 1] = 0.75
    w = np.array([1.0, 2.0, -0.5])
    gX, _ = f.grad(X, w)
    assert np.isfinite(gX).all()
    assert (gX[:, 1] == 0.0).all()
    fd = finite_difference(lambda X, w: np.sum(X.std(axis=0, ddof=1) * w) + np.sum(np.var(X, axis=0)), (X, w), 0)
    assert_close(gX[:, [0, 2]], fd[:, [0, 2]], rtol=1e-6, atol=1e-7, what="the other columns")
    g = _compile("def f(x):\n    return np.std(x) + x.var(ddof=1)\n")
    assert_close(g.grad(np.full(4, -2.0)), np.zeros(4), rtol=0.0, atol=0.0, what="whole-array std at a constant")


@pytest.mark.parametrize("fn, arg", [("max", np.argmax), ("min", np.argmin)])
def test_ties_along_an_axis_go_to_the_first_extremum(fn, arg):
    """Ties of ``max``/``min`` over an axis: the whole cotangent goes to the element NumPy's arg-extremum picks
    (the first), row by row, in the gradient and in the tangent."""
    f = _compile(f"def f(X, w):\n    return np.sum(np.{fn}(X, axis=1) * w)\n")
    X = np.array([[1.0, 3.0, 3.0, -1.0], [2.0, 2.0, 2.0, 2.0], [-1.0, -1.0, 0.5, -1.0]])
    w = np.array([1.0, 2.0, 3.0])
    want = np.zeros_like(X)
    want[np.arange(3), arg(X, axis=1)] = w
    gX, _ = f.grad(X, w)
    np.testing.assert_array_equal(gX, want)
    dX = np.random.default_rng(2).normal(size=X.shape)
    assert_close(f.jvp((X, w), (dX, np.zeros(3)))[1], np.sum(want * dX), rtol=1e-14, atol=1e-15, what="jvp")


def test_ties_over_several_axes_go_to_the_first_in_c_order():
    """Over ``axis=(0, 2)`` of a 3-D array: the first extremum in C order over the reduced axes, that is
    ``np.argmax`` of the array with those axes moved last and merged."""
    f = _compile("def f(T, w):\n    return np.sum(np.max(T, axis=(0, 2)) * w)\n")
    T = np.zeros((2, 3, 2))
    T[1, 0, 0] = T[0, 0, 1] = 1.0          # ties in slice 0: (0, 1) comes first in C order
    T[:, 2, :] = -1.0                      # slice 2: all tied
    w = np.array([1.0, 2.0, 3.0])
    merged = np.reshape(np.moveaxis(T, 1, 0), (3, -1))
    want = np.zeros((3, 4))
    want[np.arange(3), np.argmax(merged, axis=1)] = w
    want = np.moveaxis(np.reshape(want, (3, 2, 2)), 0, 1)
    assert want[0, 0, 1] == 1.0 and want[1, 0, 0] == 0.0
    np.testing.assert_array_equal(f.grad(T, w)[0], want)


@pytest.mark.parametrize("selection", [{}, {"max_soi": 1}, {"per_block": True}], ids=["default", "L=1", "per-block"])
@pytest.mark.parametrize("src", [
    # a (k,) column sum passed on beside exp(X - m), (n, k), in one SOI
    "def f(X):\n    m = np.sum(X, axis=0)\n    a = np.exp(X - m)\n    return np.sum(m * m) + np.sum(a)\n",
    # the log-sum-exp of rows with its (n, 1) maximum, and that maximum passed on
    "def f(X):\n    m = np.max(X, axis=1, keepdims=True)\n    lse = m + np.log(np.sum(np.exp(X - m), axis=1, "
    "keepdims=True))\n    R = np.exp(X - lse)\n    return np.sum(lse) + np.sum(R * R)\n",
    # an (n, 1) temp read by an (n, 1) output and an (n, k) one
    "def f(X):\n    t = np.sum(X, axis=1, keepdims=True) + 1.0\n    u = t * 2.0\n    w = t * X\n"
    "    return np.sum(u * u) + np.sum(w * w)\n",
], ids=["sum-passed-on", "lse-rows", "shared-temp"])
def test_outputs_of_different_shapes_in_one_soi(src, selection):
    """An SOI whose outputs have different shapes (a reduced value passed on beside a broadcast one): each
    output's part of an adjoint is summed to the input's shape on its own (finite differences)."""
    f = _compile(src, **selection)
    ns: dict = {"np": np}
    exec(src, ns)
    X = np.random.default_rng(5).normal(size=(4, 3))
    assert_close(f.grad(X), finite_difference(ns["f"], (X,), 0), rtol=1e-6, atol=1e-7, what="d/dX")


@pytest.mark.parametrize("call", ["np.mean(X, keepdims=True)", "np.max(X, keepdims=True)", "X.prod(keepdims=True)",
                                  "np.linalg.norm(X, keepdims=True)", "np.std(X, keepdims=True, ddof=1)",
                                  "np.var(X, axis=(0, 1), keepdims=True)", "np.min(X, axis=(1, 0))"])
def test_the_whole_array_with_keepdims(call):
    """Over every axis with ``keepdims=True`` (a (1, 1) array), or every axis named: the value NumPy gives,
    the gradient of finite differences."""
    src = f"def f(X, W):\n    return np.sum({call} * W)\n"
    ns: dict = {"np": np}
    exec(src, ns)
    f = _compile(src)
    rng = np.random.default_rng(6)
    X = rng.permutation(np.linspace(0.5, 1.5, 12)).reshape(3, 4)
    W = rng.uniform(-1.0, 1.0, size=(3, 4))
    assert_close(f(X, W), ns["f"](X, W), rtol=1e-13, atol=0.0, what="value")
    for k, g in enumerate(f.grad(X, W)):
        assert_close(g, finite_difference(ns["f"], (X, W), k), rtol=1e-6, atol=1e-7, what=f"d/d{'XW'[k]}")


def test_prod_over_an_axis_with_zeros():
    """``np.prod(X, axis=1)`` where a row holds one zero or two: the products of the other elements (no
    division by the zero), as finite differences of the polynomial give."""
    src = "def f(X, w):\n    return np.sum(np.prod(X, axis=1) * w) + np.sum(np.prod(X, axis=(0, 1), keepdims=True))\n"
    ns: dict = {"np": np}
    exec(src, ns)
    f = _compile(src)
    X = np.array([[0.0, 2.0, 3.0], [1.5, 0.0, 0.0], [0.5, -1.0, 2.0]])
    w = np.array([1.0, -2.0, 0.5])
    gX, _ = f.grad(X, w)
    assert_close(gX, finite_difference(ns["f"], (X, w), 0), rtol=1e-6, atol=1e-7, what="d/dX")
    assert gX[0, 0] == 6.0 and gX[1, 0] == 0.0 and gX[1, 1] == 0.0


# -- the forms that mean the same ------------------------------------------------------------------------


def test_methods_are_the_np_functions_over_axes():
    """``X.mean(axis=0)``, ``X.max(1, True)``, ``X.prod(0)``, ``X.std(ddof=1)``, ``X.var(axis=-1)`` compile to
    the code of the functions they stand for."""
    methods = ("def f(X):\n    return np.sum(X.mean(axis=0)) + np.sum(X.max(1, True) * X) + np.sum(X.prod(0))"
               " + X.std(ddof=1) + np.sum(X.var(axis=-1)) + np.sum(X.min(axis=0, keepdims=True))\n")
    functions = ("def f(X):\n    return np.sum(np.mean(X, axis=0)) + np.sum(np.max(X, 1, True) * X) + "
                 "np.sum(np.prod(X, 0)) + np.std(X, ddof=1) + np.sum(np.var(X, axis=-1)) + "
                 "np.sum(np.amin(X, axis=0, keepdims=True))\n")
    X = np.random.default_rng(3).uniform(0.5, 1.5, size=(4, 3))
    f, g = _compile(methods), _compile(functions)
    assert f(X) == g(X)
    np.testing.assert_array_equal(f.grad(X), g.grad(X))
    assert f.source == g.source


def test_the_whole_array_code_is_kept():
    """A reduction over the whole array to a scalar prints the code it always did (no axis helpers), and
    ``np.mean`` / ``np.std`` of an expression keep their value and gradient."""
    f = _compile("def f(x, y):\n    return np.mean(np.exp(x) * y) + np.prod(x) + np.max(x) - np.min(y) + "
                 "np.std(x * y) + np.sum(x, axis=None)\n")
    rng = np.random.default_rng(4)
    x, y = rng.uniform(0.5, 1.5, size=5), rng.uniform(-1.0, 1.0, size=5)
    for k, g in enumerate(f.grad(x, y)):
        fd = finite_difference(lambda x, y: np.mean(np.exp(x) * y) + np.prod(x) + np.max(x) - np.min(y) +
                               np.std(x * y) + np.sum(x), (x, y), k)
        assert_close(g, fd, rtol=1e-6, atol=1e-7, what=f"d/d{'xy'[k]}")
    for helper in ("_prod_except_axes", "_first_extremum", "keepdims", "axis="):
        assert helper not in f.source.split("def f(")[1].split("def f_vjp")[0], helper
    assert "_prod_except(x)" in f.source and "xp.argmax(x)" in f.source


# -- the cost model -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("entry", REDUCTIONS, ids=[e.name for e in REDUCTIONS])
def test_cost_model_counts_the_generated_code(entry):
    """``f.cost`` of every corpus entry, against the generated VJP run instrumented (``tests/lower/measure.py``):
    operations and allocations within 10%, as for the kernels (``test_cost.py``)."""
    args = entry.make_args(np.random.default_rng(0))
    f = cn.coarsen(entry.fn, wrt=entry.wrt)
    f.grad(*args)
    assert f.cost.forward_ops > 0
    counts = measure(f.source, f.name, args)
    cost = estimate(f.plan, f.wrt, tuple(np.shape(a) for a in args))
    for what, model, seen in (("forward", cost.forward_ops, counts.ops[0]),
                              ("derivative", cost.derivative_ops, counts.ops[1]),
                              ("allocations", cost.allocations, counts.allocations)):
        assert abs(model - seen) <= 0.10 * max(seen, 1), f"{entry.name} {what}: model {model}, measured {seen}"


@pytest.mark.parametrize("fn", ["sum", "mean", "prod", "max", "min"])
def test_reduction_of_a_number_is_the_number(fn):
    """``np.sum(np.sin(x))`` of a float ``x``: NumPy's value, its gradient and tangent those of the number
    (the JVP printed ``zeros(float.shape)`` before, an internal error)."""
    src = f"import numpy as np\n\n\ndef f(x):\n    return np.{fn}(np.sin(x) * 2.0) + np.{fn}(x * x)\n"
    namespace: dict = {}
    exec(src, namespace)
    plain = namespace["f"]
    f = cn.coarsen(src, name="f")
    x = 0.3
    want = 2.0 * math.cos(x) + 2.0 * x
    assert abs(f(x) - plain(x)) < 1e-12
    assert abs(f.grad(x) - want) < 1e-12
    assert abs(f.jvp((x,), (1.0,))[1] - want) < 1e-12
