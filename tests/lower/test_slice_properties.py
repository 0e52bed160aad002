"""Property tests of slicing: random bounds (negative, past either end, omitted) and constant steps
(positive, negative, larger than the array) on random-length arrays.  The reference is NumPy's own
slicing of the same array; gradients are checked against central finite differences.

Bounds are int parameters of the compiled function (so one compilation serves many bounds: the
normalization of ``slice.indices`` runs in the generated code), the step is a constant of the source, and
an omitted bound is a source without it."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference
from hypothesis import given, settings
from hypothesis import strategies as st

import coarsen_nb as cn

_STEPS = (1, 2, 3, -1, -2, 5, -7)


def _bounds(lower: bool, upper: bool, step: int, a: str = "a", b: str = "b") -> str:
    s = "" if step == 1 and lower and upper else f":{step}"
    return f"{a if lower else ''}:{b if upper else ''}{s}"


@functools.cache
def _compiled(kind: str, lower: bool, upper: bool, step: int):
    sl = _bounds(lower, upper, step)
    body = {"read": f"    return x[{sl}]\n",
            "weighted": f"    return np.sum(np.sin(x[{sl}]) * w)\n",
            "write": f"    u = np.zeros(len(x))\n    u[{sl}] = w\n    return u\n",
            "augmented": f"    u = x * 1.0\n    u[{sl}] += np.exp(w)\n    return np.sum(u * x)\n"}[kind]
    src = f"def f(x, w, a, b):\n{body}"
    namespace = {"np": np}
    exec(src, namespace)
    return cn.coarsen(src, wrt=("x", "w") if kind in ("weighted", "augmented") else ("x",)), namespace["f"]


@st.composite
def _slices(draw):
    n = draw(st.integers(0, 9))
    x = np.asarray(draw(st.lists(st.floats(-2, 2, allow_nan=False), min_size=n, max_size=n)), dtype=float)
    a, b = draw(st.integers(-12, 12)), draw(st.integers(-12, 12))
    return x, a, b, draw(st.booleans()), draw(st.booleans()), draw(st.sampled_from(_STEPS))


def _python_slice(lower, upper, step, a, b):
    return slice(a if lower else None, b if upper else None, step)


@settings(max_examples=60, deadline=None)
@given(_slices())
def test_read_is_numpy_slicing(case):
    x, a, b, lower, upper, step = case
    f, _ = _compiled("read", lower, upper, step)
    want = x[_python_slice(lower, upper, step, a, b)]
    got = np.asarray(f(x, 0.0, a, b))
    assert got.shape == want.shape and np.array_equal(got, want), (got, want)


@settings(max_examples=40, deadline=None)
@given(_slices(), st.data())
def test_weighted_read_gradient(case, data):
    x, a, b, lower, upper, step = case
    m = len(x[_python_slice(lower, upper, step, a, b)])
    w = np.asarray(data.draw(st.lists(st.floats(-2, 2), min_size=m, max_size=m)), dtype=float)
    f, py = _compiled("weighted", lower, upper, step)
    args = (x, w, a, b)
    assert_close(f(*args), py(*args), rtol=1e-12, atol=1e-12, what="value")
    gx, gw = f.grad(*args)
    assert_close(gx, finite_difference(py, args, 0), rtol=1e-5, atol=1e-6, what="d/dx")
    assert_close(gw, finite_difference(py, args, 1), rtol=1e-5, atol=1e-6, what="d/dw")


@settings(max_examples=40, deadline=None)
@given(_slices(), st.data())
def test_write_is_numpy_slice_assignment(case, data):
    x, a, b, lower, upper, step = case
    sl = _python_slice(lower, upper, step, a, b)
    m = len(x[sl])
    w = data.draw(st.one_of(st.floats(-2, 2), st.lists(st.floats(-2, 2), min_size=m, max_size=m)))
    w = np.asarray(w, dtype=float) if isinstance(w, list) else w
    f, py = _compiled("write", lower, upper, step)
    want = np.zeros(len(x))
    want[sl] = w
    assert np.array_equal(np.asarray(f(x, w, a, b)), want)
    assert np.array_equal(py(x, w, a, b), want)


@settings(max_examples=30, deadline=None)
@given(_slices(), st.data())
def test_augmented_write_gradient(case, data):
    x, a, b, lower, upper, step = case
    m = len(x[_python_slice(lower, upper, step, a, b)])
    w = np.asarray(data.draw(st.lists(st.floats(-2, 2), min_size=m, max_size=m)), dtype=float)
    f, py = _compiled("augmented", lower, upper, step)
    args = (x, w, a, b)
    assert_close(f(*args), py(*args), rtol=1e-12, atol=1e-12, what="value")
    gx, gw = f.grad(*args)
    assert_close(gx, finite_difference(py, args, 0), rtol=1e-5, atol=1e-6, what="d/dx")
    assert_close(gw, finite_difference(py, args, 1), rtol=1e-5, atol=1e-6, what="d/dw")


@pytest.mark.parametrize("step", [2, 3, -3, 5])
def test_enumerate_of_a_stepped_range_counts_like_python(step):
    """Regression: the count of ``range(a, b, s)`` inside enumerate/zip was ``(span + |s| - 1) // |s|``
    printed with float coefficients, one short for len(x) = 7 and s = 3 (the ceil_quotient fix)."""
    src = (f"def f(x, a):\n    s = 0.0\n    for k, i in enumerate(range(a, len(x) if {step} > 0 else -1, {step})):\n"
           "        s = s + x[i] * (k + 1)\n    return s\n")
    namespace = {"np": np}
    exec(src, namespace)
    f = cn.coarsen(src)
    for n in range(1, 13):
        x = np.arange(1.0, n + 1.0)
        for a in {0, n // 2, n - 1}:
            assert f(x, a) == namespace["f"](x, a), (n, a)


@functools.cache
def _compiled_2d(axis: int, lower: bool, upper: bool, step: int):
    sl = _bounds(lower, upper, step)
    index = f"i, {sl}" if axis == 1 else f"{sl}, i"
    src = f"def f(X, w, i, a, b):\n    return np.sum(np.sin(X[{index}]) * w)\n"
    namespace = {"np": np}
    exec(src, namespace)
    return cn.coarsen(src, wrt=("X",)), namespace["f"]


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 5), st.integers(1, 5), st.integers(0, 1), _slices(), st.data())
def test_row_and_column_slices(rows, cols, axis, case, data):
    _, a, b, lower, upper, step = case
    X = np.asarray(data.draw(st.lists(st.floats(-2, 2), min_size=rows * cols, max_size=rows * cols)),
                   dtype=float).reshape(rows, cols)
    i = data.draw(st.integers(-(rows if axis == 1 else cols), (rows if axis == 1 else cols) - 1))
    sl = _python_slice(lower, upper, step, a, b)
    part = X[i, sl] if axis == 1 else X[sl, i]
    w = np.asarray(data.draw(st.lists(st.floats(-2, 2), min_size=len(part), max_size=len(part))), dtype=float)
    f, py = _compiled_2d(axis, lower, upper, step)
    args = (X, w, i, a, b)
    assert_close(f(*args), py(*args), rtol=1e-12, atol=1e-12, what="value")
    assert_close(f.grad(*args), finite_difference(py, args, 0), rtol=1e-5, atol=1e-6, what="d/dX")


@functools.cache
def _compiled_block(rows: tuple, cols: tuple):
    index = f"{_bounds(*rows, 'a0', 'b0')}, {_bounds(*cols, 'a1', 'b1')}"
    src = f"def f(X, W, a0, b0, a1, b1):\n    return np.sum(np.sin(X[{index}]) * W)\n"
    namespace = {"np": np}
    exec(src, namespace)
    return cn.coarsen(src, wrt=("X",)), namespace["f"]


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 4), st.integers(0, 4), _slices(), _slices(), st.data())
def test_block_slices(rows, cols, r, c, data):
    (_, a0, b0, lo0, hi0, s0), (_, a1, b1, lo1, hi1, s1) = r, c
    X = np.asarray(data.draw(st.lists(st.floats(-2, 2), min_size=rows * cols, max_size=rows * cols)),
                   dtype=float).reshape(rows, cols)
    block = X[_python_slice(lo0, hi0, s0, a0, b0), _python_slice(lo1, hi1, s1, a1, b1)]
    W = np.asarray(data.draw(st.lists(st.floats(-2, 2), min_size=block.size, max_size=block.size)),
                   dtype=float).reshape(block.shape)
    f, py = _compiled_block((lo0, hi0, s0), (lo1, hi1, s1))
    args = (X, W, a0, b0, a1, b1)
    assert_close(f(*args), py(*args), rtol=1e-12, atol=1e-12, what="value")
    assert_close(f.grad(*args), finite_difference(py, args, 0), rtol=1e-5, atol=1e-6, what="d/dX")
