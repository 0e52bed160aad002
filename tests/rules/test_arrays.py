"""The array functions of rules/arrays.py beyond the corpus (tests/corpus_arrays.py): what each
derivative rule must get right where finite differences on random inputs do not look.

* ``np.where`` and ``np.clip`` are lifted: they sit inside an SOI (no opaque step of theirs), and the arm
  not taken is never evaluated — ``np.where(x > 0, np.log(x), 0.0)`` gives no warning, NaN or inf in
  the value, gradient, VJP or JVP, under every selection, at x = 0 and x < 0.
* ``np.cumprod``'s rules are zero-safe: at one zero, two zeros, a zero first or last, the gradient and
  the JVP equal the products of the other elements, computed here by brute force (no division).
* the linear steps (cumsum, diff, roll, concatenate, stack, reshape, new axes) have the transposes of
  their matrices as VJPs: the Jacobian built column by column from NumPy itself.
* values that are arrays (``return np.cumsum(x)``) have a VJP for any cotangent and a JVP.
* the cost model counts every corpus entry, and the generated code runs under ``array_api_strict``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from corpus_arrays import ARRAYS
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn

SELECTIONS = {"default": {}, "L=1": {"max_soi": 1}, "per-block": {"per_block": True}}


def _compile(src: str, wrt: str, **selection):
    return cn.coarsen(src, wrt=tuple(wrt.split()), **selection)


# -- where and clip: lifted, fused, masked -------------------------------------------------------------

LOG_WHERE = "def f(x):\n    return np.sum(np.where(x > 0, np.log(x), 0.0) * x)\n"


@pytest.mark.parametrize("selection", list(SELECTIONS))
def test_untaken_log_arm_leaks_no_warning_nan_or_inf(selection):
    f = _compile(LOG_WHERE, "x", **SELECTIONS[selection])
    x = np.array([-1.0, 0.0, 0.5, 2.0, -3.0])
    taken = x > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value = f(x)
        grad = f.grad(x)
        _, pull = f.vjp(x)
        vjp = pull(2.0)
        _, tangent = f.jvp((x,), (np.ones(5),))
    safe = np.where(taken, x, 1.0)
    assert_close(value, np.sum(np.where(taken, np.log(safe), 0.0) * x), rtol=1e-14, what="value")
    want = np.where(taken, np.log(safe) + 1.0, 0.0)      # d/dx x log x = log x + 1 where taken, else 0
    assert_close(grad, want, rtol=1e-13, what="gradient")
    assert_close(vjp, 2.0 * want, rtol=1e-13, what="vjp")
    assert_close(tangent, np.sum(want), rtol=1e-13, what="jvp")


def test_where_value_is_numpys_where_numpys_is_finite():
    """NumPy evaluates both arms (warning for log of a negative); where its value is finite, it is ours."""
    src = "def f(x):\n    return np.where(x > 0, np.log(x), -x)\n"
    f = _compile(src, "x")
    x = np.array([-2.0, 0.25, 3.0])
    with np.errstate(all="ignore"):
        want = np.where(x > 0, np.log(x), -x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = f(x)
    assert_close(got, want, rtol=1e-15)


def test_where_and_clip_fuse_into_their_soi():
    """No opaque step of np.where, np.clip or the whole-array np.sum: each is a γ (the sum an ElemSum) inside
    the one SOI with the arithmetic around it, and its value and gradient are the plain function's."""
    src = "def f(x, lo):\n    y = np.clip(x, lo, 1.0) ** 2\n    return np.sum(np.where(y > 0.1, y * x, -x))\n"
    f = _compile(src, "x lo")
    x = np.linspace(-1.5, 1.5, 7) + 0.01
    gx, glo = f.grad(x, -0.5)
    plan = str(f.plan)
    assert "γ" in plan and "ElemSum" in plan and "prim" not in plan, plan
    assert "where(" not in plan and "clip(" not in plan, plan
    assert len(f.plan.kernels()) == 1     # clip, where, the arithmetic and the sum in one

    def plain(x, lo):
        y = np.clip(x, lo, 1.0) ** 2
        return np.sum(np.where(y > 0.1, y * x, -x))
    assert_close(f(x, -0.5), plain(x, -0.5), rtol=1e-14)
    assert_close(gx, finite_difference(plain, (x, -0.5), 0), rtol=1e-6, atol=1e-7)
    assert_close(glo, finite_difference(plain, (x, -0.5), 1), rtol=1e-6, atol=1e-7)


