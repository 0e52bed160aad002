"""An array written element by element and then used by array code in the same SOI.

The written array (a closed-form element write, ``RWrite``) is a whole array: it was treated as a value
that varies over nothing, so ``np.sin(u)`` printed as ``math.sin(u)`` (a TypeError that the runtime
then blamed on the arguments' shapes) and the adjoint of such a use was summed to one number.  Found by
the slicing work (2026-12-02), which had to end the SOI after every write to avoid it.  Checked against
the plain function, central finite differences and the closed forms under all three selections.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn

SELECTIONS = [{}, {"max_soi": 1}, {"per_block": True}]

_SOURCES = {
    "sin_of_written": ("def f(x):\n    u = np.zeros(len(x))\n    for k in range(len(x)):\n"
                       "        u[k] = x[k] * 2.0\n    return np.sum(np.sin(u) + x)\n"),
    "two_gathers": ("def f(x):\n    m = len(x) - 1\n    t = np.zeros(m)\n    for k in range(m):\n"
                    "        t[k] = x[1 + k]\n"
                    "    u = np.zeros(m)\n    for k2 in range(m):\n        u[k2] = x[k2]\n"
                    "    d = t - u\n    return np.sum(d * d)\n"),
    "written_times_input": ("def f(x, w):\n    u = np.zeros(len(x))\n    for k in range(1, len(x)):\n"
                            "        u[k] = x[k] - x[k - 1]\n    return np.sum(u * w * u) + np.sum(np.exp(u))\n"),
    "partial_write": ("def f(x):\n    u = x.copy()\n    for k in range(0, len(x), 2):\n        u[k] = x[k] ** 2\n"
                      "    return np.sum(np.tanh(u) * x)\n"),
    # every element written in order (the values themselves), and a prefix only (the scatter)
    "whole_write": ("def f(x):\n    u = np.ones(len(x))\n    for k in range(len(x)):\n"
                    "        u[k] = x[k] * x[k] - 1.0\n    return np.sum(u * x)\n"),
    "prefix_write": ("def f(x):\n    u = np.ones(len(x))\n    for k in range(len(x) - 1):\n"
                     "        u[k] = x[k + 1] * 3.0\n    return np.sum(u * x)\n"),
    "third_length": ("def f(x):\n    m = (len(x) + 2) // 3\n    t = np.zeros(m)\n"
                     "    for k in range(m):\n        t[k] = x[3 * k]\n    return np.sum(t * t)\n"),
}


def _python(src):
    ns: dict = {"math": math, "np": np}
    exec(src, ns)
    return ns["f"]


@pytest.mark.parametrize("options", SELECTIONS, ids=["default", "L1", "per_block"])
@pytest.mark.parametrize("name", sorted(_SOURCES))
@pytest.mark.parametrize("n", [1, 2, 7, 10])
def test_written_array_in_array_code_matches_python(name, options, n):
    src = _SOURCES[name]
    py, f = _python(src), cn.coarsen(src, **options)
    rng = np.random.default_rng(n)
    args = (rng.uniform(-1.0, 1.0, n),) + ((rng.uniform(0.5, 1.5, n),) if "w" in f.params else ())
    assert_close(f(*args), py(*args), rtol=1e-12, atol=1e-12, what=name)
    grads = f.grad(*args)
    grads = grads if isinstance(grads, tuple) else (grads,)
    for i, g in enumerate(grads):
        assert_close(g, finite_difference(py, args, i), rtol=1e-6, atol=1e-7, what=f"{name} d/d{f.params[i]}")


_TABLE = ("def f(x, c):\n    n = len(x)\n    u = np.zeros(n)\n    for k in range(n):\n"
          "        u[k] = x[k] - c - 0.5\n    return np.sum(np.exp(u) * x)\n")


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_a_float_expression_filling_a_whole_array_is_its_values(backend):
    """gmm's ``log_w[k] = logits[k] - log_norm - ...`` over ``range(k_count)`` into ``np.zeros(k_count)``: a
    float at each point, every element written in order, so the written array is the values, with no
    run-time test and no ``_put`` arm beside them (Numba compiled that arm though no call ran it)."""
    py, f = _python(_TABLE), cn.coarsen(_TABLE, backend=backend, wrt=("x", "c"))
    x, c = np.random.default_rng(3).uniform(-1.0, 1.0, 6), 0.3
    assert_close(f(x, c), py(x, c), rtol=1e-12, atol=1e-12, what="value")
    gx, gc = f.grad(x, c)
    assert_close(gx, finite_difference(py, (x, c), 0), rtol=1e-6, atol=1e-7, what="d/dx")
    assert_close(gc, finite_difference(py, (x, c), 1), rtol=1e-6, atol=1e-7, what="d/dc")
    entries = f.source[f.source.index("def f("):]     # (numba's source carries its shared helpers before)
    assert "_put(" not in entries and ".ndim == 1" not in entries


def test_an_integer_or_row_fill_keeps_the_test():
    """``i[k] + 1`` of an int array is an int at each point (the zeros make it float: the test and the copy
    stay), and ``X[k] + 0.5``, a row, is no element: still NumPy's ValueError."""
    src = ("def f(i, x):\n    n = len(i)\n    u = np.zeros(n)\n    for k in range(n):\n        u[k] = i[k] + 1\n"
           "    return np.sum(u * x)\n")
    f = cn.coarsen(src, wrt=("x",))
    i, x = np.arange(5), np.linspace(0.0, 1.0, 5)
    assert_close(f(i, x), _python(src)(i, x), rtol=1e-12, atol=1e-12, what="value")
    assert ".ndim == 1" in f.source[f.source.index("def f("):]
    row = ("def f(X):\n    n = len(X)\n    u = np.zeros(n)\n    for k in range(n):\n        u[k] = X[k] + 0.5\n"
           "    return np.sum(u)\n")
    with pytest.raises(ValueError, match="setting an array element with a sequence"):
        cn.coarsen(row)(np.ones((3, 2)))
