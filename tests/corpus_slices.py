"""Corpus of slicing as notebook users write it (issue 15): ``x[1:] - x[:-1]``, ``u[1:-1] = ...``,
``X[:, j]``, ``img[:, 1:]``, ``x[::-1]``, windows ``x[i:i+3]``, empty and clamped slices, slice writes
and ``+=``, and ``max``/``min`` of generators.

The entries are :class:`corpus.CorpusEntry` records, like the loop-style corpus, so the same
oracles apply: the plain Python function (NumPy's own slicing), central finite differences and JAX
(``tests/lower/test_slices.py``).  Lengths are drawn, so a slice's clamping and emptiness vary
with the seed; inputs keep away from kinks.
"""

# ruff: noqa: B905 - the entries write zip(x, y) as users do: zip stops at the shorter operand

from __future__ import annotations

import numpy as np
from corpus import CorpusEntry

# --------------------------------------------------------------------------
# 1. Reads of 1-D arrays
# --------------------------------------------------------------------------


def finite_difference_energy(x):
    return np.sum((x[1:] - x[:-1]) ** 2)


def total_variation(x, y, lam):
    return np.sum(np.sqrt((x[1:] - x[:-1]) ** 2 + 1e-3)) + lam * np.sum((x - y) ** 2)


def trapezoid(y, h):
    return h * np.sum(y[1:] + y[:-1]) / 2.0


def reversed_dot(x):
    return np.sum(x * x[::-1]) + x[::-1][0]


def strided(x):
    return np.sum(x[::2] ** 2) - 3.0 * np.sum(x[1::2]) + np.sum(np.exp(x[::-3])) + np.sum(x[-1:0:-2] ** 3)


def empty_and_clamped(x):
    # empty: start past stop, a reversed stop past start, from the end past the start; clamped: bounds past
    # either end of the array
    empty = np.sum(x[4:2]) + np.sum(x[len(x):]) + np.sum(x[1:3:-1]) + len(x[-1:-3])
    return empty + np.sum(x[-100:100] ** 2) + np.sum(x[2:1000]) + np.sum(x[:-100]) + len(x[7:])


def autocorrelation(x):
    return np.dot(x[:-1], x[1:]) / np.dot(x, x)


