"""Closed forms of loop μs against direct iteration, for random coefficients.

The reference is the loop itself, run as plain Python (independent of the
closed form).  Trip counts include N = 0 and N = 1.  Gradients are checked
against central differences.  For the forms the design lists as closed
(sum, product, max/min, linear C6 and C7) the plan must hold no
:class:`~coarsen_nb.plan.IterStep`; Horner run backwards and C9 are only
checked for values (``iterated_loops`` reports which forms were iterated).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn
from coarsen_nb.plan import CondStep, IterStep

FORMS = {
    "sum": "def f(x, n):\n    s = 0.5\n    for i in range(n):\n        s = s + x[i] * x[i] + 0.25 * x[i]\n"
           "    return s\n",
    "product": "def f(x, n):\n    p = 1.5\n    for i in range(n):\n        p = p * x[i]\n    return p\n",
    "max": "def f(x, n):\n    m = -10.0\n    for i in range(n):\n        m = max(m, x[i])\n    return m\n",
    "min": "def f(x, n):\n    m = 10.0\n    for i in range(n):\n        m = min(m, x[i])\n    return m\n",
    "max_if": "def f(x, n):\n    m = -10.0\n    for i in range(n):\n        if x[i] > m:\n            m = x[i]\n"
              "    return m\n",
    # an extremum of a γ (a clamp, a branch): the predicate m >= g holds g's conditions (issue 16)
    "max_clamp": "def f(x, n):\n    m = -10.0\n    for i in range(n):\n"
                 "        m = max(m, min(max(1.5 * x[i], -0.5), 0.75))\n    return m\n",
    "max_clamped_square": "def f(x, n):\n    m = 0.0\n    for i in range(n):\n"
                          "        t = min(max(x[i] - 0.3, 0.0), 1.0)\n        m = max(m, t * t + 0.1 * x[i])\n"
                          "    return m\n",
    "min_branch": "def f(x, n):\n    m = 10.0\n    for i in range(n):\n"
                  "        m = min(m, x[i] * x[i] if x[i] > 0.2 else 0.5 - x[i])\n    return m\n",
    "c6": "def f(a, b, v0, n):\n    v = v0\n    for i in range(n):\n        v = a * v + b\n    return v\n",
    "c7": "def f(a, c, v0, n):\n    v = v0\n    for i in range(n):\n        v = a * v + c[i]\n    return v\n",
    "horner": "def f(c, t, n):\n    v = 0.0\n    for i in range(n):\n        v = v * t + c[i]\n    return v\n",
    "horner_reversed": "def f(c, t, n):\n    v = 0.0\n    for i in range(n - 1, -1, -1):\n        v = v * t + c[i]\n"
                       "    return v\n",
    "c8": "def f(a, c, v0, n):\n    v = v0\n    for i in range(n):\n        v = a[i] * v + c[i]\n    return v\n",
    "c8_index": "def f(x, h, v0, n):\n    v = v0\n    for i in range(n):\n"
                "        v = (1.0 - h / (i + 2.0)) * v + h * x[i]\n    return v\n",
    "c8_invariant_b": "def f(a, b, v0, n):\n    v = v0\n    for i in range(n):\n        v = v * a[i] + b\n"
                      "    return v\n",
    "c9": "def f(a, b, v0, n):\n    v = v0\n    for i in range(n):\n        v = a * v ** b\n    return v\n",
    "c9_square": "def f(a, v0, n):\n    v = v0\n    for i in range(n):\n        v = a * v * v\n    return v\n",
    "c9_cube": "def f(v0, n):\n    v = v0\n    for i in range(n):\n        v = v ** 3\n    return v\n",
    "c9_inverse": "def f(a, v0, n):\n    v = v0\n    for i in range(n):\n        v = a / v\n    return v\n",
}
CLOSED = ("sum", "product", "max", "min", "max_if", "max_clamp", "max_clamped_square", "min_branch",
          "c6", "c7", "horner", "c8", "c8_index", "c8_invariant_b",
          "c9", "c9_square", "c9_cube", "c9_inverse")
TRIPS = (0, 1, 2, 7, 25)


def _python(name):
    ns: dict = {"math": math, "np": np}
    exec(FORMS[name], ns)
    return ns["f"]


def _args(name, rng, n):
    if name in ("sum", "product", "max", "min", "max_if", "max_clamp", "max_clamped_square", "min_branch"):
        return (rng.uniform(-2, 2, size=max(n, 1)), n)
    if name == "c6":
        return (float(rng.uniform(-1.2, 1.2)), float(rng.uniform(-1, 1)), float(rng.uniform(-1, 1)), n)
    if name == "c7":
        return (float(rng.uniform(-1.2, 1.2)), rng.uniform(-1, 1, size=max(n, 1)), float(rng.uniform(-1, 1)), n)
    if name in ("horner", "horner_reversed"):
        return (rng.uniform(-1, 1, size=max(n, 1)), float(rng.uniform(-1.3, 1.3)), n)
    if name == "c8":
        a = rng.uniform(-1.3, 1.3, size=max(n, 1))
        a[rng.uniform(size=a.shape) < 0.2] = 0.0     # exact zeros: no division by a prefix product
        return (a, rng.uniform(-1, 1, size=max(n, 1)), float(rng.uniform(-1, 1)), n)
    if name == "c8_index":
        return (rng.uniform(-1, 1, size=max(n, 1)), float(rng.uniform(0.2, 1.5)), float(rng.uniform(-1, 1)), n)
    if name == "c8_invariant_b":
        return (rng.uniform(-1.3, 1.3, size=max(n, 1)), float(rng.uniform(-1, 1)), float(rng.uniform(-1, 1)), n)
    if name == "c9_square":   # negative a and v0: literal integer b, integer exponents
        return (float(rng.uniform(-1.1, -0.9)), float(rng.uniform(-1.05, -0.95)), min(n, 7))
    if name == "c9_cube":
        return (float(rng.uniform(-1.02, -0.98)), min(n, 7))
    if name == "c9_inverse":
        return (float(rng.uniform(-2, -0.5)), float(rng.uniform(0.5, 2)), n)
    return (float(rng.uniform(0.5, 1.5)), float(rng.uniform(0.3, 0.95)), float(rng.uniform(0.5, 2.0)), n)


def iterated_loops(plan) -> list:
    out = []

    def walk(steps):
        for s in steps:
            if isinstance(s, IterStep):
                out.append(s)
                walk(s.header)
                walk(s.body)
            elif isinstance(s, CondStep):
                walk(s.then)
                walk(s.orelse)

    walk(plan.steps)
    return out


def _wrt(args):
    return tuple(i for i, a in enumerate(args) if isinstance(a, (float, np.ndarray)))


@pytest.mark.parametrize("n", TRIPS)
@pytest.mark.parametrize("name", list(FORMS))
def test_value_equals_direct_iteration(name, n):
    py = _python(name)
    f = cn.coarsen(FORMS[name])
    rng = np.random.default_rng(100 + n)
    for _ in range(4):
        args = _args(name, rng, n)
        assert_close(f(*args), py(*args), rtol=1e-12, atol=1e-13, what=f"{name} N={n} value")


@pytest.mark.parametrize("n", TRIPS)
@pytest.mark.parametrize("name", list(FORMS))
def test_gradient_equals_central_differences(name, n):
    py = _python(name)
    f = cn.coarsen(FORMS[name])
    rng = np.random.default_rng(200 + n)
    for _ in range(3):
        args = _args(name, rng, n)
        grads = f.grad(*args)
        grads = grads if isinstance(grads, tuple) else (grads,)
        for g, i in zip(grads, _wrt(args), strict=True):
            assert np.all(np.isfinite(g)), f"{name} N={n} d/d{f.params[i]} = {g}"
            assert_close(g, finite_difference(py, args, i), rtol=1e-6, atol=1e-7,
                         what=f"{name} N={n} d/d{f.params[i]}")


@pytest.mark.parametrize("name", CLOSED)
def test_closed_form_has_no_iterated_loop(name):
    f = cn.coarsen(FORMS[name])
    f(*_args(name, np.random.default_rng(0), 5))
    its = iterated_loops(f.plan)
    assert not its, f"{name}: loop iterated instead of closed-formed:\n{f.plan}"


def test_report_iterated_forms():
    """Which forms are iterated (printed with ``-s``); the closed ones must be among the closed-formed."""
    iterated = []
    for name in FORMS:
        f = cn.coarsen(FORMS[name])
        f(*_args(name, np.random.default_rng(0), 5))
        if iterated_loops(f.plan):
            iterated.append(name)
    print("\niterated loop forms:", iterated)
    assert not set(iterated) & set(CLOSED), iterated


# --------------------------------------------------------------------------
# Exact zeros and edge coefficients
# --------------------------------------------------------------------------


@pytest.mark.parametrize("n", (1, 2, 6))
def test_product_with_an_exact_zero_factor(n):
    """Π with one factor exactly 0: the value is 0 and the gradient is the product of the others (no 0/0)."""
    py = _python("product")
    f = cn.coarsen(FORMS["product"])
    rng = np.random.default_rng(n)
    for z in range(n):
        x = rng.uniform(0.5, 2, size=n)
        x[z] = 0.0
        assert f(x, n) == py(x, n) == 0.0
        g = f.grad(x, n)
        want = np.zeros(n)
        want[z] = 1.5 * np.prod(np.delete(x, z))
        assert_close(g, want, rtol=1e-12, atol=0.0, what=f"product zero at {z}")
    x = rng.uniform(0.5, 2, size=n)
    x[0] = 0.0
    if n > 1:
        x[-1] = 0.0
        assert_close(f.grad(x, n), np.zeros(n), rtol=0.0, atol=0.0, what="two zeros")


@pytest.mark.parametrize("n", (0, 1, 4))
def test_linear_c6_with_zero_multiplier(n):
    """v = 0·v + b: v_N = b for N ≥ 1; dv/da = v_{N-1} at a = 0 (0 for N ≥ 2 except the a-linear term)."""
    py = _python("c6")
    f = cn.coarsen(FORMS["c6"])
    args = (0.0, 0.3, 0.7, n)
    assert_close(f(*args), py(*args), rtol=1e-15, atol=0.0, what="value at a = 0")
    grads = f.grad(*args)
    for g, i in zip(grads, (0, 1, 2), strict=True):
        assert_close(g, finite_difference(py, args, i), rtol=1e-6, atol=1e-7, what=f"d/d{f.params[i]} at a = 0")


@pytest.mark.parametrize("name", ("horner", "horner_reversed"))
def test_horner_at_zero(name):
    """p(0) = the constant coefficient; p'(0) = the linear one.  t = 0 is an ordinary point."""
    py = _python(name)
    f = cn.coarsen(FORMS[name])
    c = np.array([0.5, -1.0, 2.0, 3.0])
    args = (c, 0.0, 4)
    assert f(*args) == py(*args)
    gc, gt = f.grad(*args)
    assert_close(gt, finite_difference(py, args, 1), rtol=1e-6, atol=1e-7, what=f"{name} d/dt at t = 0")
    assert_close(gc, finite_difference(py, args, 0), rtol=1e-6, atol=1e-7, what=f"{name} d/dc at t = 0")


