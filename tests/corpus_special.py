"""Corpus of code that calls ``scipy.special`` (issue 15), and NumPy's linear algebra imported by name:
logistic and probit regression, Poisson and negative-binomial log-likelihoods, binary cross-entropy,
softmax cross-entropy with ``logsumexp``, the normal tail by ``erfc``, Beta log-densities by ``gammaln``.

Each function is imported the ways users import it (``from scipy.special import expit``, ``import
scipy.special as sc``, ``scipy.special.logsumexp``, ``from numpy.linalg import solve``).  Entries are
checked by ``tests/lower/test_vectorized.py`` against the plain function, central differences and JAX
(``jax.scipy.special``).
"""

from __future__ import annotations

import math

import numpy as np
import scipy
import scipy.special as sc
from corpus_inputs import entry, length, matrix, positive, vector, well_conditioned
from numpy.linalg import slogdet, solve
from scipy.special import erf, erfc, expit, gammaln, logit, logsumexp, xlogy
from scipy.special import expit as sigmoid


def logistic_nll(X, w, y):
    p = expit(X @ w)
    return -np.sum(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def logistic_renamed(x, a, b):
    return np.sum(sigmoid(a * x + b) ** 2)


def probit_nll(x, y, a, b):
    p = 0.5 * erfc(-(a * x + b) / math.sqrt(2.0))
    return -np.sum(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def normal_tail_loop(x, mu, s):
    total = 0.0
    for i in range(len(x)):
        total += math.log(0.5 * math.erfc((x[i] - mu) / (s * math.sqrt(2.0))))
    return total


def far_tail(x, s):
    return np.sum(np.log(sc.erfc(3.0 + s * x * x)))


def erf_features(x, w):
    return np.sum(w * erf(x) + sc.erf(w * x) ** 2)


def poisson_nll(k, X, w):
    lam = np.exp(X @ w)
    return np.sum(lam - xlogy(k, lam) + gammaln(k + 1.0))


def negative_binomial_nll(k, mu, r):
    return -np.sum(gammaln(k + r) - gammaln(r) - gammaln(k + 1.0) + xlogy(r, r / (r + mu)) + xlogy(k, mu / (r + mu)))


def beta_logpdf(x, a, b):
    return np.sum(xlogy(a - 1.0, x) + xlogy(b - 1.0, 1.0 - x) + gammaln(a + b) - gammaln(a) - gammaln(b))


def binary_cross_entropy(p, y):
    return -np.sum(xlogy(y, p) + xlogy(1.0 - y, 1.0 - p))


def logit_roundtrip(q, t):
    return np.sum((logit(q) - t) ** 2) + np.sum(expit(logit(q)) * t)


def softmax_cross_entropy(X, W, onehot):
    Z = X @ W
    return -np.sum(onehot * (Z - logsumexp(Z, axis=1, keepdims=True)))


def log_partition(theta):
    return sc.logsumexp(theta) + scipy.special.logsumexp(2.0 * theta)


def mixture_loglik(x, mu, s):
    D = -0.5 * ((x[:, None] - mu[None, :]) / s) ** 2
    return np.sum(logsumexp(D, axis=1)) - np.sum(logsumexp(D, axis=0))


def gaussian_by_imports(S, x):
    sign, logdet = slogdet(S)
    return logdet + x @ solve(S, x)


def _classification(rng):
    X = matrix(rng, (length(rng, 5, 9), length(rng, 2, 4)))
    return X, vector(rng, X.shape[1]), (rng.uniform(size=X.shape[0]) > 0.5).astype(float)


def _poisson(rng):
    X = matrix(rng, (length(rng, 5, 9), length(rng, 2, 4)), -0.5, 0.5)
    return rng.integers(0, 5, size=X.shape[0]).astype(float), X, vector(rng, X.shape[1], -0.5, 0.5)


def _softmax(rng):
    X = matrix(rng, (length(rng, 4, 8), length(rng, 2, 4)))
    W = matrix(rng, (X.shape[1], length(rng, 2, 5)))
    return X, W, np.eye(W.shape[1])[rng.integers(0, W.shape[1], size=X.shape[0])]


def _spd(rng):
    W = well_conditioned(rng, length(rng, 2, 6))
    S = W @ W.T
    return S, vector(rng, S.shape[0])


def _counts(rng):
    n = length(rng)
    k = rng.integers(0, 6, size=n).astype(float)
    k[0] = 0.0                      # xlogy(0, ·) is 0, its derivative in the count log(·) still
    return k, positive(rng, n), 1.7


SPECIAL = [
    entry(logistic_nll, _classification, "X w", "expit matmul"),
    entry(logistic_renamed, lambda r: (vector(r), 0.8, -0.3), "x a b", "expit import-as"),
    entry(probit_nll, lambda r: (lambda x: (x, (r.uniform(size=x.size) > 0.5).astype(float), 1.1, 0.2))(vector(r)),
          "x a b", "erfc"),
    entry(normal_tail_loop, lambda r: (vector(r), 0.1, 0.9), "x mu s", "erfc math loop"),
    entry(far_tail, lambda r: (vector(r), 1.5), "x s", "erfc tail"),
    entry(erf_features, lambda r: (lambda x: (x, vector(r, x.size)))(vector(r)), "x w", "erf module"),
    entry(poisson_nll, _poisson, "w", "xlogy gammaln exp"),
    entry(negative_binomial_nll, _counts, "mu r", "gammaln xlogy"),
    entry(beta_logpdf, lambda r: (r.uniform(0.1, 0.9, size=length(r)), 2.5, 1.7), "x a b", "xlogy gammaln"),
    entry(binary_cross_entropy, lambda r: (lambda p: (p, (r.uniform(size=p.size) > 0.5).astype(float)))(
        r.uniform(0.05, 0.95, size=length(r))), "p", "xlogy"),
    entry(logit_roundtrip, lambda r: (lambda q: (q, vector(r, q.size)))(r.uniform(0.05, 0.95, size=length(r))),
          "q t", "logit expit"),
    entry(softmax_cross_entropy, _softmax, "X W", "logsumexp axis keepdims"),
    entry(log_partition, lambda r: (vector(r),), "theta", "logsumexp module"),
    entry(mixture_loglik, lambda r: (vector(r), vector(r), 0.8), "x mu s", "logsumexp axis broadcast"),
    entry(gaussian_by_imports, _spd, "S x", "solve slogdet from-import"),
]
