"""``vjp`` and ``jvp`` of functions that do not return one float: arrays, and tuples.

The reverse sweep seeds the adjoint of every returned float value with its part of the cotangent (an
array of the value's shape, or one entry per tuple element); forward mode returns one tangent per
element.  Returning several values on several paths joins each element by its own γ.  References:
finite differences of the projection ⟨cotangent, f(x)⟩ (reverse) and of f along the tangent (forward).
Before, both silently returned zeros for these functions.
"""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference
from hypothesis import given, settings
from hypothesis import strategies as st

import coarsen_nb as cn
from coarsen_nb import CoarsenError

PROGRAMS = {
    "elementwise_and_read": ("""
def f(x):
    return x * x + x[0]
""", lambda rng: (rng.normal(size=5),)),
    "prefix_states": ("""import numpy as np
def f(x, w):
    y = np.zeros(len(x))
    s = 0.0
    for i in range(len(x)):
        s = s * w + x[i]
        y[i] = s * s
    return y
""", lambda rng: (rng.normal(size=6), 0.7)),
    "tuple_one_return": ("""import math
def f(x, y):
    return x * y, math.sin(x) + y, 3.0
""", lambda rng: (rng.normal(), rng.normal())),
    "tuple_on_two_paths": ("""
def f(x, y):
    if x > 0:
        return x * y, x + y
    return x - y, x * x
""", lambda rng: (rng.normal(), rng.normal())),
    "tuple_of_one": ("""
def f(x, y):
    return (x * y * y,)
""", lambda rng: (rng.normal(), rng.normal())),
    "tuple_with_array_and_loop": ("""
def f(x, c):
    s = 0.0
    for i in range(len(x)):
        if x[i] > c:
            s += x[i] * c
        else:
            s -= x[i] * x[i]
    return s, x * c
""", lambda rng: (rng.normal(size=4), 0.3)),
}


def _plain(src):
    ns: dict = {}
    exec(compile(src, "<test>", "exec"), ns)
    return ns["f"]


def _like(value, rng):
    """A random cotangent (or tangent) with the structure of ``value``."""
    if isinstance(value, tuple):
        return tuple(_like(v, rng) for v in value)
    return rng.normal(size=np.shape(value)) if np.ndim(value) else float(rng.normal())


def _dot(a, b):
    if isinstance(a, tuple):
        return sum(_dot(x, y) for x, y in zip(a, b, strict=True))
    return float(np.sum(np.asarray(a) * np.asarray(b)))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**16))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_vjp_and_jvp_against_finite_differences(name, seed):
    src, make = PROGRAMS[name]
    rng = np.random.default_rng(seed)
    args = make(rng)
    if name == "tuple_with_array_and_loop" and np.min(np.abs(args[0] - args[1])) < 1e-3:
        return          # a point on the branch boundary: no derivative to compare
    f, plain = cn.coarsen(src), _plain(src)
    value, pullback = f.vjp(*args)
    want = plain(*args)
    assert_close(np.concatenate([np.ravel(v) for v in value]) if isinstance(value, tuple) else value,
                 np.concatenate([np.ravel(v) for v in want]) if isinstance(want, tuple) else want,
                 rtol=1e-12, atol=1e-12, what="value")
    bar = _like(want, rng)
    grads = pullback(bar)
    grads = grads if isinstance(grads, tuple) else (grads,)
    for k, g in enumerate(grads):
        fd = finite_difference(lambda *a: _dot(bar, plain(*a)), args, k)
        assert_close(g, fd, rtol=1e-6, atol=1e-7, what=f"{name}: vjp wrt argument {k}")
    tangents = tuple(_like(a, rng) for a in args)
    _, tangent = f.jvp(args, tangents)

    def along(t):
        return plain(*[a + t * d for a, d in zip(args, tangents, strict=True)])

    h = 1e-6
    plus, minus = along(h), along(-h)
    if isinstance(want, tuple):
        for k, (tk, p, m) in enumerate(zip(tangent, plus, minus, strict=True)):
            assert_close(tk, (np.asarray(p) - np.asarray(m)) / (2 * h), rtol=1e-5, atol=1e-6, what=f"jvp [{k}]")
    else:
        assert_close(tangent, (np.asarray(plus) - np.asarray(minus)) / (2 * h), rtol=1e-5, atol=1e-6, what="jvp")


def test_a_tuple_result_needs_a_tuple_cotangent_and_has_no_grad():
    f = cn.coarsen(PROGRAMS["tuple_on_two_paths"][0])
    value, pullback = f.vjp(2.0, 3.0)
    assert value == (6.0, 5.0) and pullback() == (4.0, 3.0)      # default cotangent: ones
    with pytest.raises(CoarsenError, match="tuple of 2"):
        pullback(1.0)
    with pytest.raises(CoarsenError, match="does not return a scalar"):
        f.grad(2.0, 3.0)
    assert "def f_grad" not in f.source and "_bar=(1.0, 1.0)" in f.source


def test_returns_of_different_arities_are_refused():
    src = """
def f(x):
    if x > 0:
        return x, x
    return x
"""
    with pytest.raises(CoarsenError, match="returns of different arities"):
        cn.coarsen(src)
