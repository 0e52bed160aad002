"""Corpus of reductions as vectorized code writes them (issue 15): ``np.sum(X, axis=0)``, ``keepdims=True``,
the method forms ``X.sum(axis=1)``, negative and tuple axes, reductions of 3-D arrays.

Entries are :class:`corpus.CorpusEntry` records checked by ``tests/lower/test_vectorized.py`` against
the plain function, central finite differences and JAX.
"""

from __future__ import annotations

import numpy as np
from corpus_inputs import entry, matrix, vector


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


def _pair(rng):
    X = matrix(rng)
    return X, vector(rng, X.shape[1])


REDUCTIONS = [
    entry(column_energy, _pair, "X w", "axis"),
    entry(row_sums_keepdims, lambda r: (matrix(r),), "X", "axis keepdims method"),
    entry(negative_axis, lambda r: (matrix(r),), "X", "axis negative positional"),
    entry(tuple_axis_3d, lambda r: (r.uniform(-1.0, 1.0, size=(3, 4, 2)),), "T", "axis tuple 3d keepdims"),
    entry(centered, lambda r: (matrix(r),), "X", "axis"),
]
