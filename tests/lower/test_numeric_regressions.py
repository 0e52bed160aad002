"""Numerical regressions of issue 12, each test named after what broke.

Every case runs under the three selections a user can ask for (the default,
``max_soi=1`` and ``per_block=True``) with warnings raised as errors: a case that
only works by falling back to a finer selection, or that leaks a NumPy warning,
fails here.  The oracles are the plain function run by Python, central finite
differences and, where a derivative is infinite, JAX.
"""

from __future__ import annotations

import math
import subprocess
import sys
import warnings

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn

SELECTIONS = [{}, {"max_soi": 1}, {"per_block": True}]


def _python(src: str):
    """The plain function of ``src``, as Python runs it (the oracle)."""
    ns = {"math": math, "np": np}
    exec(src, ns)
    return next(v for k, v in ns.items() if callable(v) and k not in ("math", "np"))


def _compiled(src: str, options: dict, wrt=None):
    return cn.coarsen(src, wrt=wrt, **options)


def _strict(fn, *args):
    """``fn(*args)`` with every warning an error (a fallback warning, a NumPy overflow)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args)


# -- 5: the adjoint of a broadcast operand is summed over the broadcast axes -------------------

_BROADCAST_SOURCES = {
    "add": "def f(a, b):\n    return np.sum(np.tanh(a + b))\n",
    "mul": "def f(a, b):\n    return np.sum(a * b)\n",
    "both": "def f(a, b):\n    return np.sum(np.sin(a) * np.exp(b) + a * a * b)\n",
    # branches over the broadcast points: a where of cheap arms, and masked arms (sin, exp)
    "maximum": "def f(a, b):\n    return np.sum(np.maximum(a, b) * a)\n",
    "masked_arms": "def f(a, b):\n    return np.sum(np.maximum(np.sin(a) * b, np.exp(b)))\n",
}

_BROADCAST_SHAPES = [((), (3,)), ((3,), ()), ((4, 3), (3,)), ((3,), (4, 3)), ((4, 3), (1, 3)),
                     ((4, 1), (1, 3)), ((4, 1), (3,)), ((4, 3), (4, 1)), ((1,), (4, 3)), ((2, 4, 3), (4, 1))]


@pytest.mark.parametrize("options", SELECTIONS, ids=["default", "L1", "per_block"])
@pytest.mark.parametrize("shapes", _BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("op", sorted(_BROADCAST_SOURCES))
def test_adjoint_of_a_broadcast_operand_is_summed_to_its_shape(op, shapes, options):
    src = _BROADCAST_SOURCES[op]
    rng = np.random.default_rng(5)
    args = tuple(rng.normal(size=s) if s else 0.3 for s in shapes)
    f = _compiled(src, options)
    grads = _strict(f.grad, *args)
    for i in range(2):
        assert_close(grads[i], finite_difference(_python(src), args, i), rtol=1e-5, atol=1e-6, what=f"arg {i}")


@pytest.mark.parametrize("options", SELECTIONS, ids=["default", "L1", "per_block"])
def test_bias_broadcast_over_the_rows_of_a_matrix_product(options):
    src = "def f(W, b, X):\n    return np.sum(np.tanh(X @ W + b))\n"
    rng = np.random.default_rng(0)
    args = (0.1 * np.ones((3, 4)), rng.normal(size=4), rng.normal(size=(10, 3)))
    f = _compiled(src, options)
    grads = _strict(f.grad, *args)
    for i in range(3):
        assert_close(grads[i], finite_difference(_python(src), args, i), rtol=1e-5, atol=1e-6, what=f"arg {i}")


@pytest.mark.parametrize("options", SELECTIONS, ids=["default", "L1", "per_block"])
def test_pullback_of_an_array_result_sums_a_broadcast_cotangent_to_each_operand(options):
    src = "def f(a, b):\n    return np.sin(a) * b + b\n"
    rng = np.random.default_rng(7)
    a, b, g = rng.normal(size=(4, 1)), rng.normal(size=(1, 3)), rng.normal(size=(4, 3))
    py = _python(src)

    def along_g(*args):     # the cotangent's inner product with f: its gradient is the pullback of g
        return float(np.sum(g * py(*args)))

    value, pullback = _strict(_compiled(src, options).vjp, a, b)
    assert_close(value, py(a, b))
    grads = _strict(pullback, g)
    for i in range(2):
        assert_close(grads[i], finite_difference(along_g, (a, b), i), rtol=1e-5, atol=1e-6, what=f"arg {i}")


# -- 14: log(1 + exp(z)) is the guarded softplus, on scalars and arrays, at every selection ------

def _softplus_reference(z):
    """log(1 + exp(z)) and its derivative, the sigmoid, evaluated so that neither overflows."""
    z = np.asarray(z, dtype=float)
    return np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z))), 0.5 * (1.0 + np.tanh(0.5 * z))


_SOFTPLUS_SOURCES = [
    "def f(z):\n    return math.log(1.0 + math.exp(z))\n",
    "def f(z):\n    return math.log(math.exp(z) + 1)\n",
    "def f(z):\n    return math.log1p(math.exp(z))\n",
]


@pytest.mark.parametrize("options", SELECTIONS, ids=["default", "L1", "per_block"])
@pytest.mark.parametrize("src", _SOFTPLUS_SOURCES, ids=["1.0+exp", "exp+1", "log1p"])
def test_scalar_softplus_does_not_overflow(src, options):
    f = _compiled(src, options)
    for z in (800.0, -800.0, 0.0, 3.0):
        want, dwant = _softplus_reference(z)
        value, grad = _strict(f.value_and_grad, z)
        assert_close(value, want, what=f"value at {z}")
        assert_close(grad, dwant, what=f"gradient at {z}")
        assert_close(_strict(f, z), want, what=f"forward at {z}")


@pytest.mark.parametrize("options", SELECTIONS, ids=["default", "L1", "per_block"])
def test_softplus_whose_sum_is_its_own_line_is_guarded(options):
    src = "def f(z):\n    t = 1.0 + math.exp(z)\n    return 2.0 * math.log(t)\n"
    f = _compiled(src, options)
    for z in ((-800.0, 0.0, 3.0) if options.get("max_soi") == 1 else (800.0, -800.0, 0.0, 3.0)):
        # (at L = 1 every statement is its own operation, and exp(800) overflows as in Python)
        want, dwant = _softplus_reference(z)
        value, grad = _strict(f.value_and_grad, z)
        assert_close(value, 2 * want, what=f"value at {z}")
        assert_close(grad, 2 * dwant, what=f"gradient at {z}")


@pytest.mark.parametrize("options", SELECTIONS, ids=["default", "L1", "per_block"])
def test_array_softplus_does_not_overflow(options):
    src = "def f(z):\n    return np.sum(np.log(1.0 + np.exp(z)))\n"
    z = np.array([800.0, -800.0, 0.0, 3.0])
    want, dwant = _softplus_reference(z)
    value, grad = _strict(_compiled(src, options).value_and_grad, z)
    assert_close(value, np.sum(want))
    assert_close(grad, dwant)


# -- 12: //, %, floor, ceil, round and int compile, with Python's values -----------------------

_ROUNDING_SCALAR = [
    "def f(x, y):\n    return x // y + x\n",
    "def f(x, y):\n    return x % y * x\n",
    "def f(x, y):\n    return (x // 2.0) * y + x % 2.0\n",
    "def f(x, y):\n    return math.floor(x) * y + math.ceil(y) * x\n",
    "def f(x, y):\n    return round(x) * y + int(y) * x\n",
]
# away from the jumps (the derivative there is one-sided); negative operands on both sides
_ROUNDING_POINTS = [(-3.3, 2.1), (3.3, -1.7), (7.25, 0.6), (-0.4, -2.2), (2.6, 1.45)]


@pytest.mark.parametrize("options", SELECTIONS, ids=["default", "L1", "per_block"])
@pytest.mark.parametrize("src", _ROUNDING_SCALAR, ids=["floordiv", "mod", "by_constant", "floor_ceil", "round_int"])
def test_floor_division_modulo_and_rounding_compile_with_pythons_values(src, options):
    py = _python(src)
    f = _compiled(src, options)
    for x, y in _ROUNDING_POINTS:
        assert _strict(f, x, y) == py(x, y), (x, y)
        grads = _strict(f.grad, x, y)
        for i in range(2):
            assert_close(grads[i], finite_difference(py, (x, y), i), what=f"arg {i} at {(x, y)}")


def test_floor_division_of_floats_is_pythons_not_floor_of_the_quotient():
    # 1 // 0.1 == 9.0 in Python (the exact quotient is just under 10); floor(1 / 0.1) == 10
    src = "def f(x, y):\n    return x // y + x % y\n"
    f = _compiled(src, {})
    assert _strict(f, 1.0, 0.1) == _python(src)(1.0, 0.1)
    assert _strict(f, -3.5, 2.0) == -2.0 + 0.5


_ROUNDING_ARRAYS = [
    "def f(x):\n    return np.sum(x % 2.0 + (x // 2.0) * x)\n",
    "def f(x):\n    return np.sum(np.mod(x, 1.5) * x + np.floor_divide(x, 0.7))\n",
    "def f(x):\n    return np.sum(np.floor(x) * x + np.ceil(x) * x * x + np.round(x))\n",
    "def f(x):\n    s = 0.0\n    for i in range(len(x)):\n        s += x[i] % 1.5 + math.floor(x[i]) * x[i]\n"
    "    return s\n",
]


@pytest.mark.parametrize("options", SELECTIONS, ids=["default", "L1", "per_block"])
@pytest.mark.parametrize("src", _ROUNDING_ARRAYS, ids=["operators", "np_mod_floor_divide", "np_floor_ceil_round",
                                                        "loop"])
def test_rounding_of_arrays_compiles_with_numpys_values(src, options):
    x = np.array([-3.6, 2.2, 0.3, -0.45, 5.9])     # away from the jumps of every form below
    py = _python(src)
    f = _compiled(src, options)
    assert_close(_strict(f, x), py(x), rtol=1e-12)
    assert_close(_strict(f.grad, x), finite_difference(py, (x,), 0))


# -- 11: a constant outside a function's domain, on a branch not taken, compiles ----------------

_OUTSIDE_DOMAIN = [
    "def f(a):\n    if a > 5.0:\n        return math.log(-2.0) * a\n    return a * a\n",
    "def f(a):\n    if a > 5.0:\n        return math.log(0.0) + math.asin(2.0) * a\n    return a * a\n",
    "def f(a):\n    return a * a if a < 5.0 else math.sqrt(-1.0) * a\n",
    "def f(a):\n    if a > 5.0:\n        return a * math.exp(1000.0)\n    return a * a\n",
    "def f(a):\n    return a * a if a < 5.0 else a * 10.0 ** 400.0\n",
    "def f(a):\n    return a * a if a < 5.0 else a * 0.0 ** -1.0\n",
]


def _raises_like_python(fn, py, *args):
    """``fn(*args)`` raises what Python's own run raises (ValueError: math domain error, OverflowError,
    ZeroDivisionError), with Python's message (the runtime may add the source line to it)."""
    with pytest.raises((ArithmeticError, ValueError)) as want:
        py(*args)
    with pytest.raises(type(want.value)) as got:
        _strict(fn, *args)
    assert str(want.value) in str(got.value)


