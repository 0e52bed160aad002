"""What the reductions over axes refuse (issue 15), each a CoarsenError in the user's words at the line and
column of the construct, with a hint of what to write instead.

Two kinds: what the source alone shows (a parameter the registration does not take, ``dtype=``, ``out=``,
``where=``, ``initial=``; an ``axis``/``ddof``/``ord`` that is not a constant; too many positional
arguments), refused by the frontend; and what needs the arguments' ranks (an axis out of range or
repeated, another ``ord`` than None, a norm over three axes, a ``ddof`` that is not a number), refused
when the call's types are known, with the caret under the word of the line it is about.
"""

from __future__ import annotations

import numpy as np
import pytest
from refusals import INTERNAL_NAMES, assert_refused

import coarsen_nb as cn

# (id, source, line, node type at the error, its text, words the message must hold)
FRONTEND = [
    ("mean-dtype", "def f(x):\n    return np.mean(x, dtype=float)\n", 2, "keyword", "dtype=float",
     ("np.mean(..., dtype=...)", "not supported yet", "axis=, keepdims=")),
    ("max-out", "def f(x, y):\n    return np.sum(np.max(x, axis=0, out=y))\n", 2, "keyword", "out=y",
     ("np.max(..., out=...)", "not supported yet", "leave out= out")),
    ("min-where", "def f(x, m):\n    return np.min(x, where=m)\n", 2, "keyword", "where=m",
     ("np.min(..., where=...)", "not supported yet")),
    ("amax-initial", "def f(x):\n    return np.amax(x, initial=0.0)\n", 2, "keyword", "initial=0.0",
     ("np.max(..., initial=...)", "not supported yet")),
    ("prod-initial-method", "def f(x):\n    return x.prod(axis=0, initial=1.0)[0]\n", 2, "keyword", "initial=1.0",
     ("np.prod(..., initial=...)", "not supported yet")),
    ("std-dtype-method", "def f(x):\n    return x.std(dtype=float)\n", 2, "keyword", "dtype=float",
     ("np.std(..., dtype=...)", "axis=, ddof=, keepdims=")),
    ("var-out", "def f(x, y):\n    return np.var(x, out=y)\n", 2, "keyword", "out=y",
     ("np.var(..., out=...)", "not supported yet")),
    ("norm-axis-not-constant", "def f(x, k):\n    return np.sum(np.linalg.norm(x, axis=k))\n", 2, "Name", "k",
     ("np.linalg.norm's axis must be a constant", "axis=0")),
    ("mean-axis-not-constant-method", "def f(x, k):\n    return np.sum(x.mean(axis=k + 1))\n", 2, "BinOp", "k + 1",
     ("np.mean's axis must be a constant",)),
    ("var-ddof-not-constant", "def f(x, d):\n    return x.var(ddof=d)\n", 2, "Name", "d",
     ("np.var's ddof must be a constant", "ddof=0")),
    ("norm-ord-not-constant", "def f(x, p):\n    return np.linalg.norm(x, ord=p)\n", 2, "Name", "p",
     ("np.linalg.norm's ord must be a constant",)),
    ("std-too-many-positional", "def f(x):\n    return np.std(x, 0, 1, False, 7)\n", 2, "Constant", "7",
     ("too many arguments to np.std", "then axis, ddof, keepdims")),
    ("max-axis-twice", "def f(x):\n    return np.sum(np.max(x, 0, axis=1))\n", 2, "keyword", "axis=1",
     ("multiple values", "'axis'")),
]


@pytest.mark.parametrize("case", FRONTEND, ids=[c[0] for c in FRONTEND])
def test_refused_in_the_source(case):
    assert_refused(case)


_X2 = np.arange(6.0).reshape(2, 3) / 7.0 + 0.1
_X3 = np.arange(24.0).reshape(2, 3, 4) / 25.0 + 0.1

# (id, body line, argument, word under the caret, words the message and hint must hold)
TYPED = [
    ("mean-axis-out-of-range", "return np.sum(np.mean(X, axis=2))", _X2, "axis",
     ("np.mean's axis=2 is out of range for an array of 2 dimensions", "axes 0 to 1 (or -2 to -1)")),
    ("max-negative-axis-out-of-range", "return np.sum(X.max(axis=-3))", _X2, "axis",
     ("np.max's axis=-3 is out of range", "axes 0 to 1")),
    ("std-axis-of-a-vector", "return np.sum(np.std(X[0], axis=1))", _X2, "axis",
     ("np.std's axis=1 is out of range for an array of 1 dimension", "axes 0 to 0")),
    ("prod-repeated-axis", "return np.sum(np.prod(X, axis=(0, -2)))", _X2, "axis",
     ("repeats an axis", "name each axis once")),
    ("min-axis-not-int", "return np.sum(np.min(X, axis=1.5))", _X2, "axis",
     ("np.min's axis=1.5 is not an axis", "an int or a tuple of ints")),
    ("norm-ord", "return np.linalg.norm(X, ord=1)", _X2, "norm",
     ("np.linalg.norm with ord=1 is not supported", "np.sum(np.abs(x))", "leave ord out")),
    ("norm-ord-positional", "return np.linalg.norm(X, 'fro')", _X2, "norm",
     ("np.linalg.norm with ord='fro' is not supported", "Frobenius")),
    ("norm-three-axes", "return np.linalg.norm(X, axis=(0, 1, 2))", _X3, "axis",
     ("names more than two axes", "one axis (a vector norm) or two (a matrix norm)")),
    ("norm-axis-out-of-range", "return np.sum(np.linalg.norm(X, axis=(0, 2)))", _X2, "axis",
     ("np.linalg.norm's axis=2 is out of range",)),
    ("var-ddof-bool", "return np.var(X, ddof=True)", _X2, "ddof",
     ("np.var's ddof=True is not a number", "ddof=1")),
    ("std-ddof-string", "return X.std(ddof='n')", _X2, "ddof",
     ("np.std's ddof='n' is not a number",)),
]


@pytest.mark.parametrize("case", TYPED, ids=[c[0] for c in TYPED])
def test_refused_once_the_ranks_are_known(case, tmp_path):
    """The error is raised when the arguments' ranks are known (the first call), at the user's line, with the
    caret under ``word``, and speaks of the user's names, not the compiler's."""
    _, body, arg, word, words = case
    src = tmp_path / "user_reductions.py"
    src.write_text(f"import numpy as np\n\n\ndef f(X):\n    {body}\n")
    f = cn.coarsen(src.read_text(), name="f")
    with pytest.raises(cn.CoarsenError) as info:
        f.grad(arg)
    err = info.value
    line = src.read_text().splitlines()[4]
    assert (err.line, err.col) == (5, line.index(word)), str(err)
    text = str(err)
    for w in words:
        assert w in text, f"{w!r} not in:\n{text}"
    assert err.hint.strip() and "^" in text
    assert not INTERNAL_NAMES.search(text), text


def test_numpy_refuses_what_is_refused_once_typed():
    """The typed refusals are programs NumPy rejects too (an out-of-range or repeated axis, a norm over three
    axes), except ``ord``, which NumPy takes and this compiler does not: its refusal is a limit, not an error
    of the program."""
    for call in (lambda: np.mean(_X2, axis=2), lambda: np.max(_X2, axis=-3), lambda: np.prod(_X2, axis=(0, -2)),
                 lambda: np.linalg.norm(_X3, axis=(0, 1, 2))):
        with pytest.raises((ValueError, np.exceptions.AxisError)):
            call()
    assert np.isfinite(np.linalg.norm(_X2, ord=1))
