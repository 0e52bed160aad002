"""Log-likelihood of a 1-D Gaussian mixture, with a streaming log-sum-exp over components.

The classic density-model objective: Σ_i log Σ_k w_k N(x_i | μ_k, σ_k²) with
σ_k = exp(log_sigma_k) and mixture weights w = softmax(logits), so every
parameter is unconstrained.  The log weights are first written into a fresh
array (``log_w[k] = ...``); then, per data point, the log-sum-exp over the
components is accumulated in one pass with the running-max trick (a branch
rescales the running sum when a new maximum appears), which is how one writes
a numerically safe mixture likelihood in a loop.  ``wrt`` is
("mu", "log_sigma", "logits"): what EM-free gradient fitting needs.
"""

import math

import numpy as np

META = dict(
    name="gmm",
    wrt=("mu", "log_sigma", "logits"),
    sizes=(10**3, 10**4, 10**5),
    quick_sizes=(10**3,),
    test_size=8,
    size_name="data points (8 components)",
    loop_kind="nested-branch",
    paper=False,
    description="1-D Gaussian-mixture log-likelihood; streaming log-sum-exp over components "
                "with a running-max branch",
)

COMPONENTS = 8


def gmm(x, mu, log_sigma, logits):
    n = len(x)
    k_count = len(mu)
    m = -math.inf
    s = 0.0
    for k in range(k_count):
        if logits[k] > m:
            s = s * math.exp(m - logits[k]) + 1.0
            m = logits[k]
        else:
            s += math.exp(logits[k] - m)
    log_norm = m + math.log(s)
    log_w = np.zeros(k_count)
    for k in range(k_count):
        log_w[k] = logits[k] - log_norm - log_sigma[k] - 0.5 * math.log(2.0 * math.pi)
    ll = 0.0
    for i in range(n):
        m = -math.inf
        s = 0.0
        for k in range(k_count):
            z = (x[i] - mu[k]) * math.exp(-log_sigma[k])
            a = log_w[k] - 0.5 * z * z
            if a > m:
                s = s * math.exp(m - a) + 1.0
                m = a
            else:
                s += math.exp(a - m)
        ll += m + math.log(s)
    return ll


def grad(x, mu, log_sigma, logits):
    """Responsibilities r_ik = softmax_k(a_ik) give every partial derivative."""
    w = np.exp(logits - np.max(logits))
    w /= np.sum(w)
    sigma = np.exp(log_sigma)
    z = (x[:, None] - mu[None, :]) / sigma[None, :]
    a = np.log(w)[None, :] - log_sigma[None, :] - 0.5 * z * z
    r = np.exp(a - np.max(a, axis=1, keepdims=True))
    r /= np.sum(r, axis=1, keepdims=True)
    g_mu = np.sum(r * z, axis=0) / sigma
    g_log_sigma = np.sum(r * (z * z - 1.0), axis=0)
    g_logits = np.sum(r, axis=0) - len(x) * w
    return g_mu, g_log_sigma, g_logits


def make_inputs(size, seed=0):
    rng = np.random.default_rng(seed)
    centers = np.linspace(-6.0, 6.0, COMPONENTS)
    x = centers[rng.integers(0, COMPONENTS, size)] + 0.7 * rng.standard_normal(size)
    mu = centers + 0.5 * rng.standard_normal(COMPONENTS)
    log_sigma = np.log(0.5 + rng.random(COMPONENTS))
    logits = 0.3 * rng.standard_normal(COMPONENTS)
    return (x, mu, log_sigma, logits)
