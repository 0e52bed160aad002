"""Reads through an array of positions (``x[idx]``, repeats and negative positions included) and through a
boolean mask (``x[x > 0]``, ``X[v > 0]``, ``X[X > 0.2]``), and writes through a mask, as users write them:
values as the plain function's (NumPy's own indexing), gradients as central differences, under every
selection.  A boolean mask read as positions would be silently wrong (``x[[True, True]]`` is ``x[1], x[1]``);
a scatter of repeated positions with ``+=`` would drop all but one (NumPy's buffered ``b[idx] += v``)."""

from __future__ import annotations

import numpy as np
import pytest
from corpus_inputs import entry
from entry_checks import SELECTIONS, check_desugared_ir, check_value_and_gradient

import coarsen_nb as cn


def _away(rng, shape, gap=0.05):
    """Values in (-1, 1) at least ``gap`` from 0 and from 0.2 (the masks' thresholds), so that finite
    differences never flip a mask."""
    v = rng.uniform(-1.0, 1.0, size=shape)
    for t in (0.0, 0.2):
        near = np.abs(v - t) < gap
        v[near] = t + np.copysign(gap, v[near] - t + 1e-12) * 2
    return v


def _signs(rng, n):
    """A vector whose signs are all positive, all negative or mixed, by the seed."""
    v = _away(rng, n)
    kind = int(rng.integers(0, 3))
    return np.abs(v) if kind == 0 else -np.abs(v) if kind == 1 else v


def masked_energy(x):
    return np.sum(x[x > 0] ** 2)


def mask_of_another(x, y):
    return np.sum(np.exp(x[y > 0]) * 2.0) + np.sum(x[y < 0] * y[y < 0])


def masked_matrix(X):
    return np.sum(X[X > 0.2] ** 2)


def selected_rows(X, v):
    return np.sum(X[v > 0] ** 2) + np.sum(X[v > 0] * X[v > 0][0])


def masked_mean(x):
    return np.mean(x[x > 0.2]) * len(x[x > 0.2])


def gather_with_repeats(x, idx):
    return np.sum(x[idx] * x[idx]) + np.sum(np.sin(x[idx]) * x[idx][::-1])


def gather_in_loop(x, idx):
    s = 0.0
    for k in range(len(idx)):
        s += x[idx[k]] ** 2 * (k + 1)
    return s


def literal_positions(x):
    idx = np.array([2, 0, 2])
    return np.sum(x[idx] ** 2) + x[np.array([1])][0]


def masked_write(x):
    y = x.copy()
    y[x < 0] = 0.0
    return np.sum(y ** 2 * x)


def nested_reads(X):
    s = X[1][0] ** 2 + np.sum(X[0] * X[1][1])
    for i in range(X.shape[0]):
        s += X[i][0] * X[i][-1]
    return s


def first_selected_row(X, v, idx):
    rows = X[v > 0]
    return np.sum(X[v > 0][0] * rows[-1]) + X[idx][1][1] * X[idx][0][-1]


def _positions(rng, n):
    return rng.integers(-n, n, size=int(rng.integers(1, 2 * n)))


def _vec(rng):
    return _signs(rng, int(rng.integers(3, 8)))


def _with_positions(rng):
    x = _away(rng, int(rng.integers(3, 8)))
    return x, _positions(rng, len(x))


def _with_rows(rng):
    X = _away(rng, (int(rng.integers(2, 6)), int(rng.integers(2, 5))))
    v = _signs(rng, X.shape[0])
    v[0] = abs(v[0])            # at least one row selected ([0] of the selection)
    return X, v


def _with_three_rows(rng):
    X = _away(rng, (int(rng.integers(3, 6)), int(rng.integers(2, 5))))
    v = _signs(rng, X.shape[0])
    v[0] = abs(v[0])
    return X, v, rng.integers(-X.shape[0], X.shape[0], size=3)


def _with_one_above(rng):
    x = _away(rng, int(rng.integers(3, 8)))
    x[int(rng.integers(0, len(x)))] = 0.7
    return (x,)


ENTRIES = [
    entry(masked_energy, lambda r: (_vec(r),), "x"),
    entry(mask_of_another, lambda r: (_away(r, 6), _signs(r, 6)), "x y"),
    entry(masked_matrix, lambda r: (_away(r, (3, 4)),), "X"),
    entry(selected_rows, _with_rows, "X"),
    entry(masked_mean, _with_one_above, "x"),
    entry(gather_with_repeats, _with_positions, "x"),
    entry(gather_in_loop, _with_positions, "x"),
    entry(masked_write, lambda r: (_vec(r),), "x"),
    entry(literal_positions, lambda r: (_away(r, int(r.integers(3, 7))),), "x"),
    entry(nested_reads, lambda r: (_away(r, (3, 4)),), "X"),
    entry(first_selected_row, _with_three_rows, "X"),
]
IDS = [e.name for e in ENTRIES]


@pytest.mark.parametrize("e", ENTRIES, ids=IDS)
def test_desugared_ir_means_what_python_means(e):
    check_desugared_ir(e)


@pytest.mark.parametrize("selection", list(SELECTIONS))
@pytest.mark.parametrize("e", ENTRIES, ids=IDS)
def test_value_and_gradient(e, selection):
    check_value_and_gradient(e, selection)


def test_nested_masked_read_in_a_conditional_arm_is_refused_at_its_line():
    """Naming the inner read would evaluate it on both arms, and a read can raise: the user names it."""
    src = "import numpy as np\n\n\ndef f(X, v, c):\n    return np.sum(X[v > 0][0] if c > 0 else X[0])\n"
    f = cn.coarsen(src, name="f")
    with pytest.raises(cn.CoarsenError) as info:
        f.grad(np.ones((3, 2)), np.ones(3), 1.0)
    assert info.value.line == 5 and "rows = X[v > 0]" in str(info.value)
