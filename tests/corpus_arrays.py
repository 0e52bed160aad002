"""Corpus of array functions as vectorized code writes them (issue 15): ``np.where`` masks in losses,
``np.clip``-ed probabilities, finite-difference stencils with ``np.diff`` and periodic ``np.roll``
Laplacians, cumulative returns, pairwise differences ``x[:, None] - x[None, :]``, ``np.outer``, time
grids with ``np.linspace``/``np.arange``, concatenated and stacked features, reshapes.

Entries are :class:`corpus.CorpusEntry` records checked by ``tests/lower/test_vectorized.py`` against
the plain function, central finite differences and JAX.  Inputs keep away from the kinks of
``where``/``clip`` (finite differences there are meaningless), and from zeros where a product is
differentiated (the zeros of ``cumprod`` have tests of their own, tests/rules/test_arrays.py).
"""

from __future__ import annotations

import numpy as np
from corpus_inputs import entry, matrix, positive, vector


def _away(rng, n, gap=0.1, lo=-2.0, hi=2.0):
    """Values in (lo, hi) at least ``gap`` from 0 and from ±1 (the kinks of the losses below)."""
    v = rng.uniform(lo, hi, size=n)
    for k in (-1.0, 0.0, 1.0):
        v = np.where(np.abs(v - k) < gap, k + gap * np.sign(v - k + 1e-12) * 1.5, v)
    return v


def huber_loss(r, delta):
    a = np.abs(r)
    return np.sum(np.where(a <= delta, 0.5 * r ** 2, delta * (a - 0.5 * delta)))


def relu_layer(W, x):
    z = W @ x
    return np.sum(np.where(z > 0, z, 0.0) ** 2)


def hinge_loss(w, X, y):
    margin = y * (X @ w)
    return np.mean(np.where(margin < 1.0, 1.0 - margin, 0.0)) + 0.1 * np.sum(w * w)


def safe_log_where(x):
    return np.sum(np.where(x > 0, np.log(np.abs(x) + 1.0), x ** 3))


