"""A slice read is as cheap as the loop it replaces (issue 15): ``np.sum((x[1:] - x[:-1]) ** 2)`` compiles to
one SOI whose reads are views of ``x`` (``_take``), as ``for i in range(len(x) - 1): s += (x[i + 1] - x[i]) ** 2``
does, with no zeros, no copy and no ``_put`` arm (frontend/slices.py sets a statement's slice reads up at its
start; lower/trivial.py's ``whole_fills`` proves the write of each is its values).  The values and gradients
are checked against the plain function and central differences; a slice of an array the function later
writes (in array code, and in place in a loop) keeps the value it had when it was read.
"""

from __future__ import annotations

import ast
import math

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn
from coarsen_nb.frontend.slice_setups import hoistable

SELECTIONS = [{}, {"max_soi": 1}, {"per_block": True}]


def _python(src):
    ns: dict = {"math": math, "np": np}
    exec(src, ns)
    return ns["f"]


def _check(src, args, options=None):
    """``src`` compiled with ``options``: its value is the plain function's, its gradients central differences'."""
    py, f = _python(src), cn.coarsen(src, **(options or {}))
    assert_close(f(*args), py(*args), rtol=1e-12, atol=1e-12, what=src)
    grads = f.grad(*args)
    grads = grads if isinstance(grads, tuple) else (grads,)
    for i, g in enumerate(grads):
        assert_close(g, finite_difference(py, args, i), rtol=1e-6, atol=1e-7, what=f"d/d{f.params[i]} of {src}")
    return f


ENERGY = "def f(x):\n    return np.sum((x[1:] - x[:-1]) ** 2)\n"


@pytest.mark.parametrize("n", [1, 2, 3, 8])
def test_neighbour_differences_are_one_soi_of_views(n):
    f = _check(ENERGY, (np.random.default_rng(n).uniform(-1.0, 1.0, n),))
    src = f.source
    assert "_put(" not in src and "copy=True" not in src, src
    value, grad = src[src.index("def f(x)"):src.index("def f_vjp")], src[src.index("def f_grad"):src.index("def f_jvp")]
    assert "zeros" not in value and grad.count("zeros") == 1, src     # b_x's alone
    assert grad.count(": adjoint") == 1, grad       # the reads and the sum: one SOI, one adjoint
    assert grad.count("_take(x, ") == 2 and grad.count("_scatter_add(b_x, ") == 2, grad


@pytest.mark.parametrize("step", [1, 2, 3])
@pytest.mark.parametrize("lo, hi", [(1, None), (None, -1), (2, -1), (0, -3), (3, None), (1, 4), (None, None)])
def test_constant_bounds_without_clamps_are_pythons(lo, hi, step):
    """A constant start >= 0 and a constant stop < 0 are not clamped: the length is still Python's,
    for arrays shorter than the bounds too (empty slices)."""
    s = f"{'' if lo is None else lo}:{'' if hi is None else hi}:{step}"
    src = f"def f(x):\n    return np.sum(np.sin(x[{s}]) * x[{s}]) + np.sum(x) * 0.5\n"
    for n in (1, 2, 4, 7):
        _check(src, (np.random.default_rng(n).uniform(-1.0, 1.0, n),))


_WRITTEN = {
    # u read through slices, then written in place: the reads keep u's old values (array code)
    "written_after": ("def f(x):\n    u = x * 1.0\n    s = np.sum(u[1:] * u[:-1])\n    u[1] = 5.0\n"
                      "    return s + np.sum(u[1:] ** 2)\n"),
    # u written in place by a loop (no copy per iteration) and read through slices before each write
    "written_in_loop": ("def f(x):\n    u = x * 1.0\n    s = 0.0\n    for i in range(len(x) - 1):\n"
                        "        s = s + np.sum(u[1:] * u[:-1])\n        u[i] = s * 0.1\n"
                        "    return s + np.sum(u * u)\n"),
    # a copy of a slice written: the array it came from keeps its values
    "copy_written": ("def f(x):\n    y = np.copy(x[1:])\n    y[0] = 7.0\n"
                     "    return np.sum(y * x[:-1]) + np.sum(x[1:])\n"),
    # the same array sliced in two statements, rebound between them
    "rebound": ("def f(x):\n    a = np.sum(x[1:] * x[:-1])\n    x = x[::-1] * 2.0\n"
                "    return a + np.sum(x[1:] ** 3)\n"),
}


@pytest.mark.parametrize("options", SELECTIONS, ids=["default", "L1", "per_block"])
@pytest.mark.parametrize("name", sorted(_WRITTEN))
@pytest.mark.parametrize("n", [2, 3, 7])
def test_slices_of_written_arrays_keep_their_values(name, options, n):
    _check(_WRITTEN[name], (np.random.default_rng(n).uniform(-1.0, 1.0, n),), options)


def _stmt(src: str) -> tuple[ast.stmt, ast.Subscript]:
    s = ast.parse(src).body[0]
    return s, next(n for n in ast.walk(s) if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Slice))


@pytest.mark.parametrize("src, hoisted", [
    ("s = np.sum(x[1:] - x[:-1])", True),
    ("s += np.sum(x[2:-1:2])", True),
    ("return np.sum(x[i:] * 2.0)", False),              # a bound that is no literal
    ("s = np.sum(f(x)[1:])", False),                    # not a variable
    ("s = sum(np.sum(y[1:]) for y in ys)", False),      # y is bound inside the statement
    ("s = np.sum(x[1:]) if len(x) > 1 else 0.0", False),    # read on one arm only
    ("s = (x := x * 2.0)[0] + np.sum(x[1:])", False),   # x rebound inside the statement
])
def test_which_slice_reads_are_set_up_at_the_start_of_their_statement(src, hoisted):
    assert hoistable(*reversed(_stmt(src))) is hoisted


def test_a_row_written_as_an_element_is_still_numpys_error():
    """A write of ``X[k]`` (a row of a matrix) into ``u[k]`` fills no element: it is not printed as its values
    (lower/trivial.py's ``whole_fills`` takes an element at each point) and stays NumPy's ValueError, at the
    user's line."""
    src = ("def f(X):\n    u = np.zeros(len(X))\n    for k in range(len(X)):\n        u[k] = X[k]\n"
           "    return np.sum(u)\n")
    with pytest.raises(ValueError, match="setting an array element with a sequence"):
        cn.coarsen(src)(np.ones((3, 2)))
