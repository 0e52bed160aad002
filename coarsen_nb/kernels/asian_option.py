"""Monte Carlo arithmetic Asian call: per-path loops with a running average.

An outer loop over simulated paths, an inner loop over time steps that moves
the price one geometric-Brownian step and adds it to a running sum, then the
path's payoff ``max(mean price − K, 0)``.  The running sum reads the price the
same step updates (a prefix product read every step); the independent paths
run together as lanes of one array (phi/batching.py), the inner loop step by
step over all lanes at once (one tape entry of lane arrays per step).
``wrt`` is the spot ``s0``, the volatility ``sigma`` and the strike (the
shocks ``z`` are data).
"""

import math

import numpy as np

META = dict(
    name="asian_option",
    wrt=("s0", "sigma", "strike"),
    sizes=(10**2, 10**3, 10**4),
    quick_sizes=(10**2,),
    test_size=6,
    size_name="paths of 50 steps",
    loop_kind="batched",
    paper=False,
    description="Monte Carlo arithmetic Asian call; per-path loops with a running average of the price",
)


def asian_option(z, s0, sigma, strike):
    payoff = 0.0
    n_paths, n_steps = z.shape
    for p in range(n_paths):
        s = s0
        running = 0.0
        for t in range(n_steps):
            s = s * math.exp(sigma * z[p, t])
            running += s
        payoff += max(running / n_steps - strike, 0.0)
    return payoff / n_paths


def vectorized(z, s0, sigma, strike):
    """The same price with array operations: every path's prices at once by a cumulative sum of the log
    steps, the running average as ``np.mean`` over the steps."""
    avg = np.mean(s0 * np.exp(sigma * np.cumsum(z, axis=1)), axis=1)
    return float(np.sum(np.maximum(avg - strike, 0.0))) / z.shape[0]


def grad(z, s0, sigma, strike):
    """S_t = s0·exp(σ Σ_{u≤t} z_u), A = mean_t S_t; in the money: ∂A/∂s0 = A/s0, ∂A/∂σ =
    mean_t S_t Σ_{u≤t} z_u, ∂/∂K = −1."""
    w = np.cumsum(z, axis=1)
    paths = s0 * np.exp(sigma * w)
    avg = np.mean(paths, axis=1)
    itm = avg > strike
    n = z.shape[0]
    d_s0 = float(np.sum(np.where(itm, avg / s0, 0.0))) / n
    d_sigma = float(np.sum(np.where(itm, np.mean(paths * w, axis=1), 0.0))) / n
    return d_s0, d_sigma, -float(np.sum(itm)) / n


def make_inputs(size, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((size, 50)), 1.0, float(rng.uniform(0.015, 0.025)), 1.0)
