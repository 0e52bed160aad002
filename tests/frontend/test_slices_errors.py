"""The variants of slicing (and of the forms that came with it) that stay outside the subset: a
CoarsenError naming the construct in the user's words, at its line and column (checked against
:mod:`ast`), with what to write instead; and the run-time errors that stand for Python's own."""

from __future__ import annotations

import numpy as np
import pytest
from refusals import assert_refused

import coarsen_nb as cn
from coarsen_nb.errors import CoarsenError
from coarsen_nb.frontend.parse import parse

# (id, source, line, node type at the error, its text, words the message must hold)
CASES = [
    ("variable-step", "def f(x, k):\n    return np.sum(x[::k])\n", 2, "Name", "k",
     ("slice with a variable step", "constant step", "range(a, b, s)")),
    ("zero-step", "def f(x):\n    return np.sum(x[1::0])\n", 2, "Constant", "0", ("slice step cannot be zero",)),
    ("float-step", "def f(x):\n    return np.sum(x[::0.5])\n", 2, "Constant", "0.5", ("variable step",)),
    ("new-axis-write", "def f(x, y):\n    u = x.copy()\n    u[:, None] = y\n    return np.sum(u)\n", 3, "Constant",
     "None", ("a new axis", "can be read, not written")),
    ("new-axis-np-write", "def f(x):\n    u = x.copy()\n    u[np.newaxis, :] = 1.0\n    return np.sum(u)\n", 3,
     "Attribute", "np.newaxis", ("a new axis",)),
    ("ellipsis", "def f(x):\n    return np.sum(x[..., 1:])\n", 2, "Constant", "...", ("Ellipsis", "X[:, j]")),
    ("three-d", "def f(t):\n    return np.sum(t[0, :, 1])\n", 2, "Subscript", "t[0", ("more than 2 dimensions",)),
    ("slice-of-list", "def f(a, b):\n    v = [a, b, 1.0]\n    return np.sum(v[1:])\n", 3, "Name", "v",
     ("list", "a slice")),
    ("slice-write-parameter", "def f(x):\n    x[1:] = 0.0\n    return np.sum(x)\n", 2, "Subscript", "x[1:]",
     ("parameter array 'x'", "x = x.copy()")),
    ("slice-augassign-parameter", "def f(x):\n    x[::2] += 1.0\n    return np.sum(x)\n", 2, "Subscript",
     "x[::2]", ("parameter array 'x'", "x = x.copy()")),
    ("slice-alias-written", "def f(x):\n    u = x.copy()\n    head = u[:2]\n    head[0] = 1.0\n    return np.sum(u)\n",
     3, "Assign", "head", ("array alias", "np.copy(u[:2])")),
    ("augassign-parameter-array", "def f(x, a):\n    x += a\n    return np.sum(x)\n", 2, "Name", "x",
     ("in-place update of the parameter array 'x'", "x = x.copy()", "line 3")),
    ("augassign-parameter-subscripted", "def f(x):\n    x *= 2.0\n    return x[0]\n", 2, "Name", "x",
     ("in-place update", "x = x.copy()")),
    ("augassign-helper-parameter", "def _h(v):\n    v -= 1.0\n    return len(v)\ndef f(x):\n    return _h(x)\n",
     2, "Name", "v", ("in-place update of the parameter array 'v'",)),
    ("slice-as-loop-bound", "def f(x):\n    s = 0.0\n    for i in range(1, x[1:]):\n        s = s + x[i]\n"
     "    return s\n", 3, "Subscript", "x[1:]", ("slice as a loop bound", "range(len(x[1:]))")),
    ("augassign-slice-view", "def f(x):\n    u = np.zeros(len(x))\n    tail = u[1:]\n    tail += x[1:]\n"
     "    return np.sum(u)\n", 4, "Name", "tail", ("in-place update of 'tail', a slice of 'u'", "u[1:] += ...")),
    ("max-key", "def f(x):\n    return max((v for v in x), key=abs)\n", 2, "keyword", "key", ("key=",)),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_refused_with_construct_position_and_hint(case):
    assert_refused(case, namespace={"np": np})


@pytest.mark.parametrize("src", [
    "def f(x, a):\n    x = x.copy()\n    x += a\n    return np.sum(x)\n",        # a private copy first
    "def f(a, b):\n    a += b\n    return a * a\n",                            # numbers: rebinds the name
    "def f(x):\n    u = np.zeros(len(x))\n    u[1:] = u[:-1] + x[1:]\n    return np.sum(u)\n",   # reads first
])
def test_accepted_neighbours(src):
    parse(src, namespace={"np": np})


def test_empty_max_of_generator_raises_value_error_like_python():
    src = "def f(x, n):\n    return max(x[i] for i in range(n))\n"
    namespace = {"np": np}
    exec(src, namespace)
    with pytest.raises(ValueError):
        namespace["f"](np.ones(3), 0)
    f = cn.coarsen(src)
    assert f(np.arange(3.0), 2) == 1.0
    with pytest.raises(ValueError) as info:
        f(np.ones(3), 0)
    assert isinstance(info.value, CoarsenError) and info.value.line == 2


def test_slice_step_is_python_not_numpy_for_an_empty_array():
    f = cn.coarsen("def f(x):\n    return x[::-2]\n")
    assert f(np.zeros(0)).shape == (0,)
    assert np.array_equal(f(np.arange(5.0)), np.arange(5.0)[::-2])


def test_a_write_of_the_wrong_length_is_numpys_value_error_at_the_line():
    src = "def f(x):\n    u = np.zeros(len(x))\n    u[1:] = x\n    return np.sum(u)\n"
    namespace = {"np": np}
    exec(src, namespace)
    with pytest.raises(ValueError):
        namespace["f"](np.ones(3))
    with pytest.raises(ValueError) as info:
        cn.coarsen(src)(np.ones(3))
    assert isinstance(info.value, CoarsenError) and info.value.line == 3


def test_rows_of_a_2d_array_the_source_does_not_show_fail_at_the_line():
    """The frontend knows no ranks: X[1:] of a 2-D argument is caught when called, not guessed."""
    with pytest.raises(ValueError) as info:
        cn.coarsen("def f(X):\n    return np.sum(X[1:] * 2.0)\n")(np.ones((3, 3)))
    assert isinstance(info.value, CoarsenError) and info.value.line == 2
