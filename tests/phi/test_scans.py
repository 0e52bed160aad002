"""Scans (coarsen_nb.phi.scans): a loop state that the same iteration reads, lifted to its value at
every step — prefix sums and products, s = a·s + b read every iteration, y[i] = a·y[i-1] + b.

The reference is the loop itself, run as plain Python; gradients against central differences (and
JAX where installed).  Trip counts 0, 1, 2, 7 and 25 under the default selection, L = 1 and
per-block; the default plan of a scan form holds no iterated loop, and its generated code no loop
over the trip count.  At n = 10^5 the doubling scan must stay stable (|a| < 1: a rescaling by
a^-k would overflow) and match the loop.  A recurrence that is not a scan stays iterated, as before.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from entry_checks import SELECTIONS, jax_module
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn
from coarsen_nb.plan import CondStep, IterStep

FORMS = {
    # a prefix sum read in the same iteration (issue 16's `discount`)
    "prefix_sum": "def f(r, dt, n):\n    acc = 0.0\n    tot = 0.0\n    for i in range(n):\n"
                  "        acc += r[i] * dt\n        tot += math.exp(-acc)\n    return tot\n",
    # the reader before the update: it reads the state before the step
    "prefix_sum_before": "def f(r, c, n):\n    acc = c\n    tot = 0.0\n    for i in range(n):\n"
                         "        tot += acc * r[i]\n        acc = acc + r[i] * r[i]\n    return tot + acc\n",
    "prefix_product": "def f(x, p0, n):\n    p = p0\n    tot = 0.0\n    for i in range(n):\n"
                      "        p = p * x[i]\n        tot += p\n    return tot\n",
    # C7 read every iteration (issue 16's `iir`)
    "iir": "def f(x, a, n):\n    s = 0.0\n    total = 0.0\n    for i in range(n):\n"
           "        s = a * s + x[i]\n        total += s * s\n    return total\n",
    "c6_read": "def f(a, b, s0, n):\n    s = s0\n    total = 0.0\n    for i in range(n):\n"
               "        s = a * s + b\n        total += math.sin(s)\n    return total\n",
    "c8_read": "def f(a, x, s0, n):\n    s = s0\n    total = 0.0\n    for i in range(n):\n"
               "        s = a[i] * s + x[i]\n        total += s * x[i]\n    return total + s\n",
    # one scan reads another
    "chained": "def f(x, a, n):\n    acc = 0.0\n    s = 0.0\n    total = 0.0\n    for i in range(n):\n"
               "        acc += x[i]\n        s = a * s + acc\n        total += s * s\n    return total\n",
    # element writes (issue 16's `smooth`): the previous iteration's element
    "smooth": "def f(x, a, n):\n    y = np.zeros(n + 1)\n    y[0] = x[0]\n    for i in range(1, n + 1):\n"
              "        y[i] = a * y[i - 1] + (1 - a) * x[i]\n    return np.sum(y ** 2)\n",
    "smooth_step2": "def f(x, a, n):\n    y = np.zeros(2 * n + 2)\n    y[1] = x[0]\n"
                    "    for i in range(3, 2 * n + 2, 2):\n        y[i] = a * y[i - 2] + x[i] * x[i]\n"
                    "    return np.sum(y * y) + y[2 * n + 1]\n",
    "smooth_reversed": "def f(x, a, n):\n    y = np.zeros(n + 1)\n    y[n] = x[n]\n"
                       "    for i in range(n - 1, -1, -1):\n        y[i] = a * y[i + 1] + x[i]\n"
                       "    return np.sum(np.sin(y))\n",
    "smooth_offset": "def f(x, a, n):\n    y = np.zeros(n + 2)\n    y[1] = x[0]\n    for i in range(n):\n"
                     "        y[i + 2] = a * y[i + 1] + x[i + 1]\n    return np.sum(y * x[0])\n",
    # the running sum written out (np.cumsum as a loop); a reader inside a branch (scans before masked arms)
    "cumsum_write": "def f(x, a, n):\n    y = np.zeros(n)\n    acc = 0.0\n    for i in range(n):\n"
                    "        acc += a * x[i]\n        y[i] = acc\n    return np.sum(y * y)\n",
    "branch_reader": "def f(x, a, n):\n    acc = 0.0\n    t = 0.0\n    for i in range(n):\n        acc += x[i]\n"
                     "        if x[i] > 0.2:\n            t += math.exp(-a * acc)\n        else:\n"
                     "            t += a * acc\n    return t\n",
    # one array's write reads the other's previous element, after that one's write
    "two_arrays": "def f(x, a, n):\n    y = np.zeros(n + 1)\n    z = np.zeros(n + 1)\n    for i in range(n):\n"
                  "        y[i + 1] = a * y[i] + x[i]\n        z[i + 1] = 0.5 * z[i] + y[i]\n"
                  "    return np.sum(y * z)\n",
}
SCANS = tuple(FORMS)
# not scans: the loop stays iterated exactly as before (and no fallback, no internal error)
ITERATED = {
    "state_coefficient": "def f(x, a, n):\n    s = 0.5\n    total = 0.0\n    for i in range(n):\n"
                         "        s = a * s * s + x[i]\n        total += s\n    return total\n",
    "write_reads_current": "def f(x, a, n):\n    y = np.zeros(n + 2)\n    for i in range(1, n + 1):\n"
                           "        y[i] = a * y[i + 1] + x[i]\n    return np.sum(y * y)\n",
    "write_reads_two_back": "def f(x, a, n):\n    y = np.ones(n + 2)\n    for i in range(2, n + 2):\n"
                            "        y[i] = a * y[i - 1] + y[i - 2] * x[i - 2]\n    return np.sum(y * y)\n",
    # an inner loop reads the state: its Σ is a temp the substitution does not reach
    "inner_loop_reads_state": "def f(x, a, n):\n    s = 0.0\n    t = 0.0\n    for i in range(n):\n"
                              "        s = a * s + x[i]\n        for j in range(3):\n            t += s * j\n"
                              "    return t\n",
}
TRIPS = (0, 1, 2, 7, 25)


def _python(src):
    ns: dict = {"math": math, "np": np}
    exec(src, ns)
    return ns["f"]


def _args(name, rng, n):
    size = 2 * n + 2
    if name == "c6_read":
        return (float(rng.uniform(-0.95, 0.95)), float(rng.uniform(-1, 1)), float(rng.uniform(-1, 1)), n)
    if name == "c8_read":
        a = rng.uniform(-1.2, 1.2, size=size)
        a[rng.uniform(size=size) < 0.2] = 0.0       # exact zeros reset the state
        return (a, rng.uniform(-1, 1, size=size), float(rng.uniform(-1, 1)), n)
    if name in ("prefix_sum_before", "prefix_product"):
        return (rng.uniform(-1.3, 1.3, size=size), float(rng.uniform(0.5, 1.5)), n)
    return (rng.uniform(-1, 1, size=size), float(rng.uniform(-0.95, 0.95)), n)


def _wrt(args):
    return tuple(i for i, a in enumerate(args) if isinstance(a, (float, np.ndarray)))


@functools.cache
def _compiled(name, selection):
    return cn.coarsen(FORMS.get(name) or ITERATED[name], **SELECTIONS[selection])


def _iterated(plan) -> list:
    out = []

    def walk(steps):
        for s in steps:
            if isinstance(s, IterStep):
                out.append(s)
                walk(s.body)
            elif isinstance(s, CondStep):
                walk(s.then)
                walk(s.orelse)

    walk(plan.steps)
    return out


@pytest.mark.parametrize("selection", list(SELECTIONS))
@pytest.mark.parametrize("name", SCANS + tuple(ITERATED))
def test_value_and_gradient_equal_the_loop(name, selection):
    py = _python(FORMS.get(name) or ITERATED[name])
    f = _compiled(name, selection)
    rng = np.random.default_rng(len(name))
    for n in TRIPS:
        args = _args(name, rng, n)
        assert_close(f(*args), py(*args), rtol=1e-12, atol=1e-13, what=f"{name} N={n} value")
        grads = f.grad(*args)
        for g, i in zip(grads, _wrt(args), strict=True):
            assert np.all(np.isfinite(g)), f"{name} N={n} d/d{f.params[i]} = {g}"
            assert_close(g, finite_difference(py, args, i), rtol=1e-6, atol=1e-7,
                         what=f"{name} N={n} {selection} d/d{f.params[i]}")


@pytest.mark.parametrize("name", SCANS)
def test_scan_is_closed_form_without_a_loop(name):
    """The default plan has no iterated loop and shows the scan; the generated module has no loop whose
    trip count is the data's (the doubling scan's ⌈log₂ n⌉ passes are in a helper)."""
    f = _compiled(name, "default")
    f(*_args(name, np.random.default_rng(0), 5))
    assert not _iterated(f.plan), f"{name}: iterated:\n{f.plan}"
    assert "scan(" in str(f.plan), str(f.plan)
    functions, skip = [], True
    for ln in f.source.splitlines():
        if ln.startswith("def "):
            skip = ln.startswith("def _")       # the module's helpers
        if not skip:
            functions.append(ln)
    functions = "\n".join(functions)
    # (a doubling scan's `while sh < n` runs ⌈log₂ n⌉ times; an iterated loop is `while True` with a tape)
    assert "while True" not in functions and "for " not in functions and "_tape" not in functions, functions


@pytest.mark.parametrize("name", tuple(ITERATED))
def test_not_a_scan_stays_iterated(name):
    f = _compiled(name, "default")
    f(*_args(name, np.random.default_rng(0), 5))
    assert _iterated(f.plan), f"{name}: expected the loop to be iterated:\n{f.plan}"


def test_generated_code_names_the_states():
    """The scan of `acc` is called acc, the previous element of `y` y_prev (tests/lower/test_generated_names)."""
    for name, word in (("prefix_sum", "acc"), ("iir", "s"), ("smooth", "y_prev")):
        f = _compiled(name, "default")
        f(*_args(name, np.random.default_rng(0), 5))
        assert f"    {word} = _" in f.source, f.source


@pytest.mark.parametrize("name", ("iir", "c8_read", "smooth", "prefix_product"))
def test_jvp_matches_vjp(name):
    """Forward mode runs the scan driven by the tangents: ⟨J ẋ, 1⟩ = ⟨ẋ, Jᵀ 1⟩."""
    f = _compiled(name, "default")
    rng = np.random.default_rng(7)
    for n in (0, 1, 9):
        args = _args(name, rng, n)
        wrt = _wrt(args)
        tangents = tuple(rng.normal(size=np.shape(args[i])) if np.ndim(args[i]) else float(rng.normal())
                         for i in wrt)
        _, t = f.jvp(args, tangents)
        want = sum(float(np.sum(np.asarray(g) * d)) for g, d in zip(f.grad(*args), tangents, strict=True))
        assert_close(t, want, rtol=1e-11, atol=1e-12, what=f"{name} jvp N={n}")


@pytest.mark.parametrize("name", ("prefix_sum", "prefix_product", "iir", "c6_read", "c8_read", "chained"))
def test_gradient_equals_jax(name):
    jax = jax_module()
    jnp = jax.numpy
    src = FORMS[name]
    ns: dict = {"math": type("m", (), {"exp": staticmethod(jnp.exp), "sin": staticmethod(jnp.sin)}), "np": jnp}
    exec(src, ns)
    f = _compiled(name, "default")
    rng = np.random.default_rng(11)
    args = _args(name, rng, 9)
    wrt = _wrt(args)
    want = jax.grad(lambda *a: ns["f"](*a, args[-1]), argnums=wrt)(
        *(jnp.asarray(a, dtype=jnp.float64) for a in args[:-1]))
    for g, w in zip(f.grad(*args), want, strict=True):
        assert_close(g, np.asarray(w), rtol=1e-10, atol=1e-12, what=f"{name} vs JAX")


_BIG = 10**5


@pytest.mark.parametrize("a", (0.9, 0.999, -0.95))
@pytest.mark.parametrize("name", ("iir", "smooth", "prefix_sum"))
def test_stable_at_ten_to_the_five(name, a):
    """n = 10^5: value against the loop, ∂/∂a and a few ∂/∂x_j against central differences of the loop."""
    py = _python(FORMS[name])
    f = _compiled(name, "default")
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 1, size=2 * _BIG + 2)
    p = a if name != "prefix_sum" else 1e-4 * (1 + a)
    args = (x, p, _BIG)
    want = py(*args)
    assert_close(f(*args), want, rtol=1e-10, atol=0.0, what=f"{name} a={a} value at n = 10^5")
    gx, ga = f.grad(*args)
    assert np.all(np.isfinite(gx)) and math.isfinite(ga)
    # iir and smooth are quadratic in x (central differences are exact but for rounding, about
    # eps·√n·|f|/h), and the prefix sum's exp(-dt·acc) has dt³ ≈ 1e-11 as its third derivative: a large h
    h = 0.1
    atol = 1e-12 * abs(want) / h
    hp = 1e-9                   # a^k over 10^5 steps: the truncation error grows like (n·h)²
    assert_close(ga, (py(x, p + hp, _BIG) - py(x, p - hp, _BIG)) / (2 * hp), rtol=1e-5, atol=1e-14 * abs(want) / hp,
                 what=f"{name} a={a} d/da at n = 10^5")
    for j in (0, 1, _BIG // 2, _BIG - 1):
        up, dn = x.copy(), x.copy()
        up[j] += h
        dn[j] -= h
        assert_close(gx[j], (py(up, p, _BIG) - py(dn, p, _BIG)) / (2 * h), rtol=1e-5, atol=atol,
                     what=f"{name} a={a} d/dx[{j}] at n = 10^5")
