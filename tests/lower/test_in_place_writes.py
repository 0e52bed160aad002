"""Element writes inside iterated loops mutate the array in place (lower/in_place.py): the tape holds
the overwritten elements, not one copy of the array per iteration.

Each program keeps its loop iterated (a nonlinear state, ``math.sin(s)``), writes array elements, and
is checked for its value against Python, its gradient against central differences and its JVP against
the gradient, under the three selections, at trip counts 0, 1, 2, 7 and 25, with fallback warnings
as errors.  A program that breaks an in-place condition (a whole-array read after the write) is here
too: it must keep the copying form and stay right.  The memory test measures
the tape: a copy per iteration is O(n²) bytes, the in-place record O(n).
"""

from __future__ import annotations

import math
import subprocess
import sys
import tracemalloc
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_loop_regressions import SELECTIONS, _check

import coarsen_nb as cn


def running_sine(x, a):
    y = np.zeros(len(x))
    s = 0.0
    for i in range(len(x)):
        s = math.sin(s) + a * x[i]
        y[i] = s
    return np.sum(y * y)


def reads_the_previous_write(x, a):
    y = np.zeros(len(x) + 1)
    for i in range(len(x)):
        y[i + 1] = math.sin(y[i]) * a + x[i]
    return np.sum(y * x[0]) + y[len(x)] ** 2


def two_writes_per_iteration(x, a):
    """Both writes hit one element in the middle iteration: undone last first."""
    y = np.ones(len(x))
    s = 0.5
    for i in range(len(x)):
        s = math.tanh(s * a + x[i] + y[len(x) - 1 - i])
        y[i] = s
        y[len(x) - 1 - i] = s * s
    return np.sum(y * np.cos(x))


def reads_between_two_writes(x, a):
    """The second write reads what the first wrote (an element read of the version between them)."""
    y = np.ones(len(x))
    s = 0.5
    for i in range(len(x)):
        s = math.tanh(s * a + x[i])
        y[i] = y[i] * s
        y[len(x) - 1 - i] = y[len(x) - 1 - i] + s * s
    return np.sum(y * np.cos(x))


def two_arrays(x, a):
    u = np.zeros(len(x))
    v = x * 1.0
    s = a
    for i in range(len(x)):
        s = math.sin(s) + v[i]
        u[i] = s * a
        v[i] = s * 0.5 - v[i] * a
    return np.sum(u * v)


def writes_into_a_copy_of_a_parameter(x, a):
    y = x.copy()
    s = a
    for i in range(len(x)):
        s = math.cos(s) * y[i]
        y[i] = s
    return np.sum(y) * a


def reads_another_written_array(x, a):
    u = np.zeros(len(x))
    v = x * 1.0
    s = a
    for i in range(len(x)):
        s = math.sin(s) + v[i]
        u[i] = s * a
        v[i] = s - u[i] * 0.5
    return np.sum(u * v)


def sums_the_array_it_writes(x, a):
    """A whole-array read after the write (``np.sum(y)``): its adjoint would read the array, so it copies."""
    y = np.zeros(len(x))
    s = 0.0
    for i in range(len(x)):
        s = math.sin(s) + a * x[i]
        y[i] = s
        s = s + 0.01 * np.sum(y)
    return np.sum(y * y)


def reads_the_element_it_wrote(x, a):
    """``y[i]`` read after the write in the same iteration: an element read of the latest version."""
    y = np.zeros(len(x))
    s = 0.0
    for i in range(len(x)):
        y[i] = math.sin(s) + a * x[i]
        s = y[i] * 0.9
    return np.sum(y * y) + s


def two_dimensional(x, a):
    n = len(x)
    z = np.outer(x, np.zeros(2))
    s = a
    for i in range(n):
        s = math.sin(s) + x[i]
        z[i, 0] = s
        z[i, 1] = s * s
    return np.sum(z * z)


def conditional_write(x, a):
    y = np.zeros(len(x))
    s = 0.0
    for i in range(len(x)):
        s = math.sin(s) + a * x[i]
        if s > 0.2:
            y[i] = s
    return np.sum(y * y)


