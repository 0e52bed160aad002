"""Logistic-regression negative log-likelihood (mean over records), labels y ∈ {0, 1}.

The classic training loss: for each record, z = x_iᵀw + b accumulated over
features in an inner loop, and the per-record loss log(1 + e^z) − y·z in the
branch-free stable form max(z, 0) − y·z + log1p(e^{−|z|}) (the one scikit-learn
uses).  Unlike :mod:`coarsen_nb.kernels.hmc` it has a bias, {0, 1} labels, no prior and
uses builtin ``max``/``abs`` instead of an ``if``.  ``wrt`` is ("w", "b").
"""

import math

import numpy as np

META = dict(
    name="logreg_nll",
    wrt=("w", "b"),
    sizes=(10**3, 10**4, 10**5),
    quick_sizes=(10**3,),
    test_size=8,
    size_name="records N (10 features)",
    loop_kind="nested",
    paper=False,
    description="mean logistic-regression NLL; loops over records and features, stable softplus "
                "via max/abs",
)

FEATURES = 10


def logreg_nll(w, b, X, y):
    n = X.shape[0]
    d = len(w)
    nll = 0.0
    for i in range(n):
        z = b
        for j in range(d):
            z += X[i, j] * w[j]
        nll += max(z, 0.0) - z * y[i] + math.log1p(math.exp(-abs(z)))
    return nll / n


def grad(w, b, X, y):
    """d/dz = σ(z) − y; then chain through z = Xw + b."""
    z = X @ w + b
    e = np.exp(-np.abs(z))
    sig = np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    r = (sig - y) / X.shape[0]
    return X.T @ r, float(np.sum(r))


def make_inputs(size, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((size, FEATURES))
    w_true = rng.standard_normal(FEATURES)
    y = (rng.random(size) < 1.0 / (1.0 + np.exp(-(X @ w_true) - 0.3))).astype(float)
    w = 0.5 * rng.standard_normal(FEATURES)
    b = 0.1 * rng.standard_normal()
    return (w, b, X, y)
