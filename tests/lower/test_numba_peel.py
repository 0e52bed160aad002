"""``backend="numba"``: a fused loop whose body branches on its first iteration runs that one apart.

A loop carrying the previous element (``y_prev = yi``) lifts to ``γ(y_prev₀ if k == 0, y[k - 1])``; the numba
fuser (``lower/numba_peel.py``) runs the first iteration in a loop of at most one trip and the others in a
loop where the γ is its other arm.  Checked against the NumPy backend (value, ``value_and_grad`` and
``grad``: 1e-10), the plain function and central differences, on every length from 0 (hypothesis for the
data), and the shape of the generated code (the later loop has no branch; brachistochrone's computes three
square roots an iteration, not four).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from gradcheck import assert_close
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba_pairs import BackendPairs, as_tuple

from coarsen_nb.kernels.brachistochrone import brachistochrone
from coarsen_nb.lower import numba_peel

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


def polyline(y, h):
    """The previous point carried: its value and a function of it both read in the next step."""
    t = 0.0
    prev = 0.0
    for yi in y:
        dy = yi - prev
        t += math.sqrt(h * h + dy * dy) * math.exp(0.1 * prev)
        prev = yi
    return t


def first_apart(x, a):
    """The first iteration written as an explicit ``if i == 0`` by the user."""
    s = 0.0
    for i in range(len(x)):
        if i == 0:
            s += a * x[i] * x[i]
        else:
            s += math.sin(x[i] - x[i - 1]) * a + x[i - 1] ** 2
    return s


def late_first(x, a):
    """A range that starts at 2: the first iteration is ``i == 2``."""
    s = 0.0
    for i in range(2, len(x)):
        if i == 2:
            s += a * x[i]
        else:
            s += a * x[i] * x[i - 1] + math.cos(x[i - 2])
    return s


def from_m(x, a, m):
    """A range from a number parameter: the later loop starts at ``m + 1``."""
    s = 0.0
    for i in range(m, len(x)):
        if i == m:
            s += a * x[i]
        else:
            s += a * math.sqrt(1.0 + x[i - 1] ** 2) * x[i]
    return s


def curve(y, y_end, length, g):
    return brachistochrone(y, y_end, length, g)


PROGRAMS = {"polyline": (polyline, ("y", "h")), "first_apart": (first_apart, ("x", "a")),
            "late_first": (late_first, ("x", "a")), "from_m": (from_m, ("x", "a")),
            "curve": (curve, ("y",))}
PAIRS = BackendPairs(PROGRAMS)


def _inputs(name, x):
    if name == "polyline":
        return (x, 0.3)
    if name == "curve":
        return (-1.0 - np.abs(x), -1.5, 2.0, 9.81)
    if name == "from_m":
        return (x, 0.7, min(2, len(x)))
    return (x, 0.7)


def _check_grad(name, args):
    """``f.grad`` (the gradient-only entry, its own loop functions) equals the NumPy backend's."""
    _, by_numpy, by_numba = PAIRS.pair(name)
    for g, w in zip(as_tuple(by_numba.grad(*args)), as_tuple(by_numpy.grad(*args)), strict=True):
        assert_close(g, w, rtol=1e-10, atol=1e-12, what=f"{name} grad")


# (curve on no interior points: both backends' gradient raises IndexError at the end segment's ``b_y[n - 1]``, on
# main before this change too -- the glue's scatter, not a loop; left out here)
LENGTHS = [(name, n) for name in PROGRAMS for n in (0, 1, 2, 3, 4, 9, 40) if (name, n) != ("curve", 0)]


@pytest.mark.parametrize("name,n", LENGTHS)
def test_numba_equals_numpy_and_central_differences(name, n):
    args = _inputs(name, np.random.default_rng(n).uniform(-1.5, 1.5, n))
    if n:
        PAIRS.check_with_differences(name, args)
    else:
        PAIRS.check(name, args)
    _check_grad(name, args)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(PROGRAMS)), n=st.integers(0, 15), seed=st.integers(0, 2**16))