def both_arms_write(x, a):
    y = np.ones(len(x))
    s = 0.3
    for i in range(len(x)):
        s = math.sin(s * a) + x[i]
        if s > 0.0:
            y[i] = s
        else:
            y[len(x) - 1 - i] = y[len(x) - 1 - i] - s
    return np.sum(y * y)


def reads_then_writes_in_a_branch(x, a):
    y = x * 0.5
    s = 0.1
    for i in range(len(x)):
        s = math.sin(s + y[i]) * a
        if s > 0.0:
            y[i] = y[i] + s
    return np.sum(y * y) + s


def nested_loops_inner_writes(x, a):
    """An inner iterated loop writing in place, re-run by an outer iterated loop (and by its replay)."""
    total = 0.0
    for r in range(3):
        y = np.zeros(len(x))
        s = a * r
        for i in range(len(x)):
            s = math.sin(s) + x[i]
            y[i] = s
        total = math.sin(total) + np.sum(y * y)
    return total


def nested_loops_outer_writes(x, a):
    """The outer iterated loop writes in place around an inner iterated loop."""
    z = np.zeros(4)
    t = a
    for r in range(4):
        s = t
        for i in range(len(x)):
            s = math.sin(s) * 0.9 + x[i]
        t = math.cos(t) + s
        z[r] = t
    return np.sum(z * z)


PROGRAMS = [running_sine, reads_the_previous_write, two_writes_per_iteration, reads_between_two_writes, two_arrays,
            reads_another_written_array, sums_the_array_it_writes,
            writes_into_a_copy_of_a_parameter, reads_the_element_it_wrote, two_dimensional, conditional_write,
            both_arms_write, reads_then_writes_in_a_branch, nested_loops_inner_writes, nested_loops_outer_writes]
COPYING = {sums_the_array_it_writes}          # the one program that breaks a condition
IN_PLACE = set(PROGRAMS) - COPYING


def _inputs(n):
    rng = np.random.default_rng(n)
    return rng.uniform(-0.8, 0.8, n), 0.7


@pytest.mark.parametrize("selection", SELECTIONS)
@pytest.mark.parametrize("n", (0, 1, 2, 7, 25))
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_value_gradient_and_tangent(fn, n, selection):
    if n == 0 and fn is reads_the_previous_write:
        n = 1                          # (it reads x[0])
    x, a = _inputs(n)
    kept = x.copy()
    _check(fn, (x, a), selection)
    np.testing.assert_array_equal(x, kept)      # the caller's array is never written


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_which_loops_write_in_place(fn):
    """The programs that meet the conditions write in place; the others still copy per write."""
    f = cn.coarsen(fn, wrt=("x", "a"))
    f.grad(*_inputs(3))
    source = f.source[f.source.index(f"def {f.name}("):]
    assert ("_w.append(" in source) == (fn in IN_PLACE)
    assert ("upd = xp.asarray(" in source) == (fn not in IN_PLACE)     # the copying form
    assert ("du = xp.asarray(" in source) == (fn not in IN_PLACE)      # (and of the tangent)


