"""The numba backend's tape of an iterated loop (``lower/numba_tape.py``): preallocated arrays, one per
state scalar, where the loop's trip count has a bound before it; the list of state tuples elsewhere.

Every gradient is compared with the NumPy backend's (to 1e-10, the two run the same arithmetic) and
with central differences of the plain Python function; a :class:`NumbaFallbackWarning` is an error
here (a function that ran as NumPy code would compare NumPy with itself).  The structural tests read
the generated source: which loops have arrays, which keep the list, and that a state nothing in the
reverse sweep reads has no array.
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
from numba_gradient_checks import central

import coarsen_nb as cn

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


# -- the programs: each as a user writes it ---------------------------------------------------------


def several_dtypes(a, b, n):
    """float, int and bool state: the int and the bool steer the float."""
    x, k, up = a, 0, True
    for i in range(n):  # noqa: B007
        x = x * 0.9 + (b if up else -b) * 0.1 + math.sin(x) * 0.01 * k
        k = (k + 3) % 5
        up = x < 1.0
    return x


def offset_range(a, lo, n):
    """A counter starting above zero: the bound is ``n - lo`` iterations."""
    s = a
    for i in range(lo, n):
        s = math.cos(s) + a * 0.1 * i
    return s


def stepped_range(a, n):
    """A counter stepped by 2: no bound is read, the list stays."""
    s = a
    for i in range(0, n, 2):
        s = math.sin(s) * 0.8 + a * i
    return s


def broken(a, n):
    """``break`` on data: at most ``n`` iterations, fewer when the state grows past 3 (a step the reverse
    sweep needs the state for: a linear one's adjoint reads no tape, and the liveness pass drops it)."""
    x = a
    for i in range(n):  # noqa: B007
        x = x * 1.1 + 0.01 * x * x
        if x > 3.0:
            break
    return x * x


def newton_while(a):
    """A ``while`` on data with no counter: the list tape (which grows by itself)."""
    x = 1.0 + a
    while abs(x * x * x - a) > 1e-13 * a:
        x = x - (x * x * x - a) / (3.0 * x * x)
    return x


def slow_while(a, c):
    """A ``while`` on data that runs thousands of times (the tape grows many times over)."""
    x, t = 0.0, 0.0
    while t < c:
        x = x + a * math.cos(x) * 1e-3
        t = t + 1e-3
    return x


def counted_while(a, n):
    """A ``while`` with a counter and a data condition: the counter's bound is the capacity."""
    x, i = a, 0
    while i < n and x < 50.0:
        x = x + math.exp(-x) + a * 0.01
        i = i + 1
    return x


def nested(a, m, n):
    """An inner loop inside an outer one, both with scalar state."""
    x = a
    for i in range(m):  # noqa: B007
        y = x
        for j in range(n):  # noqa: B007
            y = math.sin(y) * 0.9 + a * 0.05
        x = x * 0.5 + y
    return x


def unread_state(r, x0, n):
    """An accumulator no derivative needs to replay (the logistic map's log-derivative)."""
    x, acc = x0, 0.0
    for i in range(n):  # noqa: B007
        x = r * x * (1.0 - x)
        acc += math.log(abs(r * (1.0 - 2.0 * x)) + 1e-12)
    return acc / max(n, 1)


def indexed(a, x, lo):
    """The body reads the counter (``x[i]``): the reverse sweep recomputes it, it is not stored."""
    s = a
    for i in range(lo, x.shape[0]):
        s = math.tanh(s * x[i]) + a * x[i - 1]
    return s


def biquad(b0, a1, a2, x):
    """A filter with float states ``x1`` (the input's last element: read again, no array,
    ``numba_tape_loads``), ``y1`` and ``y2`` (which follows ``y1``, no array of its own) and a kept ``sin``:
    one block of two rows."""
    y1, y2, x1 = 0.0, 0.0, 0.0
    energy = 0.0
    for i in range(x.shape[0]):
        y = b0 * x[i] + 0.1 * x1 - a1 * y1 - a2 * y2 + 0.01 * math.sin(y1)
        x1 = x[i]
        y2 = y1
        y1 = y
        energy += y * y
    return energy / max(x.shape[0], 1)


def two_of_each(a, n):
    """Two float and two int states: a block for each dtype."""
    x, y, k, j = a, 1.0 - a, 0, 1
    for i in range(n):  # noqa: B007
        x, y = math.sin(x + 0.1 * k) * 0.9 + y * 0.1, math.cos(y) * 0.5 + x * 0.01 * j
        k = (k + 3) % 5
        j = (j * 2) % 7
    return x * y


def two_step(a, h, n):
    """A two-step recurrence as users write it, ``x_prev, x = x, x_new``: ``x_prev`` follows ``x``."""
    x_prev, x = a, a + h
    for i in range(n):  # noqa: B007
        x_prev, x = x, 2.0 * x - x_prev - h * h * math.sin(x) - 0.01 * x_prev * x
    return x * x_prev


def chain(a, n):
    """``w`` follows ``v``, which follows ``u``: depths 1 and 2 behind ``u``, each with its own start."""
    u, v, w = a, 0.5, -0.25
    for i in range(n):  # noqa: B007
        u, v, w = math.cos(u) + 0.3 * v - 0.2 * w * w + a, u, v
    return u + v * w


def swap(a, n):
    """``x, y = y, x``: each follows the other, so neither is a follower (``z`` reads them)."""
    x, y, z = a, 1.0, 0.5
    for i in range(n):  # noqa: B007
        x, y = y, x
        z = z * math.sin(x) + a * y
    return x * y + z


def _check(fn, wrt, args, fd_rtol=1e-5):
    """The numba gradient equals NumPy's and central differences; returns the numba function."""
    ref = cn.coarsen(fn, wrt=wrt)
    f = cn.coarsen(fn, wrt=wrt, backend="numba")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = np.atleast_1d(np.asarray(f.grad(*args), dtype=float))
        value = f(*args)
    want = np.atleast_1d(np.asarray(ref.grad(*args), dtype=float))
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert value == pytest.approx(fn(*args), rel=1e-12, abs=1e-14)
    params = list(ref.params)
    fd = np.array([central(fn, args, params.index(w)) for w in wrt])
    np.testing.assert_allclose(got, fd, rtol=fd_rtol, atol=1e-7)
    return f


def _grad_source(f, name):
    src = f.source
    start = src.index(f"def {name}_grad(")
    end = src.find("\n@", start)
    return src[start:end if end > 0 else None]


# -- gradients ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 2, 200])
def test_for_loop_with_float_int_and_bool_state(n):
    f = _check(several_dtypes, ("a", "b"), (0.4, 0.7, n))
    g = _grad_source(f, "several_dtypes")
    assert "dtype=xp.float64" in g and "dtype=xp.int64" in g and "dtype=xp.bool_" in g, g


@pytest.mark.parametrize("lo,n", [(3, 3), (3, 4), (3, 50), (5, 2)])
def test_a_counter_from_an_offset(lo, n):
    f = _check(offset_range, ("a",), (0.3, lo, n))
    assert "max(0, n - lo" in _grad_source(f, "offset_range") or "max(0, n - i_init" in _grad_source(f, "offset_range")


@pytest.mark.parametrize("n", [0, 1, 7, 40])
def test_a_counter_stepped_by_two_keeps_the_list(n):
    f = _check(stepped_range, ("a",), (0.3, n))
    g = _grad_source(f, "stepped_range")
    assert ".append(" in g and "xp.empty(" not in g, g


@pytest.mark.parametrize("a,n", [(0.5, 0), (0.5, 1), (0.5, 100), (2.9, 100)])
def test_break_bounded_by_the_range(a, n):
    f = _check(broken, ("a",), (a, n))
    assert "xp.empty(max(0, n - " in _grad_source(f, "broken")


@pytest.mark.parametrize("a", [2.0, 5.0, 30.0])
def test_while_on_data_keeps_the_list(a):
    f = _check(newton_while, ("a",), (a,), fd_rtol=1e-4)
    g = _grad_source(f, "newton_while")
    assert ".append(" in g and "xp.empty(" not in g, g


@pytest.mark.parametrize("c", [0.0, 0.0005, 5.0])
def test_a_long_while_grows_its_tape(c):
    _check(slow_while, ("a",), (0.7, c), fd_rtol=1e-4)


@pytest.mark.parametrize("a,n", [(0.1, 0), (0.1, 3), (0.1, 500), (45.0, 500)])
def test_while_with_a_counter_bound(a, n):
    f = _check(counted_while, ("a",), (a, n))
    assert "xp.empty(max(0, n - " in _grad_source(f, "counted_while")


@pytest.mark.parametrize("m,n", [(0, 5), (1, 0), (1, 1), (4, 30)])
def test_nested_loops(m, n):
    f = _check(nested, ("a",), (0.3, m, n))
    assert len(re.findall(r"= xp\.empty\(max\(0, ", _grad_source(f, "nested"))) >= 2


# -- structure ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 2, 300])
def test_the_arrays_of_one_loop_and_dtype_are_one_block(n):
    """One allocation per loop and dtype, each state a row of it (``numba_tape_finish.packed``: freed together,
    the heap keeps the pages between calls)."""
    x = np.sin(np.linspace(0.0, 9.0, n))
    f = _check(biquad, ("b0", "a1", "a2"), (0.2, -1.2, 0.5, x), fd_rtol=1e-4)
    g = _grad_source(f, "biquad")
    assert len(re.findall(r"xp\.empty\(", g)) == 1, g
    block = re.search(r"(_tape_\w+_float64) = xp\.empty\(\(2, max\(0, ", g)
    assert block, g
    rows = re.findall(rf"(_tape_\w+_s_\w+) = {block.group(1)}\[(\d)\]", g)
    assert sorted(i for _, i in rows) == ["0", "1"], g
    # the loops store into and load from the rows by their names, as they did the arrays
    stores = re.findall(r"(_tape_\w+_s_\w+)\[_tape_\w+_len(?: \+ 1)?\] = (\w+)", g)
    assert {a for a, _ in stores} == {a for a, _ in rows}, g


@pytest.mark.parametrize("n", [0, 1, 2, 3, 40])
def test_a_state_that_follows_another_reads_its_array(n):
    """``x_prev`` is ``x`` one entry back: no array of its own, its start in the slot before."""
    f = _check(two_step, ("a", "h"), (0.4, 0.1, n))
    g = _grad_source(f, "two_step")
    assert "_s_x_prev" not in g, g
    assert re.search(r"(_tape_\w+_s_x)\[0\] = x_prev\n", g), g
    assert re.search(r"x_prev = _tape_\w+_s_x\[k\]\n", g) and re.search(r" x = _tape_\w+_s_x\[k \+ 1\]\n", g), g


@pytest.mark.parametrize("n", [0, 1, 2, 3, 60])
def test_a_chain_of_followers(n):
    f = _check(chain, ("a",), (0.3, n))
    g = _grad_source(f, "chain")
    assert "_s_v" not in g and "_s_w" not in g, g
    assert re.search(r"_tape_\w+_s_u\[1\] = v\n", g) and re.search(r"_tape_\w+_s_u\[0\] = w\n", g), g


@pytest.mark.parametrize("n", [0, 1, 2, 50])
def test_a_swap_has_no_follower(n):
    f = _check(swap, ("a",), (0.3, n))
    g = _grad_source(f, "swap")
    assert "_s_x" in g and "_s_y" in g, g


@pytest.mark.parametrize("n", [0, 1, 40])
def test_a_block_for_each_dtype(n):
    f = _check(two_of_each, ("a",), (0.3, n))
    g = _grad_source(f, "two_of_each")
    assert re.search(r"_tape_\w+_float64 = xp\.empty\(\(2, ", g), g
    assert re.search(r"_tape_\w+_int64 = xp\.empty\(\(2, ", g), g



def test_the_tape_is_arrays_not_a_list():
    f = _check(unread_state, ("r", "x0"), (2.8, 0.3, 300))
    g = _grad_source(f, "unread_state")
    assert "_tape_" in g and ".append(" not in g and "= []" not in g, g
    stores = re.findall(r"(_tape_\w+)\[_tape_\w+_len\] = (\w+)", g)
    # only x is replayed: the counter and the accumulator have no array
    assert [v for _, v in stores] == ["x"], g
    loads = re.findall(r"(\w+) = (_tape_\w+)\[k\]", g)
    assert [v for v, _ in loads] == ["x"], g


@pytest.mark.parametrize("lo", [1, 3, 40])
def test_the_counter_is_recomputed_not_stored(lo):
    x = np.linspace(0.5, 1.5, 40)
    f = _check(indexed, ("a",), (0.3, x, lo))
    g = _grad_source(f, "indexed")
    stores = re.findall(r"_tape_\w+\[_tape_\w+_len\] = (\w+)", g)
    # what is stored is the step's tanh, which the adjoint reads (kept values, below), and no counter
    assert stores == ["tanh_s_x_i"], g
    assert re.search(r"^ +i\w* = \w+ \+ k$", g, re.M), g


def test_the_numpy_backend_keeps_its_list():
    f = cn.coarsen(unread_state, wrt=("r", "x0"))
    f.grad(2.8, 0.3, 10)
    g = _grad_source(f, "unread_state")
    assert ".append((" in g and "xp.empty(" not in g, g


def test_a_wrong_bound_is_an_error_not_a_silent_overrun():
    """The arrays have no growth check: ``_jit``'s bounds checks are what stand behind the bound.  A
    source whose tape is one entry too small must raise, not write past the end."""
    f = cn.coarsen(offset_range, wrt=("a",), backend="numba")
    f.grad(0.3, 0, 10)
    src = f.source
    assert "max(0, n - " in src
    short = src.replace("max(0, n - ", "max(0, n - 1 - ")
    ns: dict = {"__name__": "short_tape"}
    exec(compile(short.replace("cache=True", "cache=False"), "<short>", "exec"), ns)
    with pytest.raises(IndexError):
        ns["offset_range_grad"](0.3, 0, 10)
