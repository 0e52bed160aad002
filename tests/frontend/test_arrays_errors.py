"""The forms of the array functions (rules/arrays.py, frontend/arrays.py) that stay outside the subset: a
CoarsenError naming the construct in the user's words, at its line and column, with what to write instead.

Forms the source shows are refused when the function is translated (``CASES``, checked against
:mod:`ast` by :func:`refusals.assert_refused`); forms that depend on the arguments' ranks and types are
refused when the call's types are known, with the caret under the function's name or the ``axis``
(``TYPED``).
"""

from __future__ import annotations

import numpy as np
import pytest
from refusals import INTERNAL_NAMES, assert_refused

import coarsen_nb as cn

# (id, source, line, node type at the error, its text, words the message must hold)
CASES = [
    ("concatenate-variable-list", "def f(x, y):\n    parts = [x, y]\n    return np.sum(np.concatenate(parts))\n", 3,
     "Name", "parts", ("np.concatenate's arrays must be written in the call", "np.concatenate([x, y])")),
    ("stack-parameter", "def f(xs):\n    return np.sum(np.stack(xs))\n", 2, "Name", "xs",
     ("np.stack's arrays must be written in the call",)),
    ("concatenate-empty", "def f(x):\n    return np.sum(np.concatenate([]))\n", 2, "List", "[]",
     ("np.concatenate of an empty list", "at least one array")),
    ("concatenate-nested-list", "def f(x, a):\n    return np.sum(np.concatenate([x, [a, a]]))\n", 2, "List",
     "[a, a]", ("a list inside np.concatenate's list", "np.array([...])")),
    ("concatenate-starred", "def f(x, y):\n    return np.sum(np.concatenate([x, *y]))\n", 2, "Starred", "*y",
     ("*args", "write out each array")),
    ("concatenate-variable-axis", "def f(x, y, k):\n    return np.sum(np.concatenate([x, y], axis=k))\n", 2,
     "Name", "k", ("np.concatenate's axis must be a constant written in the source", "axis=0")),
    ("concatenate-dtype", "def f(x, y):\n    return np.sum(np.concatenate([x, y], dtype=float))\n", 2,
     "keyword", "dtype", ("np.concatenate(..., dtype=...) is not supported yet", "axis=")),
    ("roll-variable-shift", "def f(x, k):\n    return np.sum(np.roll(x, k) * x)\n", 2, "Name", "k",
     ("np.roll's shift must be a constant", "known when the function is compiled")),
    ("roll-mode", "def f(x):\n    return np.sum(np.roll(x, 1, mode='wrap'))\n", 2, "keyword", "mode",
     ("np.roll(..., mode=...) is not supported yet", "shift=, axis=")),
    ("cumsum-dtype", "def f(x):\n    return np.sum(np.cumsum(x, dtype=float))\n", 2, "keyword", "dtype",
     ("np.cumsum(..., dtype=...) is not supported yet",)),
    ("cumprod-variable-axis", "def f(X, a):\n    return np.sum(np.cumprod(X, axis=a))\n", 2, "Name", "a",
     ("np.cumprod's axis must be a constant",)),
    ("diff-prepend", "def f(x):\n    return np.sum(np.diff(x, prepend=0.0))\n", 2, "keyword", "prepend",
     ("np.diff(..., prepend=...) is not supported yet", "n=, axis=")),
    ("diff-variable-order", "def f(x, order):\n    return np.sum(np.diff(x, order))\n", 2, "Name", "order",
     ("np.diff's n must be a constant",)),
    ("reshape-order", "def f(x):\n    return np.sum(x.reshape(2, 3, order='F'))\n", 2, "keyword", "order",
     ("x.reshape(..., order=...) is not supported", "row by row")),
    ("reshape-shape-variable", "def f(x):\n    s = (2, 3)\n    return np.sum(x.reshape(s))\n", 3, "Name", "s",
     ("the shape of a reshape must be written in the call", "x.reshape(n, m)")),
    ("reshape-no-shape", "def f(x):\n    return np.sum(x.reshape())\n", 2, "Call", "x.reshape",
     ("x.reshape needs a shape", "x.reshape(-1)")),
    ("reshape-nested-size", "def f(x):\n    return np.sum(x.reshape(2, (3, 1)))\n", 2, "Tuple", "(3, 1)",
     ("(3, 1) is not a size",)),
    ("reshape-of-list", "def f(a, b):\n    return np.sum([a, b].reshape(2, 1))\n", 2, "Call", "[a, b].reshape",
     ("a Python list has no method .reshape()",)),
    ("linspace-num-keyword", "def f(a):\n    return np.sum(np.linspace(0.0, a, num=5))\n", 2, "keyword", "num",
     ("keyword arguments", "pass arguments by position")),
    ("clip-no-bounds", "def f(x):\n    return np.sum(np.clip(x, None, None))\n", 2, "Call", "np.clip",
     ("np.clip(x, None, None) clips nothing", "is x")),
    ("clip-keyword-bound", "def f(x):\n    return np.sum(np.clip(x, 0.0, a_max=1.0))\n", 2, "keyword", "a_max",
     ("keyword arguments", "pass arguments by position")),
    ("clip-two-arguments", "def f(x):\n    return np.sum(np.clip(x, 0.0))\n", 2, "Call", "np.clip",
     ("np.clip takes 3 positional arguments", "None for no bound")),
    ("where-one-argument", "def f(x):\n    return np.sum(np.where(x > 0))\n", 2, "Call", "np.where",
     ("wrong number of arguments to where", "3 positional arguments")),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_refused_with_construct_position_and_hint(case):
    assert_refused(case, namespace={"np": np})


# (id, source, arguments, the word the caret is under, words the message must hold)
TYPED = [
    ("cumsum-2d-without-axis", "def f(X):\n    return np.sum(np.cumsum(X))\n", (np.ones((2, 3)),), "cumsum",
     ("np.cumsum without axis= flattens a 2-D array", "axis=0", "x.reshape(-1)")),
    ("cumsum-axis-out-of-range", "def f(x):\n    return np.sum(np.cumsum(x, axis=1))\n", (np.ones(3),), "axis",
     ("np.cumsum's axis=1 is out of range for an array of 1 dimension",)),
    ("cumsum-tuple-axis", "def f(X):\n    return np.sum(np.cumsum(X, axis=(0, 1)))\n", (np.ones((2, 2)),), "axis",
     ("not one axis", "axis=0")),
    ("cumprod-of-a-number", "def f(x):\n    return np.sum(np.cumprod(x))\n", (1.5,), "cumprod",
     ("np.cumprod of a number is not supported",)),
    ("roll-without-shift", "def f(x):\n    return np.sum(np.roll(x))\n", (np.ones(3),), "roll",
     ("np.roll needs a constant int shift", "np.roll(x, 1)")),
    ("roll-float-shift", "def f(x):\n    return np.sum(np.roll(x, 1.5))\n", (np.ones(3),), "roll",
     ("np.roll needs a constant int shift",)),
    ("roll-unpaired", "def f(x):\n    return np.sum(np.roll(x, (1, 2), axis=0))\n", (np.ones(3),), "roll",
     ("np.roll's shift and axis do not pair up", "axis=(0, 1)")),
    ("roll-axis-out-of-range", "def f(x):\n    return np.sum(np.roll(x, 1, axis=2))\n", (np.ones(3),), "axis",
     ("np.roll's axis=2 is out of range",)),
    ("diff-negative-order", "def f(x):\n    return np.sum(np.diff(x, n=-1))\n", (np.ones(3),), "diff",
     ("np.diff's n=-1 is not an order of differences",)),
    ("diff-axis-out-of-range", "def f(x):\n    return np.sum(np.diff(x, axis=-2))\n", (np.ones(3),), "axis",
     ("np.diff's axis=-2 is out of range",)),
    ("concatenate-ranks", "def f(x, X):\n    return np.sum(np.concatenate([x, X]))\n", (np.ones(3), np.ones((2, 3))),
     "concatenate", ("np.concatenate joins arrays of one rank, not of ranks [1, 2]", "v[None, :]")),
    ("concatenate-numbers", "def f(a, b):\n    return np.sum(np.concatenate([a, b]))\n", (1.0, 2.0),
     "concatenate", ("np.concatenate joins arrays of one rank", "np.array([x])")),
    ("stack-axis-out-of-range", "def f(x, y):\n    return np.sum(np.stack([x, y], axis=2))\n",
     (np.ones(3), np.ones(3)), "axis", ("np.stack's axis=2 is out of range for an array of 2 dimensions",)),
    ("outer-of-a-number", "def f(x):\n    return np.sum(np.outer(2.0, x))\n", (np.ones(3),), "outer",
     ("np.outer of a number is not supported", "a * y")),
    ("linspace-float-count", "def f(a, b):\n    return np.sum(np.linspace(a, b, 2.5))\n", (0.0, 1.0), "linspace",
     ("np.linspace's number of points is float, not an int",)),
    ("linspace-array-ends", "def f(x, y):\n    return np.sum(np.linspace(x, y, 3))\n", (np.ones(2), np.ones(2)),
     "linspace", ("np.linspace takes numbers as its ends here", "np.linspace(0.0, 1.0, n)[:, None]")),
    ("arange-of-an-array", "def f(x):\n    return np.sum(np.arange(x) * 1.0)\n", (np.ones(2),), "arange",
     ("np.arange takes numbers, not arrays",)),
]


@pytest.mark.parametrize("case", TYPED, ids=[c[0] for c in TYPED])
def test_refused_when_the_types_are_known(case, tmp_path):
    _, src, args, word, words = case
    path = tmp_path / "user.py"
    path.write_text("import numpy as np\n\n\n" + src)
    f = cn.coarsen(path.read_text(), name="f")
    with pytest.raises(cn.CoarsenError) as info:
        f(*args)
    err = info.value
    line = path.read_text().splitlines()[err.line - 1] if err.line else ""
    assert err.line == 5 and err.col == line.index(word), str(err)
    text = str(err)
    for w in words:
        assert w in text, f"{w!r} not in:\n{text}"
    assert err.hint.strip() and "^" in text
    assert not INTERNAL_NAMES.search(text), text
