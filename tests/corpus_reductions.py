"""Corpus of reductions as vectorized code writes them (issue 15): ``np.sum(X, axis=0)``, ``keepdims=True``,
the method forms ``X.sum(axis=1)``, negative and tuple axes, reductions of 3-D arrays; ``np.mean``,
``np.prod``, ``np.max``/``np.min`` over axes, ``np.std``/``np.var`` (``ddof=``) and ``np.linalg.norm``, in
the programs users write with them: softmax and log-softmax over rows, column standardization, a Gaussian
mixture's responsibilities, row norms, variance penalties, batch means.

Entries are :class:`corpus.CorpusEntry` records checked by ``tests/lower/test_vectorized.py`` against
the plain function, central finite differences and JAX.  Inputs of ``max``/``min`` keep their elements
apart (:func:`corpus_inputs.apart`), so the arg-extremum does not change within a finite difference.
"""

from __future__ import annotations

import numpy as np
from corpus_inputs import apart, entry, length, matrix, positive, vector


def column_energy(X, w):
    return np.sum(np.sum(X ** 2, axis=0) * w)


def row_sums_keepdims(X):
    return np.sum(X.sum(axis=1, keepdims=True) * X)


def negative_axis(X):
    s = np.sum(X, axis=-1)
    return np.sum(np.sin(s)) + np.sum(X, 0)[0]


def tuple_axis_3d(T):
    return np.sum(np.sum(T, axis=(0, 2)) ** 2) + np.sum(np.sum(T * T, axis=1, keepdims=True) * T)


def centered(X):
    return np.sum((X - np.sum(X, axis=0) / X.shape[0]) ** 2)


def shifted_sum(x, a):
    # a number every element broadcasts: d/da = Σ 1 + Σ (-2), once per element (printed as xp.sum(1) until
    # stop 42, a gradient n times too small)
    return np.sum(x * x + a) + np.sum(x - 2.0 * a)


def shifted_recurrence(x, a):
    # the closed form of a recurrence adds a number read from x to every element
    y = x.copy()
    for _ in range(4):
        y = y * a + x[0]
    return np.mean(y)


# -- mean, max, min over axes ------------------------------------------------------------------------------


def softmax_rows(X, W):
    Z = X - np.max(X, axis=1, keepdims=True)
    E = np.exp(Z)
    P = E / np.sum(E, axis=1, keepdims=True)
    return np.sum(P * W)


def log_softmax_nll(X, Y):
    Z = X - X.max(axis=1, keepdims=True)
    logp = Z - np.log(np.sum(np.exp(Z), axis=1, keepdims=True))
    return -np.mean(np.sum(logp * Y, axis=1))


def gmm_responsibilities(X, M, logw):
    # X: (n, d) points, M: (d, k) the means as columns, logw: (k,) log weights, unit variances
    D = np.sum(X ** 2, axis=1, keepdims=True) - 2.0 * X @ M + np.sum(M ** 2, axis=0)
    L = logw - 0.5 * D
    m = np.max(L, axis=1, keepdims=True)
    lse = m + np.log(np.sum(np.exp(L - m), axis=1, keepdims=True))
    R = np.exp(L - lse)
    return np.sum(lse) + np.sum(R * R)


def batch_means(T, w):
    # T: (batch, n, d)
    per_item = np.mean(T, axis=(1, 2))
    per_feature = T.mean(axis=0)
    return np.sum(per_item * per_item) + np.sum(np.mean(per_feature, axis=-1) * w)


def row_centering_keepdims(X):
    C = X - X.mean(axis=1, keepdims=True)
    return np.sum(np.tanh(C) * C)


def column_range(X):
    return np.sum((np.max(X, axis=0) - np.amin(X, axis=0)) ** 2) + np.sum(X.min(1))


def max_pool_3d(T, w):
    pooled = np.amax(T, axis=(1, 2))
    return np.sum(pooled * w) + np.sum(np.max(T, axis=-1, keepdims=True) * T) + T.max(0)[0, 0]


def hinge_margins(S, Y):
    # multiclass hinge loss: the largest wrong-class score against the true one
    wrong = S - 10.0 * Y
    return np.mean(np.maximum(0.0, 1.0 + np.max(wrong, axis=1) - np.sum(S * Y, axis=1)))


# -- prod over axes ----------------------------------------------------------------------------------------


def geometric_means(P):
    g = np.prod(P, axis=0) ** (1.0 / P.shape[0])
    return np.sum(g) + np.sum(P.prod(1, keepdims=True) * P)


def prod_tuple_axes(T):
    return np.sum(np.prod(T, axis=(0, 2)) ** 2) + np.prod(T, axis=-1)[0, 0]


# -- var, std ----------------------------------------------------------------------------------------------


def standardize_columns(X, W):
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    return np.sum(Z * W) + np.sum(Z ** 3)


def zscore_sample(x):
    z = (x - x.mean()) / x.std(ddof=1)
    return np.sum(np.exp(z) * x) + np.std(x) + x.var()


def variance_penalty(X, b, y):
    r = X @ b - y
    return np.mean(r ** 2) + 0.1 * np.sum(np.var(X * b, axis=0, ddof=1)) + np.var(b)


def layer_norm(X, g):
    mu = X.mean(axis=-1, keepdims=True)
    v = X.var(axis=-1, keepdims=True)
    H = (X - mu) / np.sqrt(v + 1e-5) * g
    return np.sum(np.sin(H))