def clipped_log_loss(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    p = np.clip(p, 0.2, 0.8)
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def clipped_residual(x, lo, hi):
    return np.sum(np.clip(x, lo, hi) ** 2 * x)


def cumulative_returns(r):
    wealth = np.cumprod(1.0 + r)
    return np.sum(np.log(wealth)) + wealth[-1]


def running_sum_penalty(x):
    s = np.cumsum(x)
    return np.sum(s ** 2) / len(x)


def cumsum_rows_cols(X):
    return np.sum(np.cumsum(X, axis=0) * np.cumsum(X ** 2, axis=1)) + np.sum(np.cumprod(X, axis=-1))


def total_variation(u):
    return np.sum(np.sqrt(np.diff(u) ** 2 + 1e-3))


def second_difference_smoothness(u, h):
    d2 = np.diff(u, n=2) / h ** 2
    return np.sum(d2 ** 2) * h


def image_gradient_energy(U):
    gx = np.diff(U, axis=1)
    gy = np.diff(U, axis=0)
    return np.sum(gx ** 2) + np.sum(gy ** 2)


def periodic_laplacian_energy(u):
    lap = np.roll(u, 1) - 2.0 * u + np.roll(u, -1)
    return np.sum(lap ** 2) + np.sum(np.sin(u))


def periodic_laplacian_2d(U):
    lap = np.roll(U, 1, axis=0) + np.roll(U, -1, axis=0) + np.roll(U, 1, axis=1) + np.roll(U, -1, axis=1) - 4 * U
    return 0.5 * np.sum(U * lap)


def pairwise_gaussian_energy(x):
    d = x[:, None] - x[None, :]
    return np.sum(np.exp(-d ** 2))


def pairwise_distances_2d(P):
    dx = P[:, 0][:, None] - P[:, 0][None, :]
    dy = P[:, 1][:, np.newaxis] - P[:, 1][np.newaxis, :]
    return np.sum(np.sqrt(dx ** 2 + dy ** 2 + 0.1))


def outer_quadratic(u, v, A):
    return np.sum(np.outer(u, v) * A) + np.sum(np.outer(u, u) ** 2)


def linspace_trajectory(a, b, w):
    t = np.linspace(a, b, len(w))
    return np.sum(w * np.sin(t)) + np.sum(np.diff(t) ** 2)


def arange_weights(x, n):
    k = np.arange(n)
    return np.sum(x[:n] * np.exp(-0.5 * k)) + np.sum(x * np.arange(1, len(x) + 1) ** 2)


def damped_signal(c, x):
    t = np.arange(len(x)) * 0.1
    return np.sum((c * np.exp(-t) - x) ** 2)


def concatenated_features(x, y):
    f = np.concatenate([x, y ** 2, np.sin(x)])
    return np.sum(f ** 2) + f[0] * f[-1]


def concatenated_rows(X, Y):
    Z = np.concatenate((X, 2.0 * Y), axis=1)
    return np.sum(Z[:, 1:] * Z[:, :-1]) + np.sum((Z @ np.ones(Z.shape[1])) ** 2)


def stacked_coordinates(x, y):
    P = np.stack([x, y ** 2], axis=1)
    return np.sum(P ** 3) + np.sum(np.stack((x, y))[1] * x)


def reshape_blocks(x):
    B = x.reshape(2, -1)
    return np.sum(np.sum(B, axis=0) ** 2) + np.sum(x.reshape((3, -1))[0])


def flatten_matrix(X):
    v = X.reshape(-1)
    return np.sum(np.cumsum(v) ** 2) + np.sum(np.reshape(v, X.shape) * X)


def column_broadcast_scaling(X, s):
    return np.sum((X * s[:, None] - s[None, :2]) ** 2)


def pairwise_ranking_loss(s_pos, s_neg):
    d = s_neg[None, :] - s_pos[:, None]
    return np.mean(np.where(d > 0, d + np.log1p(np.exp(-d)), np.log1p(np.exp(d))))


def row_floor_clip(X, lo):
    return np.sum(np.clip(X, lo[:, None], 0.5) ** 2)


def masked_columns(X, w):
    return np.sum(np.where(w[None, :] > 0, X * w, np.exp(X)) ** 2)


def leaky_cumulative(X):
    C = np.cumsum(X, axis=1)
    return np.sum(np.where(C > 0, C, 0.1 * C) ** 2)


def _six(r):
    return (vector(r, 6),)


def _hinge_args(rng):
    X = matrix(rng, (8, 3))
    w = vector(rng, 3)
    y = rng.choice([-1.0, 1.0], size=8)
    m = y * (X @ w)
    X = np.where(np.abs(m - 1.0)[:, None] < 0.1, X * 1.5, X)    # no margin at the kink
    return w, X, y


def _logloss_args(rng):
    X = matrix(rng, (10, 3), -2.0, 2.0)
    w = vector(rng, 3)
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    keep = (np.abs(p - 0.2) > 0.02) & (np.abs(p - 0.8) > 0.02)
    return w, X[keep], rng.choice([0.0, 1.0], size=int(keep.sum()))


def _relu_args(rng):
    W, x = matrix(rng, (5, 4)), vector(rng, 4)
    z = W @ x
    return np.where(np.abs(z)[:, None] < 0.05, W + 0.2, W), x


def smoothed_signal(x, w):
    y = np.convolve(x, w / np.sum(w), mode="same")
    return np.sum((y - x) ** 2) + 0.1 * np.sum(np.convolve(x, w) ** 2)


def matched_filter(x, template):
    score = np.correlate(x, template, mode="valid")
    return np.log(np.sum(np.exp(score)))


def methods_of_arrays(x, X):
    """The methods that stand for NumPy functions: x.clip, x.cumsum, x.cumprod (X.trace and X.transpose are in
    the linear algebra corpus: the array API spells them otherwise)."""
    c = x.clip(-0.5, 0.5)
    return np.sum(c.cumsum() ** 2) + np.sum((0.5 * x).cumprod()) + np.sum(X.cumsum(axis=0) * X)


ARRAYS = [
    entry(smoothed_signal, lambda r: (r.normal(size=int(r.integers(4, 10))), positive(r, int(r.integers(1, 5)))),
          "x w", "convolve"),
    entry(matched_filter, lambda r: (r.normal(size=int(r.integers(5, 10))), r.normal(size=int(r.integers(1, 5)))),
          "x template", "correlate"),
    entry(huber_loss, lambda r: (_away(r, 7), 1.0), "r", "where mask loss"),
    entry(relu_layer, _relu_args, "W x", "where relu matmul"),
    entry(hinge_loss, _hinge_args, "w X", "where hinge"),
    entry(safe_log_where, lambda r: (_away(r, 6),), "x", "where mask log"),
    entry(clipped_log_loss, _logloss_args, "w", "clip log loss"),
    entry(clipped_residual, lambda r: (_away(r, 6, lo=-1.5, hi=1.5) * 0.9 + 0.03, -0.5, 0.6), "x lo hi",
          "clip bounds"),
    entry(cumulative_returns, lambda r: (vector(r, 8, -0.1, 0.1),), "r", "cumprod finance"),
    entry(running_sum_penalty, _six, "x", "cumsum"),
    entry(cumsum_rows_cols, lambda r: (matrix(r, (3, 4)),), "X", "cumsum cumprod axis 2d"),
    entry(total_variation, _six, "u", "diff stencil"),
    entry(second_difference_smoothness, lambda r: (vector(r, 7), 0.5), "u h", "diff order stencil"),
    entry(image_gradient_energy, lambda r: (matrix(r, (4, 5)),), "U", "diff axis 2d"),
    entry(periodic_laplacian_energy, _six, "u", "roll laplacian"),
    entry(periodic_laplacian_2d, lambda r: (matrix(r, (4, 3)),), "U", "roll axis 2d laplacian"),
    entry(pairwise_gaussian_energy, _six, "x", "newaxis pairwise"),
    entry(pairwise_distances_2d, lambda r: (matrix(r, (5, 2)),), "P", "newaxis pairwise slices"),
    entry(outer_quadratic, lambda r: (vector(r, 3), vector(r, 4), matrix(r, (3, 4))), "u v", "outer"),
    entry(linspace_trajectory, lambda r: (0.2, 1.3, vector(r, 6)), "a b w", "linspace grid"),
    entry(arange_weights, lambda r: (vector(r, 6), 4), "x", "arange int"),
    entry(damped_signal, lambda r: (1.3, vector(r, 5)), "c x", "arange grid"),
    entry(concatenated_features, lambda r: (vector(r, 3), vector(r, 2)), "x y", "concatenate list"),
    entry(concatenated_rows, lambda r: (matrix(r, (3, 2)), matrix(r, (3, 4))), "X Y", "concatenate axis tuple"),
    entry(stacked_coordinates, lambda r: (vector(r, 4), vector(r, 4)), "x y", "stack axis"),
    entry(reshape_blocks, _six, "x", "reshape method"),
    entry(flatten_matrix, lambda r: (matrix(r, (2, 3)),), "X", "reshape flatten shape"),
    entry(pairwise_ranking_loss, lambda r: (vector(r, 4), vector(r, 3)), "s_pos s_neg", "newaxis where pairwise"),
    entry(row_floor_clip, lambda r: (_away(r, 12, 0.1, -0.9, 0.9).reshape(4, 3), r.uniform(-0.6, -0.5, size=4)),
          "X lo", "clip newaxis broadcast"),
    entry(masked_columns, lambda r: (matrix(r, (4, 3)), np.array([0.5, -0.4, 0.3])), "X w", "where newaxis mask"),
    entry(leaky_cumulative, lambda r: (matrix(r, (3, 4)),), "X", "cumsum axis where"),
    entry(column_broadcast_scaling, lambda r: (matrix(r, (3, 2)), positive(r, 3)), "X s", "newaxis broadcast"),
    entry(methods_of_arrays, lambda r: (vector(r), matrix(r, (4, 4))), "x X", "methods clip cumsum"),
]