def test_where_of_a_bool_array_parameter_and_of_numbers():
    src = "def f(m, x, y):\n    return np.sum(np.where(m, x * y, 2.0 * y) + np.where(1.5, x, 0.0))\n"
    f = _compile(src, "x y")
    m = np.array([True, False, True])
    x, y = np.array([0.3, -0.7, 1.1]), np.array([2.0, 0.5, -1.0])
    assert_close(f(m, x, y), np.sum(np.where(m, x * y, 2.0 * y) + x), rtol=1e-14)
    gx, gy = f.grad(m, x, y)
    assert_close(gx, np.where(m, y, 0.0) + 1.0, rtol=1e-14)
    assert_close(gy, np.where(m, x, 2.0), rtol=1e-14)


def test_clip_with_array_bounds_and_crossed_bounds():
    """Array bounds broadcast; where lo > hi, NumPy's clip is hi, and so is the derivative's arm."""
    src = "def f(x, lo, hi):\n    return np.sum(np.clip(x, lo, hi) * x)\n"
    f = _compile(src, "x lo hi")
    x = np.array([-1.0, 0.2, 0.9, 0.5])
    lo = np.array([-0.5, -0.5, -0.5, 0.8])
    hi = 0.6                                  # the last element has lo > hi
    c = np.clip(x, lo, hi)
    assert_close(f(x, lo, hi), np.sum(c * x), rtol=1e-14)
    gx, glo, ghi = f.grad(x, lo, hi)
    assert_close(gx, c + x * ((x > lo) & (x < hi)), rtol=1e-14)
    assert_close(glo, x * ((x <= lo) & (lo < hi)), rtol=1e-14)
    assert_close(ghi, np.sum(x * (c == hi)), rtol=1e-14)


def test_clip_with_a_none_bound_is_maximum_or_minimum():
    """``np.clip(p, eps, None)`` (a floor for a log) and ``np.clip(x, None, hi)``, as NumPy defines them."""
    x = np.array([-0.5, 0.05, 0.3, 0.9])
    for src, want, grad in (
            ("def f(x):\n    return np.sum(np.log(np.clip(x, 0.1, None)))\n",
             np.sum(np.log(np.maximum(x, 0.1))), np.where(x > 0.1, 1.0 / x, 0.0)),
            ("def f(x):\n    return np.sum(np.clip(x, None, 0.5) * x)\n",
             np.sum(np.minimum(x, 0.5) * x), np.where(x < 0.5, 2.0 * x, 0.5))):
        f = _compile(src, "x")
        assert_close(f(x), want, rtol=1e-14)
        assert_close(f.grad(x), grad, rtol=1e-14)


# -- cumprod at zeros --------------------------------------------------------------------------------------


def _prod_except_jacobian(x):
    """J[j, i] = d cumprod(x)_j / d x_i = prod_{k <= j, k != i} x_k (i <= j): products, no division."""
    n = len(x)
    J = np.zeros((n, n))
    for j in range(n):
        for i in range(j + 1):
            J[j, i] = np.prod(np.delete(x[:j + 1], i))
    return J