def std_3d_keepdims(T):
    s = np.std(T, axis=(0, 2), keepdims=True)
    return np.sum(T / s) + np.sum(np.std(T, axis=1, ddof=1) ** 2) + np.var(T, 0)[0, 0]


# -- norms -------------------------------------------------------------------------------------------------


def row_norms(X, w):
    return np.sum(np.linalg.norm(X, axis=1) * w) + np.linalg.norm(X[0] - X[1])


def normalize_rows(X, W):
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    return np.sum(U * W)


def cosine_similarities(X, Y):
    num = np.sum(X * Y, axis=1)
    return np.sum(num / (np.linalg.norm(X, axis=1) * np.linalg.norm(Y, axis=-1)))


def frobenius(A, T):
    return np.linalg.norm(A) ** 2 + np.linalg.norm(A @ A) + np.sum(np.linalg.norm(T, axis=(1, 2))) \
        + np.sum(np.linalg.norm(T, axis=0, keepdims=True) * T) + np.linalg.norm(T)


def _pair(rng):
    X = matrix(rng)
    return X, vector(rng, X.shape[1])


def _rows(rng):
    X = matrix(rng)
    return X, vector(rng, X.shape[0])


def _two(rng):
    X = matrix(rng)
    return X, matrix(rng, X.shape)


def _two_apart(rng):
    X = apart(rng, (length(rng, 2, 5), length(rng, 2, 5)))
    return X, matrix(rng, X.shape)


def _batch(rng):
    T = _cube(rng)[0]
    return T, vector(rng, T.shape[1])


def _scores(rng):
    n, k = length(rng, 3, 6), length(rng, 3, 5)
    Y = np.eye(k)[rng.integers(0, k, size=n)]
    return apart(rng, (n, k)), Y


def _gmm(rng):
    n, d, k = length(rng, 3, 6), length(rng, 2, 4), length(rng, 2, 4)
    return rng.normal(size=(n, d)), rng.normal(size=(d, k)), vector(rng, k)


def _pooled(rng):
    shape = (length(rng, 2, 4), length(rng, 2, 4), length(rng, 2, 4))
    return apart(rng, shape), vector(rng, shape[0])


def _regression(rng):
    X = matrix(rng, (length(rng, 4, 8), length(rng, 2, 4)))
    return X, vector(rng, X.shape[1]), vector(rng, X.shape[0])


def _cube(rng):
    return (rng.uniform(-1.0, 1.0, size=(length(rng, 2, 4), length(rng, 2, 4), length(rng, 2, 4))),)


def _square_and_cube(rng):
    n = length(rng, 2, 5)
    return matrix(rng, (n, n)), _cube(rng)[0]


REDUCTIONS = [
    entry(column_energy, _pair, "X w", "axis"),
    entry(row_sums_keepdims, lambda r: (matrix(r),), "X", "axis keepdims method"),
    entry(negative_axis, lambda r: (matrix(r),), "X", "axis negative positional"),
    entry(tuple_axis_3d, lambda r: (r.uniform(-1.0, 1.0, size=(3, 4, 2)),), "T", "axis tuple 3d keepdims"),
    entry(centered, lambda r: (matrix(r),), "X", "axis"),
    entry(shifted_sum, lambda r: (vector(r), float(r.uniform(-1.0, 1.0))), "x a", "broadcast"),
    entry(shifted_recurrence, lambda r: (vector(r), float(r.uniform(-0.9, 0.9))), "x a", "broadcast loop"),
    entry(softmax_rows, _two_apart, "X W", "axis keepdims max softmax"),
    entry(log_softmax_nll, _scores, "X", "axis keepdims max method softmax"),
    entry(gmm_responsibilities, _gmm, "X M logw", "axis keepdims max logsumexp"),
    entry(batch_means, _batch, "T w", "axis tuple mean method negative 3d"),
    entry(row_centering_keepdims, lambda r: (matrix(r),), "X", "axis keepdims mean method"),
    entry(column_range, lambda r: (apart(r, (length(r, 2, 5), length(r, 2, 5))),), "X", "axis max min amin method"),
    entry(max_pool_3d, _pooled, "T w", "axis tuple max amax method keepdims 3d"),
    entry(hinge_margins, _scores, "S", "axis max"),
    entry(geometric_means, lambda r: (positive(r, (length(r, 2, 5), length(r, 2, 5))),), "P",
          "axis prod method positional keepdims"),
    entry(prod_tuple_axes, _cube, "T", "axis tuple prod negative 3d"),
    entry(standardize_columns, _two, "X W", "axis mean std method"),
    entry(zscore_sample, lambda r: (vector(r),), "x", "std var ddof method whole"),
    entry(variance_penalty, _regression, "X b y", "axis var ddof matmul"),
    entry(layer_norm, _pair, "X g", "axis negative mean var keepdims method"),
    entry(std_3d_keepdims, _cube, "T", "axis tuple std var ddof keepdims positional 3d"),
    entry(row_norms, _rows, "X w", "axis norm"),
    entry(normalize_rows, _two, "X W", "axis norm keepdims"),
    entry(cosine_similarities, _two, "X Y", "axis negative norm"),
    entry(frobenius, _square_and_cube, "A T", "norm frobenius matrix axis tuple keepdims 3d"),
]