@pytest.mark.parametrize("a", (1.0, -1.0))
def test_linear_c6_unit_multiplier(a):
    """a = ±1: the geometric sum's closed form must not divide by 1 - a."""
    py = _python("c6")
    f = cn.coarsen(FORMS["c6"])
    for n in (0, 1, 5, 6):
        args = (a, 0.3, 0.7, n)
        assert_close(f(*args), py(*args), rtol=1e-14, atol=1e-15, what=f"a={a} N={n}")
        for g, i in zip(f.grad(*args), (0, 1, 2), strict=True):
            assert_close(g, finite_difference(py, args, i), rtol=1e-6, atol=1e-7, what=f"a={a} N={n} d{i}")


def test_linear_c6_overflow_matches_python():
    """|a| > 1 over many steps: plain Python overflows to inf; the closed form must not raise instead."""
    py = _python("c6")
    f = cn.coarsen(FORMS["c6"])
    args = (1.5, 0.1, 1.0, 2000)
    want = py(*args)
    assert math.isinf(want)
    assert f(*args) == want


INVARIANT = {
    "sum": "def f(a, n):\n    s = 0.0\n    for i in range(n):\n        s += a * a\n    return s\n",
    "sum_init": "def f(a, n):\n    s = a\n    for i in range(n):\n        s += math.tanh(a)\n    return s\n",
    "product": "def f(a, n):\n    p = 1.0\n    for i in range(n):\n        p = p * (1.0 + a)\n    return p\n",
    "c7_invariant_b": "def f(a, b, n):\n    v = 1.0\n    for i in range(n):\n        v = a * v + b * b\n    return v\n",
}


