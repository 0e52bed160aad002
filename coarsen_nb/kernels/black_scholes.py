"""Black–Scholes value of a book of European calls, and its Greeks.

The classic quantitative-finance workload: the value of a portfolio of N
European call options, option i with its own spot S_i, strike K_i, volatility
σ_i and time to expiry τ_i, and one risk-free rate r:
C_i = S_i Φ(d1) − K_i e^{−r τ_i} Φ(d2), with the normal CDF Φ written through
``math.erf``.  ``wrt`` is ("spot", "vol", "r"): the gradient is per-option
delta Φ(d1), per-option vega S_i φ(d1) √τ_i, and the book's rho
Σ K_i τ_i e^{−r τ_i} Φ(d2) — the Greeks a risk system computes every tick.
"""

import math

import numpy as np

META = dict(
    name="black_scholes",
    wrt=("spot", "vol", "r"),
    sizes=(10**4, 10**5, 10**6),
    quick_sizes=(10**4,),
    test_size=8,
    size_name="options in the book",
    loop_kind="closed-form",
    paper=False,
    description="sum of Black-Scholes call prices (normal CDF via math.erf); Greeks delta, vega, rho",
)


def _norm_cdf(z):
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


try:                                    # the hand-written gradient needs a vectorized Φ
    from scipy.special import ndtr as _ndtr
except ImportError:                     # pragma: no cover - scipy is optional (slow fallback)
    _ndtr = np.vectorize(_norm_cdf, otypes=[float])


def black_scholes(spot, strike, vol, tau, r):
    total = 0.0
    for i in range(len(spot)):
        sq = vol[i] * math.sqrt(tau[i])
        d1 = (math.log(spot[i] / strike[i]) + (r + 0.5 * vol[i] * vol[i]) * tau[i]) / sq
        d2 = d1 - sq
        total += spot[i] * _norm_cdf(d1) - strike[i] * math.exp(-r * tau[i]) * _norm_cdf(d2)
    return total


def grad(spot, strike, vol, tau, r):
    """Delta, vega per option and the book's rho (the S φ(d1) = K e^{−rτ} φ(d2) identity used)."""
    sq = vol * np.sqrt(tau)
    d1 = (np.log(spot / strike) + (r + 0.5 * vol * vol) * tau) / sq
    d2 = d1 - sq
    pdf1 = np.exp(-0.5 * d1 * d1) / math.sqrt(2.0 * math.pi)
    delta = _ndtr(d1)
    vega = spot * pdf1 * np.sqrt(tau)
    rho = float(np.sum(strike * tau * np.exp(-r * tau) * _ndtr(d2)))
    return delta, vega, rho


def make_inputs(size, seed=0):
    rng = np.random.default_rng(seed)
    spot = 100.0 * np.exp(0.1 * rng.standard_normal(size))
    strike = 100.0 * np.exp(0.2 * rng.standard_normal(size))
    vol = rng.uniform(0.1, 0.5, size)
    tau = rng.uniform(0.1, 2.0, size)
    return (spot, strike, vol, tau, 0.03)
