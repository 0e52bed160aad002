"""``n, m = X.shape`` as users write it: one size per name, values and gradients as the plain function's
(and central differences), under every selection; a count of names other than the array's number of
dimensions is Python's unpacking error, as a CoarsenError at the line, once the argument's rank is known."""

from __future__ import annotations

import numpy as np
import pytest
from corpus_inputs import entry, matrix
from entry_checks import SELECTIONS, check_desugared_ir, check_value_and_gradient

import coarsen_nb as cn


def weighted_rows(X):
    n, m = X.shape
    s = 0.0
    for i in range(n):
        for j in range(m):
            s += X[i, j] ** 2 * (i + 1) / m
    return s


def single_name(x):
    n, = x.shape
    return n * np.sum(x ** 2)


def three_dims(T):
    a, b, c = T.shape
    return np.sum(T ** 2) * (a + 2 * b + 3 * c)


def swapped_sizes(X):
    m, n = X.shape
    n, m = m, n
    return np.sum(X) * n - m


ENTRIES = [
    entry(weighted_rows, lambda r: (matrix(r),), "X"),
    entry(single_name, lambda r: (r.uniform(-1.0, 1.0, size=int(r.integers(2, 7))),), "x"),
    entry(three_dims, lambda r: (r.uniform(-1.0, 1.0, size=(2, 3, 4)),), "T"),
    entry(swapped_sizes, lambda r: (matrix(r),), "X"),
]


@pytest.mark.parametrize("e", ENTRIES, ids=[e.name for e in ENTRIES])
def test_desugared_ir_means_what_python_means(e):
    check_desugared_ir(e)


@pytest.mark.parametrize("selection", list(SELECTIONS))
@pytest.mark.parametrize("e", ENTRIES, ids=[e.name for e in ENTRIES])
def test_value_and_gradient(e, selection):
    check_value_and_gradient(e, selection)


@pytest.mark.parametrize("names, shape, words", [
    ("n, m", (3,), "not enough values to unpack (expected 2, got 1)"),
    ("n", (3, 2), "too many values to unpack (expected 1, got 2)"),
])
def test_wrong_count_is_pythons_error_at_the_line(names, shape, words):
    src = f"import numpy as np\n\n\ndef f(x):\n    {names}, = x.shape\n    return np.sum(x) * {names.split(',')[0]}\n"
    f = cn.coarsen(src, name="f")
    with pytest.raises(cn.CoarsenError) as info:
        f.grad(np.ones(shape))
    err = info.value
    assert words in str(err) and err.line == 5
    assert err.col == src.splitlines()[4].index("shape"), str(err)
    # the plain function raises Python's own error for the same call
    namespace: dict = {}
    exec(src, namespace)
    with pytest.raises(ValueError, match="values to unpack"):
        namespace["f"](np.ones(shape))