@pytest.mark.parametrize("options", SELECTIONS, ids=["default", "L1", "per_block"])
@pytest.mark.parametrize("src", _OUTSIDE_DOMAIN, ids=["log_negative", "log_zero_asin_two", "sqrt_negative",
                                                   "exp_overflows", "power_overflows", "zero_to_minus_one"])
def test_constant_outside_the_domain_on_a_branch_not_taken_compiles(src, options):
    py = _python(src)
    f = _compiled(src, options)
    assert _strict(f, 1.5) == py(1.5)
    assert_close(_strict(f.grad, 1.5), finite_difference(py, (1.5,), 0))
    _raises_like_python(f, py, 6.0)                   # the branch taken: Python's math domain error
    _raises_like_python(lambda a: f.value_and_grad(a), py, 6.0)


def test_constants_multiplied_out_past_the_float_range_are_a_clear_error():
    # SymPy folds 1e300 * 1e300 into one number that no float holds; in Python's order a * 1e300 * 1e300
    # is finite for a = 1e-300, so the generated code must not print inf (it printed 'inf': NameError)
    src = "def f(a):\n    return a * 1e300 * 1e300\n"
    with pytest.raises(cn.CoarsenError, match="beyond the float range"):
        _strict(_compiled(src, {}), 1e-300)
    assert _strict(_compiled(src, {"max_soi": 1}), 1e-300) == _python(src)(1e-300)     # one operation each


