"""log(c + Σ exp(x_i)) is recognized as one form, lowered with a max shift, differentiated as a softmax.

The Python reference overflows (``math.exp`` raises) exactly where the form
matters, so at x ~ 1000 the reference is the same function of x − 1000 plus
1000 — mathematically equal, and computed by plain Python.  At moderate values
the compiled function must equal the plain loop.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn

LSE = "def f(x):\n    s = 0.0\n    for i in range(len(x)):\n        s += math.exp(x[i])\n    return math.log(s)\n"
LOG1P = ("def f(x, w):\n    s = 1.0\n    for i in range(len(x)):\n        s += math.exp(w * x[i])\n"
         "    return math.log(s)\n")
SHIFTED_BY_USER = ("def f(x, c):\n    s = c\n    for i in range(len(x)):\n        s = s + math.exp(2.0 * x[i] - 1.0)\n"
                   "    return 3.0 * math.log(s) + x[0]\n")


def _py(src):
    ns: dict = {"math": math}
    exec(src, ns)
    return ns["f"]


def _softmax(x):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


@pytest.mark.parametrize("src", (LSE, LOG1P, SHIFTED_BY_USER))
def test_recognized(src):
    f = cn.coarsen(src)
    args = (np.array([0.1, -0.4, 0.3]), 0.7)[:len(f.params)]
    f(*args)
    assert "logsumexp(" in str(f.plan), str(f.plan)


@pytest.mark.parametrize("n", (1, 2, 7))
def test_moderate_values_equal_the_loop(n):
    rng = np.random.default_rng(n)
    for src in (LSE, LOG1P, SHIFTED_BY_USER):
        f, py = cn.coarsen(src), _py(src)
        x = rng.uniform(-3, 3, size=n)
        args = (x, float(rng.uniform(0.2, 1.5)))[:len(f.params)]
        assert_close(f(*args), py(*args), rtol=1e-13, atol=1e-14, what=f"value n={n}")
        grads = f.grad(*args)
        grads = grads if isinstance(grads, tuple) else (grads,)
        for i, g in enumerate(grads):
            assert_close(g, finite_difference(py, args, i), rtol=1e-6, atol=1e-8, what=f"d{i} n={n}")


def test_no_overflow_at_large_values():
    """x ~ 1000: the naive Σ exp overflows to inf (Python's loop raises); the form does not, and its
    gradient is the softmax, with no warning on the way."""
    f, py = cn.coarsen(LSE), _py(LSE)
    x = 1000.0 + np.array([0.5, -1.0, 2.0, 0.0])
    with pytest.raises(OverflowError):
        py(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value, grad = f(x), f.grad(x)
    assert_close(value, 1000.0 + py(x - 1000.0), rtol=1e-15, atol=0.0, what="shifted reference")
    assert_close(grad, _softmax(x), rtol=1e-13, atol=1e-16, what="softmax")
    _, tangent = f.jvp((x,), (np.ones_like(x),))
    assert_close(tangent, 1.0, rtol=1e-13, atol=0.0, what="Σ softmax")


def test_large_negative_values_with_a_constant():
    """log(1 + Σ exp(w·x)) with w·x ~ -1000: the constant dominates; the shift m = max(max g, log 1) = 0
    keeps 1·e^{-m} = 1 (shifting by max g alone would overflow e^{-m})."""
    f, py = cn.coarsen(LOG1P), _py(LOG1P)
    x = -1000.0 + np.array([0.5, -1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(x, 1.0) == py(x, 1.0) == 0.0
        gx, gw = f.grad(x, 1.0)
    assert np.all(gx == 0.0) and gw == 0.0
    x = 1000.0 + np.array([0.5, -1.0, 2.0])
    assert_close(f(x, 1.0), 1000.0 + math.log(math.exp(-1000.0) + np.sum(np.exp(x - 1000.0))), rtol=1e-15,
                 atol=0.0, what="log1p form at +1000")


def test_empty_sum_is_log_of_the_constant():
    f, py = cn.coarsen(SHIFTED_BY_USER), _py(SHIFTED_BY_USER)
    x = np.array([0.3])
    # one element; and the range starts at 0, so an empty x is not a valid input of the reference
    assert_close(f(x, 2.0), py(x, 2.0), rtol=1e-14, atol=0.0, what="one term")
    g = cn.coarsen("def f(x, c, n):\n    s = c\n    for i in range(n):\n        s += math.exp(x[i])\n"
                   "    return math.log(s)\n")
    assert_close(g(x, 2.0, 0), math.log(2.0), rtol=1e-15, atol=0.0, what="empty sum")
    assert_close(g.grad(x, 2.0, 0)[1], 0.5, rtol=1e-15, atol=0.0, what="d/dc of log c")


STREAMING = ("def f(x, w):\n    m = -math.inf\n    s = 0.0\n    for i in range(len(x)):\n        a = w * x[i]\n"
             "        if a > m:\n            s = s * math.exp(m - a) + 1.0\n            m = a\n        else:\n"
             "            s += math.exp(a - m)\n    return m + math.log(s)\n")
STREAMING_NESTED = ("def f(x, mu):\n    ll = 0.0\n    for i in range(len(x)):\n        m = -math.inf\n        s = 0.0\n"
                    "        for k in range(len(mu)):\n            a = -0.5 * (x[i] - mu[k]) ** 2\n"
                    "            if a > m:\n"
                    "                s = s * math.exp(m - a) + 1.0\n                m = a\n            else:\n"
                    "                s += math.exp(a - m)\n        ll += m + math.log(s)\n    return ll\n")


@pytest.mark.parametrize("src", (STREAMING, STREAMING_NESTED))
def test_streaming_logsumexp_is_a_closed_form(src):
    """The one-pass (running max, scaled sum) loop: both μs close together, m + log(s) is the LSE form,
    and nothing is iterated point by point.  The streaming reference never overflows, so it is compared
    as is, at moderate and at large values."""
    from test_closed_forms import iterated_loops

    f, py = cn.coarsen(src), _py(src)
    rng = np.random.default_rng(7)
    for shift in (0.0, 1000.0):
        for n in (1, 2, 6):
            args = (rng.uniform(-2, 2, size=n) + shift, (0.8 if src is STREAMING else rng.uniform(-2, 2, size=3)))
            assert_close(f(*args), py(*args), rtol=1e-12, atol=1e-12, what=f"value n={n} shift={shift}")
            grads = f.grad(*args)
            for i, g in enumerate(grads):
                assert np.all(np.isfinite(g))
                if shift == 0.0:
                    assert_close(g, finite_difference(py, args, i), rtol=1e-6, atol=1e-8, what=f"d{i} n={n}")
    assert "logsumexp(" in str(f.plan) and not iterated_loops(f.plan), str(f.plan)
