"""Simple exponential smoothing fitted by its one-step forecast error.

The forecasting model of Brown and Holt: the level s_{i+1} = α·x_i + (1 − α)·s_i
(from s_0 = 0) forecasts x_{i+1}, and α is fitted by the mean squared forecast
error.  Written as a user writes it, with element writes ``s[i] = ...`` and a
running error, both reading the element the previous iteration wrote: coarsen_nb
lifts that element to a scan of s ← (1 − α)·s + α·x_i, so the loop is array
code (no per-iteration copy of ``s`` into a tape) and its adjoint is the
reverse scan.  ``wrt`` is the smoothing constant ``alpha`` and the series ``x``.
"""

import numpy as np

from coarsen_nb.kernels.doubling_scan import scan

META = dict(
    name="exp_smoothing",
    wrt=("x", "alpha"),
    sizes=(10**3, 10**4, 10**5),
    quick_sizes=(10**3,),
    test_size=8,
    size_name="observations",
    loop_kind="linear-recurrence",
    paper=False,
    description="mean squared one-step forecast error of simple exponential smoothing (element writes)",
)


def exp_smoothing(x, alpha):
    s = np.zeros(len(x) + 1)           # s[i]: the level before x[i], the forecast of x[i]; s[0] = 0
    sse = 0.0
    for i in range(len(x)):
        err = x[i] - s[i]
        sse += err * err
        s[i + 1] = alpha * x[i] + (1 - alpha) * s[i]
    return sse / len(x)


def vectorized(x, alpha):
    """The same error with array operations: the levels by the doubling scan, then one sum."""
    n = len(x)
    s = np.concatenate([[0.0], scan(1.0 - alpha, alpha * x)])[:n]     # s_0 .. s_{n-1}
    return float(np.sum((x - s) ** 2)) / n


def grad(x, alpha):
    """With the errors e_i = x_i − s_i and λ_i = ∂L/∂s_{i+1} = −2e_{i+1}/n + (1 − α)·λ_{i+1} (a reverse
    scan, λ_{n−1} = 0): ∂/∂x_i = 2e_i/n + α·λ_i, ∂/∂α = Σ_i λ_i·(x_i − s_i)."""
    n = len(x)
    s = np.concatenate([[0.0], scan(1.0 - alpha, alpha * x)])[:n]     # s_0 .. s_{n-1}
    e = x - s
    lam = scan(1.0 - alpha, np.concatenate([-2.0 * e[1:] / n, [0.0]])[::-1])[::-1]
    return 2.0 * e / n + alpha * lam, float(np.dot(lam, e))


def make_inputs(size, seed=0):
    rng = np.random.default_rng(seed)
    x = np.cumsum(0.1 * rng.standard_normal(size)) + np.sin(np.arange(size) / 30.0)
    return (x, float(rng.uniform(0.2, 0.5)))
