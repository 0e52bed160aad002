"""The glue prints no array it does not need: a loop that fills a fresh ``np.zeros(n)``/``np.empty(n)`` whole with
one float at each point is its values, and the allocation it no longer needs keeps its check of ``n``.

conv1d's ``out[i] = acc`` (a sum over the taps) and the corpus's ``empty_write`` (``e[i] = sin(x[i]) * (i + 1)``
into ``np.empty(len(x))``) printed the zeros, a run-time test, a copy of the values and a ``_put`` arm.  Each case
is checked against the plain function (values, and its error where ``n < 0``) and finite differences.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn

_CONV = ("def f(x, w):\n    n = len(x) - len(w) + 1\n    out = np.zeros(n)\n    for i in range(n):\n"
         "        acc = 0.0\n        for k in range(len(w)):\n            acc += w[k] * x[i + k]\n"
         "        out[i] = acc\n    loss = 0.0\n    for i in range(n):\n        loss += out[i] ** 2\n"
         "    return loss\n")
_EMPTY = ("def f(x):\n    e = np.empty(len(x))\n    for i in range(len(x)):\n"
          "        e[i] = math.sin(x[i]) * (i + 1)\n    return np.sum(e)\n")
# an integer at each point: NumPy stores it as a float, so the copy into the float array stays
_INTEGER = ("def f(x):\n    e = np.empty(len(x))\n    for i in range(len(x)):\n        e[i] = i * 2\n"
            "    return np.sum(e * x)\n")


def _python(src):
    ns: dict = {"math": math, "np": np}
    exec(src, ns)
    return ns["f"]


def _entries(f) -> str:
    return f.source[f.source.index("def f("):]     # (numba's source carries its shared helpers before)


def _args(src, n, rng):
    x = rng.uniform(-1.0, 1.0, n)
    return (x, rng.uniform(-1.0, 1.0, 3)) if "w" in src.split(":")[0] else (x,)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("name, src", [("conv", _CONV), ("empty", _EMPTY), ("integer", _INTEGER)])
@pytest.mark.parametrize("n", [3, 4, 11])
def test_a_whole_fill_matches_python(backend, name, src, n):
    py, f = _python(src), cn.coarsen(src, backend=backend)
    args = _args(src, n, np.random.default_rng(n))
    assert_close(f(*args), py(*args), rtol=1e-12, atol=1e-12, what=f"{name} value")
    grads = f.grad(*args)
    grads = grads if isinstance(grads, tuple) else (grads,)
    for i, g in enumerate(grads):
        assert_close(g, finite_difference(py, args, i), rtol=1e-6, atol=1e-7, what=f"{name} d/d{f.params[i]}")


@pytest.mark.parametrize("src", [_CONV, _EMPTY])
def test_a_float_fill_prints_neither_the_allocation_nor_a_copy(src):
    """A sum over an inner loop (conv) and a function of an element times the index (empty) are one float at
    each point: no zeros or empty array, no run-time test, no copy, no ``_put``."""
    f = cn.coarsen(src)
    f(*_args(src, 5, np.random.default_rng(0)))
    text = _entries(f)
    for made in ("xp.zeros(n)", "xp.empty(", ".ndim == 1", "_put(", "copy=True"):
        assert made not in text, made


def test_an_integer_fill_keeps_the_copy():
    f = cn.coarsen(_INTEGER)
    f(np.ones(3))
    assert ".ndim == 1" in _entries(f)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_a_dropped_allocation_keeps_numpys_error_at_its_line(backend):
    """``np.zeros(n)`` with ``n < 0`` raises whether or not the zeros are read: the allocation the fill no
    longer needs leaves its check, and the error names the user's line of the ``np.zeros``."""
    py, f = _python(_CONV), cn.coarsen(_CONV, backend=backend)
    x, w = np.ones(3), np.ones(6)
    with pytest.raises(ValueError, match="negative dimensions are not allowed") as plain:
        py(x, w)
    for run in (f, f.grad):
        with pytest.raises(ValueError, match="negative dimensions are not allowed") as err:
            run(x, w)
        assert "line 3" in str(err.value) and "np.zeros(n)" in str(err.value), str(err.value)
    assert "xp.zeros(n)" not in _entries(f) and "if n < 0:" in _entries(f)
    assert plain.type is ValueError