@pytest.mark.parametrize("options", SELECTIONS, ids=["default", "L1", "per_block"])
def test_constant_outside_the_domain_in_a_loop_branch_compiles(options):
    src = ("def f(x):\n    s = 0.0\n    for i in range(len(x)):\n        if x[i] > 5.0:\n"
           "            s += math.log(-2.0) * x[i]\n        else:\n            s += x[i] * x[i]\n    return s\n")
    py = _python(src)
    f = _compiled(src, options)
    x = np.array([1.0, 2.0, -0.5])
    assert_close(_strict(f, x), py(x))
    assert_close(_strict(f.grad, x), finite_difference(py, (x,), 0))
    _raises_like_python(f, py, np.array([1.0, 6.0]))


# -- 13: log-sum-exp written with arrays is max-shifted, wherever it is written ------------------

def _logsumexp_reference(g, c=0.0):
    """log(c + Σ exp(g)) and its gradient exp(g - L), shifted by m = max(max g, log c)."""
    m = max(float(np.max(g)), math.log(c) if c > 0 else -math.inf)
    total = math.fsum(np.exp(g - m)) + (c * math.exp(-m) if c > 0 else 0.0)
    lse = m + math.log(total)
    return lse, np.exp(g - lse)


_ARRAY_LSE = {
    "plain": ("def f(x):\n    return np.log(np.sum(np.exp(x)))\n", lambda x: _logsumexp_reference(x)),
    "plus_one": ("def f(x):\n    return np.log(1.0 + np.sum(np.exp(x)))\n", lambda x: _logsumexp_reference(x, 1.0)),
    "plus_constant": ("def f(x):\n    return np.log(np.sum(np.exp(x)) + 2.5)\n",
                      lambda x: _logsumexp_reference(x, 2.5)),
    "scaled_argument": ("def f(x):\n    return 3.0 * np.log(np.sum(np.exp(2.0 * x - 1.0))) + 1.0\n",
                        lambda x: (3.0 * _logsumexp_reference(2.0 * x - 1.0)[0] + 1.0,
                                   6.0 * _logsumexp_reference(2.0 * x - 1.0)[1])),
    "own_lines": ("def f(x):\n    e = np.exp(x)\n    s = np.sum(e)\n    return np.log(s)\n",
                  lambda x: _logsumexp_reference(x)),
    # the user's own max shift: stable as written, not shifted again (one maximum, not two)
    "shifted_by_the_user": ("def f(x):\n    m = np.max(x)\n    return m + np.log(np.sum(np.exp(x - m)))\n",
                            lambda x: _logsumexp_reference(x)),
    "shifted_by_the_user_own_lines": ("def f(x):\n    m = np.max(x)\n    d = x - m\n    s = np.sum(np.exp(d))\n"
                                      "    return np.log(s) + m\n", lambda x: _logsumexp_reference(x)),
}


