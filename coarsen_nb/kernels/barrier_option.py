"""Monte Carlo up-and-out barrier call: per-path loops with a sticky knock-out flag.

The pricer as a quant writes it first: an outer loop over simulated paths, an
inner loop over time steps that moves the geometric Brownian motion one step
and knocks the path out for good once it crosses the barrier, then the path's
payoff ``max(S_T − S_0, 0)`` if it survived.  The paths are independent: every
one starts from ``s0`` and only its payoff leaves it, so coarsen_nb runs the
inner loop once over all paths at once (phi/batching.py): step by step, each
path a lane of an array, one tape entry of lane arrays per step.  The knock-out is piecewise constant in the
parameters (derivative 0 almost everywhere), the payoff's kink is at
S_T = S_0.  ``wrt`` is the spot ``s0`` and the volatility ``sigma`` (the
shocks ``z`` and the barrier are data).
"""

import math

import numpy as np

META = dict(
    name="barrier_option",
    wrt=("s0", "sigma"),
    sizes=(10**2, 10**3, 10**4),
    quick_sizes=(10**2,),
    test_size=6,
    size_name="paths of 50 steps",
    loop_kind="batched",
    paper=False,
    description="Monte Carlo up-and-out barrier call; an outer loop over independent paths, an inner loop "
                "over steps with a sticky knock-out flag",
)


def barrier_option(z, s0, sigma, level):
    total = 0.0
    for p in range(z.shape[0]):
        s = s0
        alive = 1.0
        for t in range(z.shape[1]):
            s = s * math.exp(sigma * z[p, t] - 0.5 * sigma * sigma)
            if s > level:
                alive = 0.0
        total += alive * max(s - s0, 0.0)
    return total / z.shape[0]


def vectorized(z, s0, sigma, level):
    """The same price with array operations: every path's prices at once by a cumulative sum of the log
    steps, the knock-out as ``np.any`` over the steps."""
    paths = s0 * np.exp(np.cumsum(sigma * z - 0.5 * sigma * sigma, axis=1))
    alive = ~np.any(paths > level, axis=1)
    return float(np.sum(np.where(alive, np.maximum(paths[:, -1] - s0, 0.0), 0.0))) / z.shape[0]


def grad(z, s0, sigma, level):
    """S_t = s0·exp(Σ_{u≤t} (σ z_u − σ²/2)); a surviving path in the money contributes ∂S_T/∂s0 − 1 =
    S_T/s0 − 1 and ∂S_T/∂σ = S_T·Σ_t (z_t − σ); the knock-out indicator's derivative is 0."""
    paths = s0 * np.exp(np.cumsum(sigma * z - 0.5 * sigma * sigma, axis=1))
    s_end = paths[:, -1]
    live = (~np.any(paths > level, axis=1)) & (s_end > s0)
    n = z.shape[0]
    d_s0 = float(np.sum(np.where(live, s_end / s0 - 1.0, 0.0))) / n
    d_sigma = float(np.sum(np.where(live, s_end * np.sum(z - sigma, axis=1), 0.0))) / n
    return d_s0, d_sigma


def make_inputs(size, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((size, 50)), 1.0, float(rng.uniform(0.015, 0.025)), 1.15)
