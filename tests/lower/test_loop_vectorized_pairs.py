"""The same computation written in loop style and in vectorized style (issue 15): both compile, and their
values and gradients agree with each other to 1e-10 and with central differences.  (Their speeds are
compared in the benchmarks, not here.)"""

from __future__ import annotations

import math

import numpy as np
import pytest
from gradcheck import assert_close, finite_difference

import coarsen_nb as cn


def energy_loop(x):
    s = 0.0
    for i in range(len(x) - 1):
        s += (x[i + 1] - x[i]) ** 2
    return s


def energy_vec(x):
    return np.sum(np.diff(x) ** 2)


def logsumexp_loop(x):
    m = x[0]
    for i in range(1, len(x)):
        m = max(m, x[i])
    s = 0.0
    for i in range(len(x)):
        s += math.exp(x[i] - m)
    return m + math.log(s)


def logsumexp_vec(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def cumulative_loop(r):
    acc = 0.0
    tot = 0.0
    for i in range(len(r)):
        acc += r[i]
        tot += acc * acc
    return tot


def cumulative_vec(r):
    return np.sum(np.cumsum(r) ** 2)


def smoothing_loop(x, w):
    n = len(x) - len(w) + 1
    s = 0.0
    for i in range(n):
        acc = 0.0
        for k in range(len(w)):
            acc += w[k] * x[i + k]
        s += acc * acc
    return s


def smoothing_vec(x, w):
    return np.sum(np.correlate(x, w, mode="valid") ** 2)


def rows_loop(X, w):
    s = 0.0
    for i in range(X.shape[0]):
        z = 0.0
        for j in range(X.shape[1]):
            z += X[i, j] * w[j]
        s += math.log(1.0 + math.exp(z))
    return s


def rows_vec(X, w):
    return np.sum(np.log(1.0 + np.exp(X @ w)))


def hinge_loop(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 0.2:
            s += x[i] - 0.2
    return s


def hinge_vec(x):
    return np.sum(np.where(x > 0.2, x - 0.2, 0.0))


def _away(rng, n):
    v = rng.uniform(-1.0, 1.0, size=n)
    v[np.abs(v - 0.2) < 0.05] += 0.1
    return v


PAIRS = [
    (energy_loop, energy_vec, lambda r: (r.normal(size=int(r.integers(2, 9))),)),
    (logsumexp_loop, logsumexp_vec, lambda r: (r.normal(size=int(r.integers(1, 9))),)),
    (cumulative_loop, cumulative_vec, lambda r: (r.normal(size=int(r.integers(1, 9))),)),
    (smoothing_loop, smoothing_vec, lambda r: (r.normal(size=int(r.integers(5, 10))),
                                                r.normal(size=int(r.integers(1, 5))))),
    (rows_loop, rows_vec, lambda r: (r.normal(size=(int(r.integers(1, 6)), 3)), r.normal(size=3))),
    (hinge_loop, hinge_vec, lambda r: (_away(r, int(r.integers(1, 9))),)),
]


@pytest.mark.parametrize("loop, vec, make", PAIRS, ids=[p[0].__name__.replace("_loop", "") for p in PAIRS])
def test_loop_and_vectorized_styles_agree(loop, vec, make):
    f_loop, f_vec = cn.coarsen(loop), cn.coarsen(vec)
    for seed in range(4):
        args = make(np.random.default_rng(seed))
        assert_close(f_loop(*args), f_vec(*args), rtol=1e-10, atol=1e-12, what=f"{loop.__name__} value")
        g_loop, g_vec = f_loop.grad(*args), f_vec.grad(*args)
        g_loop = g_loop if isinstance(g_loop, tuple) else (g_loop,)
        g_vec = g_vec if isinstance(g_vec, tuple) else (g_vec,)
        for k, (a, b) in enumerate(zip(g_loop, g_vec, strict=True)):
            assert_close(a, b, rtol=1e-10, atol=1e-12, what=f"{loop.__name__} d/d{k} loop vs vectorized")
            assert_close(b, finite_difference(vec, args, k), rtol=1e-5, atol=1e-6, what=f"{vec.__name__} vs FD")