def window_bounds(x, i):
    return np.sum(x[i:i + 3] ** 2) + np.sum(x[-i:]) + np.sum(x[:i] * 2.0) + np.mean(x[i // 2:i // 2 + 2])


def moving_window(x):
    s = 0.0
    for i in range(len(x) - 2):
        w = x[i:i + 3]
        s = s + np.sum(w) ** 2 / 3.0 - np.prod(w)
    return s


def loop_over_slice(x):
    s = 0.0
    for k, v in enumerate(x[1:-1]):
        s = s + k * v * v
    for v in x[::-2]:
        s = s + np.sin(v)
    return s


def slice_of_expression(x, a):
    y = np.tanh(a * x)
    return np.sum(y[1:] * (y - 0.5)[:-1]) + np.sum((2.0 * x)[-2:])


def slice_length_loop(x):
    s = 0.0
    tail = x[2:]
    for i in range(len(tail)):
        s = s + tail[i] * x[i]
    return s


# --------------------------------------------------------------------------
# 2. Rows and columns of 2-D arrays
# --------------------------------------------------------------------------


def column_sums(X):
    s = 0.0
    for j in range(X.shape[1]):
        s = s + np.sum(X[:, j]) ** 2
    return s


def row_weights(X, w):
    s = 0.0
    for i in range(len(X)):
        s = s + np.tanh(np.sum(X[i, :] * w))
    return s + np.sum(X[0, ::-1] * X[-1, :]) + np.sum(X[1:, 0] - X[:-1, 1])


def row_matmul(X, w):
    return np.sum(X[1, :] @ w) + np.sum(X[:, 0] ** 2) + np.dot(X[-1, 1:], w[:-1])


def image_gradient(img):
    dx = img[:, 1:] - img[:, :-1]
    dy = img[1:, :] - img[:-1, :]
    return np.sum(dx * dx) + np.sum(np.sqrt(dy * dy + 0.1))


def row_blocks(X):
    n = X.shape[1]
    return np.sum(X[1:] * X[:-1]) + n * np.sum(X[::2, 1::-1] ** 3) + np.sum(X[-2:, -3:])


# --------------------------------------------------------------------------
# 3. Writes into arrays the function made
# --------------------------------------------------------------------------


def block_writes(X):
    U = X.copy()
    U[1:, ::-1] = 2.0 * X[:-1, :]
    U[:2, 1:3] += 1.5
    return np.sum(U * U * X)


def laplacian(x):
    u = np.zeros(len(x))
    u[1:-1] = x[:-2] - 2 * x[1:-1] + x[2:]
    return np.sum(u * u) + np.sum(u * x)


def smoothing_step(x, r):
    u = x.copy()
    u[1:-1] += r * (x[:-2] - 2 * x[1:-1] + x[2:])
    return np.sum(np.sin(u) * x)


def broadcast_scalar_write(x, c):
    u = x.copy()
    u[::3] = c
    u[-2:] = 2.0 * c
    return np.sum(np.sin(u) * x)


def shift_writes(x):
    u = np.zeros(len(x))
    u[:-1] = x[1:]
    u[-1:] = x[:1]
    v = np.zeros(len(x))
    v[::-1] = x
    return np.sum(u * x) + np.sum(v * np.cos(x))


def overlapping_write(x):
    u = x.copy()
    u[1:] = u[:-1] * 0.5       # NumPy evaluates the right side first: the old values move
    u[:3] *= 2.0
    return np.sum(u ** 3)


def heat_steps(x, r):
    u = x.copy()
    for _ in range(3):
        u[1:-1] = u[1:-1] + r * (u[:-2] - 2 * u[1:-1] + u[2:])
    return np.sum(u ** 2)


def column_writes(X):
    U = X.copy()
    U[:, 0] = 2.0 * X[:, 1]
    U[0, 1:] += X[1, :-1]
    return np.sum(U * U)


# --------------------------------------------------------------------------
# 4. max and min of a generator (desugared like sum(... for ...))
# --------------------------------------------------------------------------


def max_of_generator(x):
    return max(x[i] * x[i + 1] for i in range(len(x) - 1)) + min([np.sin(v) for v in x])


def extremum_filter_default(x, lo):
    big = max((v * v for v in x if v > lo), default=-1.0)
    return big + min(abs(a - b) for a, b in zip(x[1:], x[:-1]))


# --------------------------------------------------------------------------
# Inputs and entries
# --------------------------------------------------------------------------


def _arr(rng, n, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=n)


def _len(rng, lo=4, hi=9):
    return int(rng.integers(lo, hi))


def _mat(rng, lo=2, hi=6):
    return rng.uniform(-1.0, 1.0, size=(_len(rng, lo, hi), _len(rng, lo, hi)))


def _apart(rng, n, gap=0.08):
    """n values in (-1, 1) whose pairwise differences, products of neighbours and squares keep apart
    (the kinks of max and min)."""
    while True:
        v = rng.uniform(-1.0, 1.0, size=n)
        d = np.abs(np.subtract.outer(v, v))[~np.eye(n, dtype=bool)]
        p = np.sort(v[1:] * v[:-1])
        s = np.sort(v * v)
        gaps = np.sort(np.abs(np.diff(v)))
        if d.min() > gap and np.diff(p).min() > 1e-2 and np.diff(s).min() > 1e-2 and np.diff(gaps).min() > 1e-2:
            return v


def _entry(fn, make_args, wrt, tags=""):
    return CorpusEntry(fn.__name__, fn, make_args, tuple(wrt.split()), True, frozenset(tags.split()))


def _row_args(rng):
    m = _mat(rng, 3, 6)
    return m, _arr(rng, m.shape[1])


_ALL: list[CorpusEntry] = [
    _entry(finite_difference_energy, lambda r: (_arr(r, _len(r)),), "x", "read"),
    _entry(total_variation, lambda r: (lambda n: (_arr(r, n), _arr(r, n), float(r.uniform(0.5, 1.5))))(_len(r)),
           "x y lam", "read"),
    _entry(trapezoid, lambda r: (_arr(r, _len(r)), float(r.uniform(0.1, 1.0))), "y h", "read"),
    _entry(reversed_dot, lambda r: (_arr(r, _len(r)),), "x", "read negative-step"),
    _entry(strided, lambda r: (_arr(r, _len(r, 3, 10)),), "x", "read step negative-step"),
    _entry(empty_and_clamped, lambda r: (_arr(r, _len(r)),), "x", "read empty clamp"),
    _entry(autocorrelation, lambda r: (_arr(r, _len(r), 0.2, 1.0),), "x", "read"),
    _entry(window_bounds, lambda r: (_arr(r, 8), int(r.integers(0, 9))), "x", "read bounds"),
    _entry(moving_window, lambda r: (_arr(r, _len(r)),), "x", "read loop"),
    _entry(loop_over_slice, lambda r: (_arr(r, _len(r)),), "x", "read loop enumerate"),
    _entry(slice_of_expression, lambda r: (_arr(r, _len(r)), float(r.uniform(0.5, 1.5))), "x a", "read"),
    _entry(slice_length_loop, lambda r: (_arr(r, _len(r)),), "x", "read loop"),
    _entry(column_sums, lambda r: (_mat(r),), "X", "2d column loop"),
    _entry(row_weights, _row_args, "X w", "2d row loop"),
    _entry(row_matmul, _row_args, "X w", "2d row matmul"),
    _entry(image_gradient, lambda r: (_mat(r),), "img", "2d block"),
    _entry(row_blocks, lambda r: (_mat(r, 3, 6),), "X", "2d block negative-step"),
    _entry(block_writes, lambda r: (_mat(r, 3, 6),), "X", "2d block write augmented"),
    _entry(laplacian, lambda r: (_arr(r, _len(r)),), "x", "write"),
    _entry(smoothing_step, lambda r: (_arr(r, _len(r)), float(r.uniform(0.1, 0.4))), "x r", "write augmented"),
    _entry(broadcast_scalar_write, lambda r: (_arr(r, _len(r)), float(r.uniform(-1.0, 1.0))), "x c",
           "write broadcast"),
    _entry(shift_writes, lambda r: (_arr(r, _len(r)),), "x", "write negative-step"),
    _entry(overlapping_write, lambda r: (_arr(r, _len(r)),), "x", "write augmented"),
    _entry(heat_steps, lambda r: (_arr(r, _len(r)), float(r.uniform(0.1, 0.3))), "x r", "write loop"),
    _entry(column_writes, lambda r: (_mat(r, 3, 6),), "X", "2d write augmented"),
    _entry(max_of_generator, lambda r: (_apart(r, _len(r)),), "x", "extremum"),
    _entry(extremum_filter_default, lambda r: (_apart(r, _len(r)), float(r.choice([-0.5, 0.05, 2.0]))), "x",
           "extremum"),
]

SLICES = _ALL
SLICES_IDS = [e.name for e in SLICES]