@pytest.mark.parametrize("n", (0, 1, 4))
@pytest.mark.parametrize("name", list(INVARIANT))
def test_loop_invariant_body(name, n):
    """A body that does not depend on the loop index: Σ_{k<N} g(a) = N·g(a), so d/da carries the factor N."""
    ns: dict = {"math": math, "np": np}
    exec(INVARIANT[name], ns)
    py = ns["f"]
    f = cn.coarsen(INVARIANT[name])
    args = (0.4, 0.3, n)[-len(f.params):] if len(f.params) == 3 else (0.4, n)
    assert_close(f(*args), py(*args), rtol=1e-13, atol=1e-14, what=f"{name} N={n} value")
    grads = f.grad(*args)
    grads = grads if isinstance(grads, tuple) else (grads,)
    for g, i in zip(grads, range(len(args) - 1), strict=True):
        assert_close(g, finite_difference(py, args, i), rtol=1e-6, atol=1e-7, what=f"{name} N={n} d/d{f.params[i]}")


# --------------------------------------------------------------------------
# C8 (per-iteration coefficient) and C9 (power): the forms, zeros, the domain
# --------------------------------------------------------------------------


def test_c8_and_c9_lift_to_closed_forms():
    """The lifted text shows the closed form (RLin / the power), not a loop iterated step by step."""
    for name, marker in (("c8", "linrec("), ("c8_index", "linrec("), ("c9_square", "PowInt(v0, 2**"),
                         ("c9", "sum(")):
        f = cn.coarsen(FORMS[name])
        f(*_args(name, np.random.default_rng(0), 5))
        assert not iterated_loops(f.plan) and marker in str(f.plan), f"{name}:\n{f.plan}"


