"""A loop state that is an input's element at the counter (``x1 = x[i]``) has no array on the numba tape: the
reverse sweep reads the element again (``lower/numba_tape_loads.py``).  And a number's adjoint the reverse
sweep carries is assigned its one addend, not zeroed and added to (``lower/numba_carried_adjoints.py``).

Every gradient is compared with the NumPy backend's (to 1e-10) and with central differences of the plain
Python function; a :class:`NumbaFallbackWarning` is an error here.  The structural assertions read the
generated source: which states are read again, which keep an array.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from numba_gradient_checks import numba_grad_source

from coarsen_nb.lower import lir
from coarsen_nb.lower.numba_carried_adjoints import assigned_first

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)


def filter_from(b1, a1, x, lo, x_start):
    """The previous sample as a state from ``lo`` on (negative: NumPy's wrapped indices), with a start
    value of its own."""
    y1, x1 = 0.0, x_start
    energy = 0.0
    for i in range(lo, x.shape[0]):
        y = x[i] + b1 * x1 - a1 * y1
        x1 = x[i]
        y1 = y
        energy += y * y
    return energy


def two_back(b1, b2, x):
    """``x2`` follows ``x1``, which is the input's element: ``x1`` is read again, ``x2`` keeps an array."""
    x1, x2, y = 0.0, 0.0, 0.0
    for i in range(x.shape[0]):
        y = 0.5 * y + x[i] + b1 * x1 * y + b2 * x2
        x2 = x1
        x1 = x[i]
    return y


def written_input(a, x):
    """The loop writes the array it reads its state from: the state keeps its array (the element the
    reverse sweep would read again is not the one read)."""
    x = x.copy()
    prev = 1.0
    for i in range(x.shape[0]):
        x[i] = a * prev * x[i] + 0.1
        prev = x[i]
    return prev + np.sum(x)


def shifted_index(a, x):
    """The state is an element at ``i + 1``, not at the counter: it keeps its array."""
    s, nxt = 0.0, 0.0
    for i in range(x.shape[0] - 1):
        s = s * a + nxt * nxt
        nxt = x[i + 1]
    return s


def rows_filter(b1, a1, X):
    """The filter inside an outer loop, over a row the outer body computes: the outer reverse sweep replays
    the inner forward sweep, the first sample's scalar with it."""
    total = 0.0
    for r in range(X.shape[0]):
        row = X[r] * b1
        y1, x1 = 0.0, 0.5
        for i in range(row.shape[0]):
            y = row[i] + b1 * x1 - a1 * y1
            x1 = row[i]
            y1 = y
            total += y * y
    return total


@pytest.mark.parametrize("lo,n", [(0, 0), (0, 1), (0, 2), (0, 50), (3, 3), (3, 4), (3, 40), (-4, 10), (-10, 10)])
def test_the_previous_sample_is_read_again(lo, n):
    x = np.sin(np.linspace(0.0, 6.0, n)) + 0.2
    g = numba_grad_source(filter_from, ("b1", "a1", "x_start"), (0.3, -0.4, x, lo, 0.7))
    assert "_s_x1" not in g, g
    assert re.search(r"x1 = x\[\w+ \+ k - 1\] if k > 0 else _tape_\w+_first_x1\n", g), g


@pytest.mark.parametrize("n", [0, 1, 2, 3, 30])
def test_a_follower_of_a_read_state_keeps_its_array(n):
    x = np.cos(np.linspace(0.0, 4.0, n))
    g = numba_grad_source(two_back, ("b1", "b2"), (0.2, -0.3, x))
    assert "_s_x1" not in g and "_s_x2" in g, g


@pytest.mark.parametrize("n", [1, 2, 20])
def test_a_state_read_from_an_array_the_loop_writes_keeps_its_array(n):
    x = np.linspace(0.2, 0.9, n)
    g = numba_grad_source(written_input, ("a",), (0.8, x))
    assert "_first_prev" not in g, g


@pytest.mark.parametrize("n", [2, 3, 25])
def test_an_element_at_another_index_keeps_its_array(n):
    x = np.linspace(-1.0, 1.0, n)
    g = numba_grad_source(shifted_index, ("a",), (0.7, x))
    assert "_first_nxt" not in g, g


@pytest.mark.parametrize("m,n", [(0, 3), (1, 0), (1, 1), (3, 2), (4, 6)])
def test_a_read_state_in_a_nested_loop(m, n):
    X = np.sin(np.arange(m * n, dtype=float).reshape(m, n))
    g = numba_grad_source(rows_filter, ("b1", "a1"), (0.3, -0.4, X))
    assert "_first_x1" in g and "_s_x1" not in g, g


def test_the_carried_adjoint_is_assigned_its_addend():
    """The IIR filter's carried adjoints: ``b_y1 = t`` in the reverse loop, no ``b_y1 = 0.0`` inside it."""
    x = np.sin(np.linspace(0.0, 9.0, 40))
    g = numba_grad_source(filter_from, ("b1", "a1"), (0.3, -0.4, x, 0, 0.0))
    loop = g[g.index("for k in range("):]
    assert not re.search(r"\n +b_y1 = 0\.0\n", loop) and re.search(r"\n +b_y1 = \w+\n", loop), g
    assert "b_y1 +=" not in loop, g


# -- the pass on records: what it leaves alone --------------------------------------------------------

def _z(name):
    return lir.Assign(lir.Name(name), lir.Lit("0.0"))


def _add(name, value):
    return lir.AugAssign(lir.Name(name), "+", lir.Name(value))


def _loop(*body):
    return lir.For(lir.Name("k"), lir.Call(lir.Name("range"), (lir.Name("n"),)), tuple(body))


def test_outside_a_loop_the_zero_stays():
    """A top-level adjoint may be returned: ``0.0 + 1`` is a float, ``1`` an int."""
    body = (_z("b"), _add("b", "t"))
    assert assigned_first(body) == body


def test_in_a_loop_the_first_addend_is_assigned():
    out = assigned_first((_loop(lir.Assign(lir.Name("c"), lir.Name("b")), _z("b"), _add("b", "t")),))
    assert out[0].body == (lir.Assign(lir.Name("c"), lir.Name("b")), lir.Assign(lir.Name("b"), lir.Name("t")))


@pytest.mark.parametrize("between", [
    lir.Assign(lir.Name("u"), lir.Name("b")),                                  # a read before the add
    lir.If(lir.Name("p"), (lir.Break(),)),                                     # a way out of the loop
    lir.If(lir.Name("p"), (_add("b", "s"),)),                                  # an add in a nested block
    lir.Text("u = b"),                                                         # reads not known
])
def test_what_keeps_the_zero(between):
    body = (_loop(_z("b"), between, _add("b", "t")),)
    assert assigned_first(body) == body


def test_an_addend_that_reads_the_name_keeps_the_zero():
    body = (_loop(_z("b"), lir.AugAssign(lir.Name("b"), "+", lir.BinOp("*", lir.Name("b"), lir.Name("t")))),)
    assert assigned_first(body) == body
