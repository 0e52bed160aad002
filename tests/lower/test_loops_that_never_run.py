"""Loops that run no iteration: a ``while`` whose condition is false at entry, a ``for`` over an empty range.

Found by ``test_numba_random_programs`` (stop 43): ``while k1 < 0 and (a - a) < (a - a):`` folds to the
constant False, and the numba gradient fell back to NumPy code ("Type of variable 'k' cannot be
determined"): the loop was printed with ``cond = False``, Numba pruned its body as dead, and with it the
one ``append`` that types the tape list.  Such a loop is now printed as its states keeping their first
values (``IterStep.never_runs``, ``lower/iterated.py``, ``lower/tangent.py``).  A literal ``while False:`` /
``if 0:`` raised an ``AssertionError`` in the gating ("the frontend branches on names"); the frontend now
branches on a name for a constant too (``BuilderState.branch_test``).

Each program runs under the NumPy and the numba backend, with fallbacks as errors, against the plain
function (value), central differences of it (gradient) and the directional difference (JVP); the loops
that never run sit beside a state assigned only in their body, counters, breaks, arrays and an outer loop.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import coarsen_nb as cn
from coarsen_nb.errors import FallbackWarning
from coarsen_nb.numba_loader import NumbaFallbackWarning

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


def folded_false_while(a, b):                 # the random program's shape: the condition folds to False
    w1 = a * b
    k1 = 0
    while k1 < 0 and (a - a) < (a - a):
        k1 += 1
        w1 = 0.8 * w1 + math.tanh(a)
        if w1 > b:
            break
    return w1 + a


def folded_false_while_n(a, b, n):            # the bound a parameter, the condition still folded
    w = a - b
    k = 0
    while k < n and (b - b) > 0.0:
        k += 1
        w = 0.5 * w + math.sin(b)
    return w * a + k


def counter_only_in_body(a, b):               # a state and a counter assigned only in the body
    w = a
    k = 0
    while k < 0 and (a - a) > 0.0:
        k += 1
        c = k * 1.0
        w = w * b + c
    return w * w + k


def literal_false_while(a, b):
    w = a * a
    while False:
        w = w * b
    if 0:
        w = w + b
    return w + b


def literal_true_if(a, b):
    w = a
    if True:
        w = w * b
    else:
        w = 2.0
    return w


def empty_ranges(a, b, n):                    # n = 0 at the call
    s = a * b
    for _i in range(5, 5):
        s = s * 0.5 + math.sin(a)
    for _i in range(3, 0):
        s = s * b + 1.0
        if s > b:
            break
    for i in range(n):
        s = math.tanh(s) + a * i
    return s + a


def never_runs_inside_a_loop(a, b):          # the outer loop runs; the inner never does
    s = a
    for _i in range(3):
        w = s * b
        k = 0
        while k < 0 and (a - a) > 1.0:
            k += 1
            w = 0.5 * w + math.cos(a)
        s = math.tanh(w) + 0.5 * s
    return s


def array_state_while(a, x):
    w = a * x
    k = 0
    while k < 0 and (a - a) < (a - a):
        k += 1
        w = 0.5 * w + np.sin(x)
        if np.sum(w) > a:
            break
    return np.sum(w * w)


def array_written_in_place(a, x):
    u = x * a
    k = 0
    while k < 0 and (a - a) > 0.0:
        u[k] = u[k] * a + 1.0
        k += 1
    return np.sum(u * x)


def empty_loops_over_arrays(a, x):
    s = a
    for v in x[:0]:
        s = s * v + a
    u = x * a
    for _i in range(0):
        u = np.tanh(u) * a
    t = 0.0
    for i in range(len(x) - len(x)):
        t += x[i] * a
    return s * np.sum(u) + t


CASES = [
    (folded_false_while, ("a", "b"), (0.3, 0.7)),
    (folded_false_while, ("a", "b"), (-1.2, 0.4)),
    (folded_false_while_n, ("a", "b"), (0.3, 0.7, 3)),
    (counter_only_in_body, ("a", "b"), (0.3, 0.7)),
    (literal_false_while, ("a", "b"), (0.3, 0.7)),
    (literal_true_if, ("a", "b"), (0.3, 0.7)),
    (empty_ranges, ("a", "b"), (0.3, 0.7, 0)),
    (never_runs_inside_a_loop, ("a", "b"), (0.3, 0.7)),
    (array_state_while, ("a", "x"), (0.3, np.array([0.1, 0.2, 0.4]))),
    (array_written_in_place, ("a", "x"), (0.3, np.array([0.1, -0.2, 0.4, 1.5]))),
    (empty_loops_over_arrays, ("a", "x"), (0.3, np.array([0.1, 0.2, 0.4]))),
]


def _copied(args):
    return tuple(np.array(v) if isinstance(v, np.ndarray) else v for v in args)


def _central_gradient(fn, args, i, eps=1e-6):
    """Central differences of ``fn`` in its ``i``-th argument (each element of an array one at a time)."""
    x = args[i]
    if not isinstance(x, np.ndarray):
        h = eps * max(1.0, abs(x))
        up, down = list(_copied(args)), list(_copied(args))
        up[i], down[i] = x + h, x - h
        return (fn(*up) - fn(*down)) / (2 * h)
    g = np.zeros_like(x)
    for j in range(x.size):
        up, down = list(_copied(args)), list(_copied(args))
        up[i] = x.copy()
        down[i] = x.copy()
        up[i][j] += eps
        down[i][j] -= eps
        g[j] = (fn(*up) - fn(*down)) / (2 * eps)
    return g


def _directional(fn, args, idx, tangents, eps=1e-6):
    def shifted(sign):
        out = list(_copied(args))
        for i, t in zip(idx, tangents, strict=True):
            out[i] = args[i] + sign * eps * t
        return fn(*out)
    return (shifted(1) - shifted(-1)) / (2 * eps)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("fn,wrt,args", CASES, ids=[f"{c[0].__name__}-{k}" for k, c in enumerate(CASES)])
def test_a_loop_that_never_runs(fn, wrt, args, backend):
    f = cn.coarsen(fn, wrt=list(wrt), backend=backend)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        warnings.simplefilter("error", NumbaFallbackWarning)
        value = f(*_copied(args))
        grads = f.grad(*_copied(args))
        idx = [f.params.index(w) for w in wrt]
        rng = np.random.default_rng(3)
        tangents = tuple(rng.normal(size=np.shape(args[i])) if isinstance(args[i], np.ndarray) else float(rng.normal())
                         for i in idx)
        jvp_value, tangent = f.jvp(_copied(args), tangents)
    np.testing.assert_allclose(value, fn(*_copied(args)), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(jvp_value, value, rtol=1e-12, atol=1e-14)
    grads = grads if isinstance(grads, tuple) else (grads,)
    for i, g in zip(idx, grads, strict=True):
        np.testing.assert_allclose(g, _central_gradient(fn, args, i), rtol=1e-6, atol=1e-8,
                                   err_msg=f"d/d{f.params[i]}")
    np.testing.assert_allclose(tangent, _directional(fn, args, idx, tangents), rtol=1e-6, atol=1e-8)
    if backend == "numba":
        want = cn.coarsen(fn, wrt=list(wrt), backend="numpy").grad(*_copied(args))
        want = want if isinstance(want, tuple) else (want,)
        for g, w in zip(grads, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)


def test_the_never_run_loop_prints_no_loop():
    """The gradient of a loop that never runs keeps its state's first value: no tape, no reverse sweep
    (the form Numba cannot type when it prunes the body: the list tape gets no append)."""
    f = cn.coarsen(folded_false_while, wrt=["a", "b"], backend="numba")
    f.grad(0.3, 0.7)
    grad = f.source[f.source.index("def folded_false_while_grad("):]
    grad = grad[:grad.find("\n@")]
    assert "never runs" in grad
    assert "_tape" not in grad and "while True" not in grad