@pytest.mark.parametrize("n", (1, 2, 6, 25))
def test_c8_with_exact_zero_coefficients(n):
    """a_k = 0 resets the state: the value and every partial match the loop; nothing is 0/0."""
    py = _python("c8")
    f = cn.coarsen(FORMS["c8"])
    rng = np.random.default_rng(n)
    for zeros in ([0], [n - 1], [0, n - 1], list(range(n))):
        a = rng.uniform(-1.3, 1.3, size=n)
        a[zeros] = 0.0
        args = (a, rng.uniform(-1, 1, size=n), 0.4, n)
        assert_close(f(*args), py(*args), rtol=1e-13, atol=1e-14, what=f"c8 zeros at {zeros}")
        for g, i in zip(f.grad(*args), (0, 1, 2), strict=True):
            assert np.all(np.isfinite(g))
            assert_close(g, finite_difference(py, args, i), rtol=1e-6, atol=1e-7, what=f"c8 zeros {zeros} d{i}")


def test_c8_jvp_matches_vjp():
    """Forward mode runs the same recurrence driven by the tangents: ⟨J ẋ, 1⟩ = ⟨ẋ, Jᵀ 1⟩."""
    f = cn.coarsen(FORMS["c8"])
    rng = np.random.default_rng(3)
    for n in (0, 1, 9):
        args = _args("c8", rng, n)
        tangents = (rng.normal(size=args[0].shape), rng.normal(size=args[1].shape), float(rng.normal()))
        _, t = f.jvp(args, tangents)
        want = sum(float(np.sum(np.asarray(g) * d)) for g, d in zip(f.grad(*args), tangents, strict=True))
        assert_close(t, want, rtol=1e-12, atol=1e-13, what=f"c8 jvp N={n}")


