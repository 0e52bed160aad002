"""HMC (Shen et al., OOPSLA 2021): potential energy of a Bayesian logistic-regression posterior.

Hamiltonian Monte Carlo moves the parameters q along −∇U(q), where
U(q) = −log prior(q) − log likelihood(q) is the negative log posterior.  Here
the prior is an isotropic Gaussian N(0, prior_var·I) (constant dropped) and
the likelihood is logistic over N records with labels y_i ∈ {−1, +1}:
−log σ(y_i x_iᵀq).  The margin is accumulated in a nested loop over features,
and the log-sigmoid is evaluated stably by a branch on the margin's sign.
``wrt`` is ``q``: ∇U is what every leapfrog step evaluates.
"""

import math

import numpy as np

META = dict(
    name="hmc",
    wrt=("q",),
    sizes=(10**3, 10**4, 10**5),
    quick_sizes=(10**3,),
    test_size=8,
    size_name="records N (10 features)",
    loop_kind="nested-branch",
    paper=True,
    description="negative log posterior of Bayesian logistic regression; nested loops over records "
                "and features, stable log-sigmoid by a branch on the margin",
)

FEATURES = 10


def hmc(q, X, y, prior_var):
    n = X.shape[0]
    d = len(q)
    u = 0.0
    for j in range(d):
        u += 0.5 * q[j] * q[j] / prior_var
    for i in range(n):
        z = 0.0
        for j in range(d):
            z += X[i, j] * q[j]
        m = y[i] * z
        if m > 0:
            u += math.log1p(math.exp(-m))
        else:
            u += -m + math.log1p(math.exp(m))
    return u


def grad(q, X, y, prior_var):
    """∇U = q/prior_var − Xᵀ (y · σ(−m)), m = y·Xq; σ(−m) evaluated without overflow."""
    m = y * (X @ q)
    e = np.exp(-np.abs(m))
    sig_neg = np.where(m > 0, e / (1.0 + e), 1.0 / (1.0 + e))     # σ(−m)
    return q / prior_var - X.T @ (y * sig_neg)


def make_inputs(size, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((size, FEATURES))
    q_true = rng.standard_normal(FEATURES)
    p = 1.0 / (1.0 + np.exp(-(X @ q_true)))
    y = np.where(rng.random(size) < p, 1.0, -1.0)
    q = 0.5 * rng.standard_normal(FEATURES)
    return (q, X, y, 4.0)