def test_random_data_and_lengths(name, n, seed):
    n = max(n, 1) if name == "curve" else n
    args = _inputs(name, np.random.default_rng(seed).uniform(-2.0, 2.0, n))
    PAIRS.check(name, args)
    _check_grad(name, args)


def _loops(source: str, function: str) -> list[str]:
    """The top-level ``for`` loops of one generated function, each as its text (header and body)."""
    loops: list[list[str]] = []
    inside = False
    for line in _called(source, function).splitlines()[1:]:
        if line.startswith("    for "):
            loops.append([line])
            inside = True
        elif inside and line.startswith("        "):
            loops[-1].append(line)
        else:
            inside = False
    return ["\n".join(lines) for lines in loops]


# the peeled first iteration's range: ``range(0, min(n, 1))``, its ``min`` printed as the conditional Numba
# computes (lower/numba_builtin_calls.py)
_FIRST_ONLY = re.compile(r"range\(0, (\w+) if \1 < 1 else 1\)")


@pytest.mark.parametrize("name", ["polyline", "first_apart", "curve"])
def test_the_later_iterations_run_without_the_branch(name):
    _, _, by_numba = PAIRS.pair(name)
    args = _inputs(name, np.linspace(-1.0, 1.0, 6))
    by_numba.grad(*args)
    source = _generated(by_numba)
    peeled = [f for f in _functions(source) if _FIRST_ONLY.search(_called(source, f))]
    assert peeled, source
    for function in peeled:
        loops = _loops(source, function)
        assert len(loops) == 2, (function, source)
        first, later = loops
        assert _FIRST_ONLY.search(first.splitlines()[0]) and " if " not in later.splitlines()[0], (first, later)
        assert "if " not in later, later


def test_brachistochrones_later_loop_takes_three_square_roots():
    """The speed at the previous point was computed in two arms of ``k == 0`` (its value, its derivative):
    once now.  The hand-written loop carries it and takes two."""
    _, _, by_numba = PAIRS.pair("curve")
    args = _inputs("curve", np.linspace(-1.0, 1.0, 6))
    by_numba.grad(*args)
    source = _generated(by_numba)
    (scatter,) = [f for f in _functions(source) if "_vjp_scatter" in f and f + "(" in _called(source, "curve_grad")]
    later = _loops(source, scatter)[1]
    assert later.count("math.sqrt(") == 3, later


def test_no_peeling_without_a_first_iteration_test():
    """A loop whose body does not test its index against the start is printed as one loop."""
    def plain(x, a):
        s = 0.0
        for i in range(1, len(x)):
            s += a * x[i] * x[i - 1]
        return s

    pairs = BackendPairs({"plain": (plain, ("x", "a"))})
    args = (np.linspace(-1.0, 1.0, 7), 0.5)
    pairs.check("plain", args)
    source = _generated(pairs.pair("plain")[2])
    assert "min(" not in source and not _FIRST_ONLY.search(source), source


def test_settled_drops_false_clauses_and_takes_a_leading_true_one():
    import sympy as sp

    from coarsen_nb.phi.gammas import Gamma

    k, a, b, c = sp.symbols("k a b c")
    first = sp.Eq(k, 0)
    decided = {first: sp.false}
    assert numba_peel.settled(Gamma((a, first), (b, True)) + c, decided) == b + c
    three = Gamma((a, first), (b, sp.Gt(c, 0)), (c, True))
    assert numba_peel.settled(three, decided) == Gamma((b, sp.Gt(c, 0)), (c, True))
    assert numba_peel.settled(Gamma((a, sp.Gt(c, 0)), (b, True)), decided) == Gamma((a, sp.Gt(c, 0)), (b, True))


def _functions(source: str) -> list[str]:
    return [line[4:line.index("(")] for line in source.splitlines() if line.startswith("def ")]


def _called(source: str, function: str) -> str:
    text = source[source.index(f"def {function}("):]
    return text[:text.find("\n@", 1)] if "\n@" in text else text


def _generated(f) -> str:
    """The module's own functions (not the numba namespace's text it carries, nor its header)."""
    return "\n".join(p.text for p in f.module_parts if p.role not in ("carried", "head"))