@pytest.mark.parametrize("options", SELECTIONS, ids=["default", "L1", "per_block"])
@pytest.mark.parametrize("form", sorted(_ARRAY_LSE))
def test_array_logsumexp_is_max_shifted(form, options):
    src, reference = _ARRAY_LSE[form]
    f = _compiled(src, options)
    for x in (np.array([1000.0, 1001.0]), np.array([-1000.0, -1001.0, -999.0]), np.array([0.3, -0.2, 1.1])):
        want, dwant = reference(x)
        value, grad = _strict(f.value_and_grad, x)
        assert_close(value, want, rtol=1e-12, what=f"value at {x}")
        assert_close(grad, dwant, rtol=1e-9, atol=1e-300, what=f"gradient at {x}")
        assert_close(_strict(f, x), want, rtol=1e-12, what=f"forward at {x}")


@pytest.mark.parametrize("options", SELECTIONS, ids=["default", "L1", "per_block"])
def test_a_logsumexp_the_user_shifted_is_not_shifted_again(options):
    f = _compiled(_ARRAY_LSE["shifted_by_the_user"][0], options)
    f.grad(np.array([0.3, -0.2]))
    vjp = f.source.split("def f_vjp", 1)[1].split("\ndef ", 1)[0]
    assert vjp.count("xp.max(") == 1 and vjp.count("argmax") == 1