@pytest.mark.parametrize("x", [
    [0.5, 2.0, 0.0, 3.0, 1.5],
    [0.0, 2.0, -1.0, 3.0],
    [1.5, 2.0, -1.0, 0.0],
    [2.0, 0.0, 3.0, 0.0, 4.0],
    [0.0, 0.0, 2.0],
    [1.2, -0.7, 2.5],
], ids=["one-zero", "zero-first", "zero-last", "two-zeros", "zeros-first", "no-zero"])
def test_cumprod_derivatives_at_zeros_are_the_products_of_the_others(x):
    x = np.array(x)
    w = np.arange(1.0, len(x) + 1.0)
    f = _compile("def f(x, w):\n    return np.sum(np.cumprod(x) * w)\n", "x")
    J = _prod_except_jacobian(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        grad = f.grad(x, w)
        d = np.linspace(-1.0, 1.0, len(x))
        _, tangent = f.jvp((x, w), (d,))
    assert_close(grad, w @ J, rtol=1e-13, atol=1e-15, what="gradient")
    assert_close(tangent, w @ (J @ d), rtol=1e-13, atol=1e-15, what="jvp")


def test_cumprod_along_an_axis_with_zeros():
    X = np.array([[1.5, 0.0, 2.0], [0.5, -1.0, 0.0], [0.0, 0.0, 3.0]])
    W = np.arange(9.0).reshape(3, 3)
    for axis in (0, 1):
        f = _compile(f"def f(X, W):\n    return np.sum(np.cumprod(X, axis={axis}) * W)\n", "X")
        want = np.zeros_like(X)
        for k in range(3):          # line by line along the axis: the 1-D Jacobian
            line = X[:, k] if axis == 0 else X[k]
            wl = W[:, k] if axis == 0 else W[k]
            g = wl @ _prod_except_jacobian(line)
            if axis == 0:
                want[:, k] = g
            else:
                want[k] = g
        assert_close(f.grad(X, W), want, rtol=1e-13, atol=1e-15, what=f"axis {axis}")


# -- the linear steps: VJP = transpose of the Jacobian --------------------------------------------------

LINEAR = {
    "cumsum": ("np.cumsum(x)", (5,)),
    "cumsum-axis1": ("np.cumsum(x, axis=1)", (3, 4)),
    "cumsum-axis-neg": ("np.cumsum(x, -2)", (3, 4)),
    "diff": ("np.diff(x)", (6,)),
    "diff-n0": ("np.diff(x, 0)", (4,)),
    "diff-n3": ("np.diff(x, n=3)", (7,)),
    "diff-axis0-n2": ("np.diff(x, n=2, axis=0)", (5, 3)),
    "roll": ("np.roll(x, 2)", (5,)),
    "roll-flat-2d": ("np.roll(x, -4)", (3, 4)),
    "roll-axis": ("np.roll(x, 1, axis=1)", (3, 4)),
    "roll-tuple": ("np.roll(x, (1, -2), axis=(0, 1))", (3, 4)),
    "concatenate": ("np.concatenate([x, 2.0 * x, x[1:]])", (4,)),
    "concatenate-axis1": ("np.concatenate((x, x[:, :1]), axis=1)", (3, 2)),
    "concatenate-axis-neg": ("np.concatenate([x, x ** 1], axis=-2)", (2, 3)),
    "stack": ("np.stack([x, 3.0 * x])", (4,)),
    "stack-axis1": ("np.stack((x, x), axis=1)", (4,)),
    "stack-2d-axis2": ("np.stack([x, -x], axis=2)", (2, 3)),
    "reshape": ("x.reshape(3, 2)", (6,)),
    "reshape-tuple": ("x.reshape((2, -1))", (2, 3)),
    "reshape-flat": ("np.reshape(x, -1)", (2, 3)),
    "reshape-len": ("x.reshape(len(x) // 2, 2)", (6,)),
    "newaxis-col": ("x[:, None]", (4,)),
    "newaxis-row": ("x[None, :]", (4,)),
    "newaxis-bare": ("x[None]", (4,)),
    "newaxis-two": ("x[None, :, None]", (4,)),
    "newaxis-dots": ("x[..., None]", (2, 3)),
    "newaxis-middle": ("x[:, np.newaxis, :]", (2, 3)),
    "newaxis-slice": ("x[1:, None]", (5,)),
    "newaxis-row-of-2d": ("x[1, None]", (2, 3)),
    "outer-self": ("np.outer(x, x[:2])", (3,)),
}


def _jacobian(expr: str, shape: tuple) -> tuple[np.ndarray, callable]:
    ns: dict = {"np": np}
    exec(f"def g(x):\n    return {expr}\n", ns)
    g = ns["g"]
    x0 = np.random.default_rng(7).normal(size=shape)
    y0 = g(x0)
    J = np.zeros((y0.size, x0.size))
    for k in range(x0.size):        # central differences: exact (up to rounding) for a linear or a
        e = np.zeros(x0.size)       # bilinear step (outer)
        e[k] = 1e-3
        J[:, k] = (g(x0 + e.reshape(shape)) - g(x0 - e.reshape(shape))).reshape(-1) / 2e-3
    return x0, y0, J


@pytest.mark.parametrize("case", list(LINEAR))
def test_vjp_and_jvp_of_an_array_value(case):
    """``return <step of x>``: the value is NumPy's, the VJP of a random cotangent is ȳ J and the JVP
    along a random direction is J ẋ, with J the Jacobian of NumPy's own function."""
    expr, shape = LINEAR[case]
    x0, y0, J = _jacobian(expr, shape)
    f = _compile(f"def f(x):\n    return {expr}\n", "x")
    assert_close(f(x0), y0, rtol=1e-15, what="value")
    rng = np.random.default_rng(3)
    bar = rng.normal(size=y0.shape)
    _, pull = f.vjp(x0)
    assert_close(pull(bar), (bar.reshape(-1) @ J).reshape(shape), rtol=1e-9, atol=1e-12, what="vjp")
    d = rng.normal(size=shape)
    _, tangent = f.jvp((x0,), (d,))
    assert_close(tangent, (J @ d.reshape(-1)).reshape(y0.shape), rtol=1e-9, atol=1e-12, what="jvp")


def test_linspace_ends_are_differentiable_and_n_may_be_one():
    f = _compile("def f(a, b, n, w):\n    return np.sum(np.linspace(a, b, n) * w)\n", "a b")
    for n in (1, 2, 5):
        w = np.arange(1.0, n + 1.0)
        t = np.linspace(0.0, 1.0, n)
        assert_close(f(0.5, 2.0, n, w), np.sum(np.linspace(0.5, 2.0, n) * w), rtol=1e-15)
        ga, gb = f.grad(0.5, 2.0, n, w)
        assert_close(ga, np.sum(w * (1.0 - t)), rtol=1e-14, what=f"n={n} d/da")
        assert_close(gb, np.sum(w * t), rtol=1e-14, what=f"n={n} d/db")


def test_arange_is_an_int_grid_without_derivative():
    src = "def f(x, n):\n    k = np.arange(n)\n    return np.sum(x[:n] * k) + np.sum(np.arange(2, 5) * x[:3])\n"
    f = _compile(src, "x")
    x = np.array([0.5, -1.0, 2.0, 3.0])
    assert_close(f(x, 3), np.sum(x[:3] * np.arange(3)) + np.sum(np.arange(2, 5) * x[:3]), rtol=1e-15)
    assert_close(f.grad(x, 3), np.array([2.0, 4.0, 6.0, 0.0]), rtol=1e-15)


# -- the cost model and the array API ------------------------------------------------------------------


@pytest.mark.parametrize("entry", ARRAYS, ids=[e.name for e in ARRAYS])
def test_cost_counts_every_array_entry(entry):
    f = cn.coarsen(entry.fn, wrt=entry.wrt)
    f.grad(*entry.make_args(np.random.default_rng(0)))
    cost = f.cost
    assert cost.forward_ops > 0 and cost.derivative_ops > 0 and cost.allocations > 0
    assert cost.sois == len(f.plan.kernels())


#: The entries whose functions the array API standard has (np.convolve and np.correlate are NumPy's and
#: CuPy's, not the standard's: their generated code needs one of those two).
_STANDARD = [e for e in ARRAYS if not e.tags & {"convolve", "correlate"}]


@pytest.mark.parametrize("entry", _STANDARD, ids=[e.name for e in _STANDARD])
def test_generated_code_runs_under_the_array_api_standard(entry):
    pytest.importorskip("array_api_strict")
    import array_api_strict as xps
    from lower.test_array_api import _check

    with xps.ArrayAPIStrictFlags(api_version="2024.12"):
        _check(entry.fn, entry.wrt, [entry.make_args(np.random.default_rng(s)) for s in (0, 1)], {})


def test_cost_of_pairwise_differences_grows_with_the_square():
    """``x[:, None] - x[None, :]`` is n² elements: the cost model sees the new axes' shapes."""
    src = "def f(x):\n    d = x[:, None] - x[None, :]\n    return np.sum(np.exp(-d ** 2))\n"
    ops = []
    for n in (8, 16):
        f = _compile(src, "x")
        f.grad(np.linspace(0.0, 1.0, n))
        ops.append(f.cost.forward_ops)
    assert 3.5 < ops[1] / ops[0] < 4.5, ops


def test_cost_sizes_of_stack_and_linspace():
    """``np.stack`` of three n-vectors is 3n elements, ``np.linspace(0, a, 50)`` fifty (not a number)."""
    f = _compile("def f(x):\n    s = np.stack([x, x, x], axis=1)\n    return np.sum(s * 2.0)\n", "x")
    f.grad(np.linspace(0.0, 1.0, 10))
    assert f.cost.forward_ops >= 30, f.cost
    f = _compile("def f(x, a):\n    t = np.linspace(0.0, a, 50)\n    return np.sum(t * 4.0 * x[0])\n", "x a")
    f.grad(np.linspace(0.0, 1.0, 10), 2.0)
    assert f.cost.forward_ops >= 100, f.cost


def test_where_with_a_condition_of_fewer_axes_than_its_arms():
    """``np.where(x[:, None] > 0, ...)`` of (n, m) arms: the mask is broadcast before its points are
    numbered (it was numbered over the (n, 1) condition, and the rest of the buffer read uninitialized)."""
    src = "def f(x, A):\n    return np.sum(np.where(x[:, None] > 0, np.log(A), A * A) * A)\n"
    f = _compile(src, "x A")
    x = np.array([-0.5, 0.3, 0.8, -1.2])
    A = np.arange(1.0, 13.0).reshape(4, 3) / 5
    on = np.broadcast_to(x[:, None] > 0, A.shape)
    assert_close(f(x, A), np.sum(np.where(on, np.log(A), A * A) * A), rtol=1e-14)
    gx, gA = f.grad(x, A)
    assert_close(gx, np.zeros(4), atol=0.0)
    assert_close(gA, np.where(on, np.log(A) + 1.0, 3.0 * A * A), rtol=1e-13)