def test_c8_long_recurrence_is_stable():
    """N = 2000 with |a_k| ≈ 1 and exact zeros: the suffix products and the scan of states never
    divide by a prefix product, so value and gradient match the loop."""
    py = _python("c8")
    f = cn.coarsen(FORMS["c8"])
    rng = np.random.default_rng(5)
    n = 2000
    a = rng.choice([-1.0, 1.0], size=n) * rng.uniform(0.97, 1.03, size=n)
    a[::97] = 0.0
    args = (a, rng.uniform(-1, 1, size=n), 0.3, n)
    assert_close(f(*args), py(*args), rtol=1e-11, atol=1e-12, what="c8 N=2000")
    grads = f.grad(*args)
    assert_close(grads[2], finite_difference(py, args, 2), rtol=1e-6, atol=1e-9, what="c8 N=2000 d/dv0")
    h = 1e-6
    for i in (0, 1):
        for j in (0, 1, 97, 500, 1998, 1999):
            up, dn = np.array(args[i]), np.array(args[i])
            up[j] += h
            dn[j] -= h
            hi, lo = list(args), list(args)
            hi[i], lo[i] = up, dn
            want = (py(*hi) - py(*lo)) / (2 * h)
            assert_close(grads[i][j], want, rtol=1e-6, atol=1e-8, what=f"c8 N=2000 d{i}[{j}]")


@pytest.mark.parametrize("b", (1.0, 2.0))
def test_c9_symbolic_exponent_at_integer_values(b):
    """A symbolic b equal to 1 (the quotient (bᴺ-1)/(b-1) would be 0/0) or to an integer with a
    negative base: the form is Σ bᵖ, and ∂/∂a, ∂/∂v0 match the loop."""
    py = _python("c9")
    f = cn.coarsen(FORMS["c9"], wrt=("a", "v0"))
    for args in ((1.1, b, 0.9, 5), (-0.9, b, -1.05, 5), (0.7, b, 1.2, 0), (0.7, b, 1.2, 1)):
        assert_close(f(*args), py(*args), rtol=1e-13, atol=1e-14, what=f"c9 b={b} {args}")
        for g, i in zip(f.grad(*args), (0, 2), strict=True):
            assert_close(g, finite_difference(py, args, i), rtol=1e-6, atol=1e-7, what=f"c9 b={b} {args} d{i}")
    # ∂/∂b at b = 1 is not the derivative of a branch for b = 1 (it would be 0)
    g = cn.coarsen(FORMS["c9"]).grad(1.1, b, 0.9, 5)[1]
    assert_close(g, finite_difference(py, (1.1, b, 0.9, 5), 1), rtol=1e-6, atol=1e-7, what=f"c9 d/db at b={b}")


def test_linear_c7_integer_coefficient_past_63_steps():
    """aᴺ with a literal integer a at an array level is a float power (an int power wraps at 2⁶³)."""
    src = "def f(c, n):\n    v = 0.0\n    for i in range(n):\n        v = 2 * v + c[i]\n    return v\n"
    ns: dict = {}
    exec(src, ns)
    c = np.full(70, 1e-20)
    c[0] = 1.0
    assert_close(cn.coarsen(src)(c, 70), ns["f"](c, 70), rtol=1e-14, atol=0.0, what="2·v + c, N = 70")
