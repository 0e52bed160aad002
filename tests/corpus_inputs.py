"""Inputs and entry records shared by the vectorized corpora (``corpus_reductions.py``, ``corpus_arrays.py``,
``corpus_linalg.py``): drawn arrays that keep away from kinks and singular matrices, and the entry builder."""

from __future__ import annotations

import numpy as np
from corpus import CorpusEntry


def length(rng, lo=3, hi=8) -> int:
    return int(rng.integers(lo, hi))


def vector(rng, n=None, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=length(rng) if n is None else n)


def matrix(rng, shape=None, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape or (length(rng, 2, 6), length(rng, 2, 6)))


def positive(rng, shape, lo=0.5, hi=1.5):
    return rng.uniform(lo, hi, size=shape)


def apart(rng, shape, gap=0.05):
    """Values in (-1, 1) whose pairwise differences keep apart (the kinks of max, min and sorting)."""
    n = int(np.prod(shape))
    while True:
        v = rng.uniform(-1.0, 1.0, size=n)
        d = np.abs(np.subtract.outer(v, v))[~np.eye(n, dtype=bool)]
        if n < 2 or d.min() > gap / max(1, n // 8):
            return v.reshape(shape)


def well_conditioned(rng, n):
    """A square matrix near the identity: invertible, with a determinant of either sign away from 0."""
    return np.eye(n) * rng.choice([-1.0, 1.0], size=n) * 2.0 + 0.3 * rng.uniform(-1.0, 1.0, size=(n, n))


def entry(fn, make_args, wrt, tags=""):
    return CorpusEntry(fn.__name__, fn, make_args, tuple(wrt.split()), True, frozenset(tags.split()))
