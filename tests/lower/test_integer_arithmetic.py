"""Integer arithmetic of the user's ``//``, ``%``, ``math.floor`` and ``math.ceil`` is exact.

SymPy keeps ``(n + 2) // 3`` of integers as ``floor(n/3 + 2/3)``; printed term by term that was float
arithmetic, and ``math.floor(0.3333333333333333 * n + 0.6666666666666666)`` is 2 at n = 7, where
Python gives 3 — a silently wrong loop bound (found by the slicing work, 2026-12-02).  Random integer
expressions of ``n`` and ``m``, used as a value and as a loop bound, are compared with Python.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coarsen_nb as cn


def _python(src: str):
    ns: dict = {"math": math, "np": np}
    exec(src, ns)
    return ns["f"]


@st.composite
def int_exprs(draw, depth=2):
    """An integer expression of n and m: + - * by small constants, // and % by positive constants."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(["n", "m", str(draw(st.integers(-5, 9)))]))
    a = draw(int_exprs(depth - 1))
    op = draw(st.sampled_from(["+", "-", "*", "//", "%"]))
    if op in ("//", "%"):
        return f"({a} {op} {draw(st.integers(1, 7))})"
    return f"({a} {op} {draw(int_exprs(depth - 1))})"


@settings(max_examples=60, deadline=None)
@given(int_exprs(), st.lists(st.tuples(st.integers(-40, 40), st.integers(-40, 40)), min_size=1, max_size=4))
def test_integer_expressions_equal_pythons(e, points):
    src = (f"def f(a, n, m):\n    k = {e}\n    s = 0.0\n    for i in range(k):\n        s += a * (i + 1)\n"
           f"    return s + a * k\n")
    py, f = _python(src), cn.coarsen(src, wrt=("a",))
    for n, m in points:
        try:
            want = py(1.5, n, m)
        except ZeroDivisionError:
            continue
        assert f(1.5, n, m) == want, (src, n, m)
        assert f.grad(1.5, n, m) == pytest.approx(py(1.0, n, m) / 1.0), (src, n, m)


@pytest.mark.parametrize("expr", ["(n + 2) // 3", "(2 * n + 1) // 5", "-n // 3", "(n - 1) % 4", "-(-n // 3)",
                                  "math.floor((n + 2) / 3)", "math.ceil(n / 3)", "(7 * n) // 3 - n % 3"])
def test_floor_division_of_integers_at_every_n(expr):
    src = f"def f(a, n):\n    k = {expr}\n    return a * k\n"
    py, f = _python(src), cn.coarsen(src, wrt=("a",))
    for n in range(-30, 31):
        assert f(1.0, n) == py(1.0, n), (expr, n)