@pytest.mark.parametrize("options", SELECTIONS, ids=["default", "L1", "per_block"])
def test_a_shift_by_another_arrays_maximum_is_still_shifted(options):
    # exp(x - max(y)) is not the user's own shift of x: without ours it overflows at x = 1000
    f = _compiled("def f(x, y):\n    m = np.max(y)\n    return np.log(np.sum(np.exp(x - m)))\n", options)
    x, y = np.array([1000.0, 1001.0]), np.array([0.0, -1.0])
    want, dwant = _logsumexp_reference(x)
    value, (gx, gy) = _strict(f.value_and_grad, x, y)
    assert_close(value, want, rtol=1e-12)
    assert_close(gx, dwant, rtol=1e-9)
    assert_close(gy, [-1.0, 0.0], rtol=1e-9)


@pytest.mark.parametrize("options", SELECTIONS, ids=["default", "L1", "per_block"])
def test_array_logsumexp_whose_log_is_inside_a_branch_is_max_shifted(options):
    src = "def f(x, a):\n    s = np.sum(np.exp(x))\n    if a > 0:\n        return a * np.log(s)\n    return a\n"
    f = _compiled(src, options)
    x = np.array([1000.0, 1001.0])
    lse, softmax = _logsumexp_reference(x)
    value, (gx, ga) = _strict(f.value_and_grad, x, 2.0)
    assert_close(value, 2.0 * lse, rtol=1e-12)
    assert_close(gx, 2.0 * softmax, rtol=1e-9)
    assert_close(ga, lse, rtol=1e-12)
    assert _strict(f, x, -1.0) == -1.0


@pytest.mark.parametrize("options", SELECTIONS, ids=["default", "L1", "per_block"])
def test_logaddexp_of_scalars_and_arrays_is_stable(options):
    scalar = _compiled("def f(a, b):\n    return np.logaddexp(a, b)\n", options)
    for a, b in ((1000.0, 1001.0), (-1000.0, -1001.0), (0.3, -0.2), (800.0, -800.0)):
        want, (da, db) = _logsumexp_reference(np.array([a, b]))
        value, grads = _strict(scalar.value_and_grad, a, b)
        assert_close(value, want, rtol=1e-12, what=f"value at {(a, b)}")
        assert_close(grads, (da, db), rtol=1e-9, atol=1e-300, what=f"gradient at {(a, b)}")
    array = _compiled("def f(a, b):\n    return np.sum(np.logaddexp(a, b))\n", options)
    a, b = np.array([1000.0, -1000.0, 0.3]), np.array([1001.0, -1001.0, -0.2])
    pairs = [_logsumexp_reference(np.array(p)) for p in zip(a, b, strict=True)]
    value, (ga, gb) = _strict(array.value_and_grad, a, b)
    assert_close(value, sum(v for v, _ in pairs), rtol=1e-12)
    assert_close(ga, [d[0] for _, d in pairs], rtol=1e-9)
    assert_close(gb, [d[1] for _, d in pairs], rtol=1e-9)


# -- 10: derivatives at the edge of the domain are IEEE's inf/nan, as JAX gives -----------------