@pytest.mark.parametrize("fn", sorted(IN_PLACE, key=lambda f: f.__name__), ids=lambda f: f.__name__)
def test_the_in_place_module_is_lint_clean(fn, tmp_path):
    """The records, the undo and the branches' flags are code a user reads: ruff as for the corpus."""
    f = cn.coarsen(fn, wrt=("x", "a"))
    f.grad(*_inputs(3))
    path = tmp_path / f"{fn.__name__}_generated.py"
    path.write_text(f.source)
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--isolated", "--select", "E,F,W",
                        "--ignore", "E501", "--output-format", "concise", str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def _tape_bytes(f, args):
    tracemalloc.start()
    try:
        f.grad(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_tape_holds_the_written_elements_not_copies():
    """At n = 3000 a copy per iteration would be 3000 arrays of 24 kB (72 MB); the record is a few
    hundred bytes per iteration.  Doubling n doubles the peak, not quadruples it."""
    f = cn.coarsen(running_sine, wrt=("x", "a"))
    f.grad(*_inputs(10))                           # compiled before measuring
    small, large = (_tape_bytes(f, _inputs(n)) for n in (3000, 6000))
    assert large < 1000 * 6000, large
    assert large < 3.0 * small, (small, large)


@pytest.mark.parametrize("fn", [running_sine, two_dimensional, both_arms_write], ids=lambda f: f.__name__)
def test_the_compiled_backend_writes_in_place_too(fn, tmp_path, monkeypatch):
    """The same statements under ``backend="numba"``: values, gradients and tangents equal NumPy's."""
    monkeypatch.setenv("COARSEN_NB_CACHE", str(tmp_path))
    args = _inputs(9)
    tangents = (np.ones(9), 1.0)
    compiled, plain = (cn.coarsen(fn, wrt=("x", "a"), backend=b) for b in ("numba", "numpy"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # no named fallback to the NumPy code
        got = compiled.value_and_grad(*args), compiled.jvp(args, tangents)
    want = plain.value_and_grad(*args), plain.jvp(args, tangents)
    assert math.isclose(got[0][0], want[0][0], rel_tol=1e-12)
    for g, w in zip(got[0][1], want[0][1], strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
    assert math.isclose(got[1][1], want[1][1], rel_tol=1e-12, abs_tol=1e-14)


# -- random programs: writes and reads of one array in an iterated loop, in any order --------------

_INDICES = ("i", "n - 1 - i", "i // 2")
_INITS = ("np.zeros(n)", "x * 0.5", "np.ones(n)")


@st.composite
def _write_programs(draw):
    """``y`` written at one or two indices per iteration, maybe under a branch on the loop state, its
    elements read before or after the writes: the in-place conditions hold for some, not for others."""
    lines = ["def f(x, a):", "    n = len(x)", f"    y = {draw(st.sampled_from(_INITS))}", "    s = 0.25",
             "    for i in range(n):",
             f"        s = math.sin(s * a + x[i] + 0.5 * y[{draw(st.sampled_from(_INDICES))}])"]
    for _ in range(draw(st.integers(1, 2))):
        target, read = draw(st.sampled_from(_INDICES)), draw(st.sampled_from(_INDICES))
        value = draw(st.sampled_from(["s * a", f"y[{read}] + s", f"math.tanh(y[{read}]) * s"]))
        kind = draw(st.sampled_from(["plain", "if", "if-else"]))
        if kind == "plain":
            lines.append(f"        y[{target}] = {value}")
        else:
            lines += ["        if s > 0.1:", f"            y[{target}] = {value}"]
            if kind == "if-else":
                lines += ["        else:", f"            y[{draw(st.sampled_from(_INDICES))}] = s - a"]
        after = draw(st.sampled_from(["", "element", "element", "sum"]))
        if after == "element":
            lines.append(f"        s = s + 0.5 * y[{draw(st.sampled_from(_INDICES))}]")
        elif after == "sum":           # a whole-array read after a write: the copying form
            lines.append("        s = s + 0.01 * np.sum(y)")
    lines.append("    return np.sum(y * y) + s")
    return "\n".join(lines) + "\n"


@settings(max_examples=40, deadline=None)
@given(source=_write_programs(), n=st.integers(0, 7), seed=st.integers(0, 10**6))
def test_random_write_programs(source, n, seed):
    """Value against Python, gradient against central differences, with no fallback."""
    namespace = {"np": np, "math": math}
    exec(source, namespace)
    plain = namespace["f"]
    rng = np.random.default_rng(seed)
    x, a = rng.uniform(-1.0, 1.0, n), float(rng.uniform(0.3, 0.9))
    f = cn.coarsen(source, wrt=("x", "a"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value = f(x, a)
        gx, ga = f.grad(x, a)
    assert math.isclose(value, plain(x, a), rel_tol=1e-12, abs_tol=1e-12)
    h = 1e-6
    for k in range(n):
        e = np.zeros(n)
        e[k] = h
        fd = (plain(x + e, a) - plain(x - e, a)) / (2 * h)
        if abs(plain(x + e, a) + plain(x - e, a) - 2 * plain(x, a)) < 1e-6:   # no branch crossed
            assert math.isclose(gx[k], fd, rel_tol=1e-4, abs_tol=1e-5), (k, gx[k], fd)
    fd = (plain(x, a + h) - plain(x, a - h)) / (2 * h)
    if abs(plain(x, a + h) + plain(x, a - h) - 2 * plain(x, a)) < 1e-6:
        assert math.isclose(ga, fd, rel_tol=1e-4, abs_tol=1e-5), (ga, fd)