def _jax_grad(fn, args):
    """JAX's gradient of ``fn`` w.r.t. every argument, in float64."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jargs = tuple(jax.numpy.asarray(a, dtype=jax.numpy.float64) for a in args)
    return tuple(float(g) for g in jax.grad(fn, tuple(range(len(args))))(*jargs))


def _same(got, want, what):
    got = tuple(float(g) for g in (got if isinstance(got, tuple) else (got,)))
    assert np.array_equal(np.array(got), np.array(want), equal_nan=True), f"{what}: {got} != JAX's {want}"


def _jax_asin(x):
    import jax.numpy as jnp

    return jnp.arcsin(x)


# (source, the JAX function, a point at the domain's edge)
_DOMAIN_EDGES = {
    "sqrt_at_0": ("def f(a):\n    return math.sqrt(a)\n", lambda a: a ** 0.5, (0.0,)),
    "power_half_at_0": ("def f(x, b):\n    return x ** b\n", lambda x, b: x ** b, (0.0, 0.5)),
    "power_below_one_at_0": ("def f(x):\n    return x ** 0.5 + 2.0 * x ** 0.25\n",
                             lambda x: x ** 0.5 + 2.0 * x ** 0.25, (0.0,)),
    "asin_at_1": ("def f(x):\n    return math.asin(x)\n", lambda x: _jax_asin(x), (1.0,)),
    "norm_at_origin": ("def f(x, y):\n    return math.sqrt(x * x + y * y)\n",
                       lambda x, y: (x * x + y * y) ** 0.5, (0.0, 0.0)),
}


@pytest.mark.parametrize("options", SELECTIONS, ids=["default", "L1", "per_block"])
@pytest.mark.parametrize("case", sorted(_DOMAIN_EDGES))
def test_derivative_at_the_edge_of_the_domain_is_what_jax_gives(case, options):
    src, jax_fn, args = _DOMAIN_EDGES[case]
    want = _jax_grad(jax_fn, args)
    f = _compiled(src, options)
    _same(_strict(f.grad, *args), want, "grad")
    value, grads = _strict(f.value_and_grad, *args)
    assert value == _python(src)(*args)
    _same(grads, want, "value_and_grad")
    if len(args) == 1:
        _same(_strict(f.jvp, args, (1.0,))[1], want, "jvp")


@pytest.mark.parametrize("options", SELECTIONS, ids=["default", "L1", "per_block"])
def test_zero_to_a_negative_power_raises_like_python_and_its_gradient_is_jaxs(options):
    src = "def f(x, b):\n    return x ** b\n"
    py = _python(src)
    f = _compiled(src, options)
    with pytest.raises(ZeroDivisionError):
        py(0.0, -1.0)
    with pytest.raises(ZeroDivisionError):      # the value, as Python computes it
        _strict(f, 0.0, -1.0)
    # the gradient alone needs no value: -inf in x, nan in b (inf · log 0), as JAX gives
    _same(_strict(f.grad, 0.0, -1.0), _jax_grad(lambda x, b: x ** b, (0.0, -1.0)), "grad")


# -- the generated modules of these cases are plain, ruff-clean Python --------------------------

_GENERATED = {
    "broadcast": ("def f(a, b):\n    return np.sum(np.maximum(np.sin(a) * b, np.exp(b)))\n",
                  (np.ones((4, 1)), np.ones((1, 3)))),
    "rounding": (_ROUNDING_SCALAR[2], (-3.3, 2.1)),
    "outside_domain": (_OUTSIDE_DOMAIN[0], (1.5,)),
    "softplus": (_SOFTPLUS_SOURCES[0], (800.0,)),
    "logsumexp": (_ARRAY_LSE["plus_constant"][0], (np.array([1000.0, 1001.0]),)),
    "domain_edge": ("def f(x, b):\n    return x ** b + math.sqrt(x) + 1.0 / b\n", (0.0, 0.5)),
}


@pytest.mark.parametrize("case", sorted(_GENERATED))
def test_generated_module_of_a_numeric_fix_is_ruff_clean(case, tmp_path):
    src, args = _GENERATED[case]
    f = _compiled(src, {})
    _strict(f.grad, *args)
    path = tmp_path / f"{case}_generated.py"
    path.write_text(f.source)
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--isolated", "--select", "E,F,W",
                        "--ignore", "E501", "--output-format", "concise", str(path)], capture_output=True, text=True)
    assert r.returncode == 0, f"ruff on the module generated for {case}:\n{r.stdout}{r.stderr}"
    assert "coarsen_nb" not in "\n".join(ln for ln in f.source.splitlines() if "import" in ln)


# -- abs of a value SymPy cannot prove real -------------------------------------------------------------
# d|u| of a u that SymPy cannot prove real (log1p(|a|), asin(a), erf(a), a**0.5, softplus) came out as
# re/im terms: "no printer for re" under the default selection (found by the random-program test, seed
# 20261201: abs(math.log(abs(a) + 1.0))).  The program's values are real floats, so d|u| = sign(u) du.

@pytest.mark.parametrize("selection", SELECTIONS, ids=["default", "L1", "per_block"])
@pytest.mark.parametrize("body", ["abs(math.log(abs(a) + 1.0))", "abs(math.asin(a))", "abs(math.erf(a))",
                                  "abs(a ** 0.5)", "abs(math.log(1.0 + math.exp(a)))", "abs(abs(a) - 1.0)",
                                  "abs(math.log(a))"])
def test_derivative_of_abs_of_a_value_sympy_cannot_prove_real(body, selection):
    src = f"def f(a):\n    return {body}\n"
    py = _python(src)
    f = cn.coarsen(src, **selection)
    for a in (0.7, 0.2):
        assert_close(f(a), py(a), rtol=1e-12, atol=1e-12, what=f"{body} value")
        assert_close(f.grad(a), finite_difference(py, (a,), 0), rtol=1e-6, atol=1e-8, what=f"d/da {body}")
