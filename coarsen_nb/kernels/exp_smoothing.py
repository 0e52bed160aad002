"""Simple exponential smoothing fitted by its one-step forecast error.

The forecasting model of Brown and Holt: the level s_i = α·x_i + (1 − α)·s_{i−1}
(s_0 = x_0) forecasts x_{i+1}, and α is fitted by the mean squared forecast
error.  Written as a user writes it, with element writes ``s[i] = ...`` and a
running error, both reading the element the previous iteration wrote: coarsen_nb
lifts that element to a scan of s ← (1 − α)·s + α·x_i, so the loop is array
code (no per-iteration copy of ``s`` into a tape) and its adjoint is the
reverse scan.  ``wrt`` is the smoothing constant ``alpha`` and the series ``x``.
"""

import numpy as np

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
    s = np.zeros(len(x))
    s[0] = x[0]
    sse = 0.0
    for i in range(1, len(x)):
        err = x[i] - s[i - 1]          # the forecast of x[i] is the previous level
        sse += err * err
        s[i] = alpha * x[i] + (1 - alpha) * s[i - 1]
    return sse / (len(x) - 1)


def _scan(a, b):
    """v_k = a·v_{k−1} + b_k from v_{−1} = 0, for every k: a doubling scan (no division, stable for |a| < 1)."""
    v = np.array(b, dtype=np.float64)
    c, sh = a, 1
    while sh < v.size and c != 0:
        v[sh:] += c * v[:-sh]
        c *= c
        sh *= 2
    return v


def grad(x, alpha):
    """With e_i = x_i − s_{i−1} and λ_j = ∂L/∂s_j = −2e_{j+1}/(n−1) + (1 − α)·λ_{j+1} (a reverse scan):
    ∂/∂x_0 = λ_0, ∂/∂x_i = 2e_i/(n−1) + α·λ_i, ∂/∂α = Σ_{i≥1} λ_i·(x_i − s_{i−1})."""
    n = len(x)
    b = alpha * x
    b[0] = x[0]
    s = _scan(1.0 - alpha, b)
    e = x[1:] - s[:-1]
    direct = np.concatenate([-2.0 * e / (n - 1), [0.0]])
    lam = _scan(1.0 - alpha, direct[::-1])[::-1]
    gx = np.concatenate([[lam[0]], 2.0 * e / (n - 1) + alpha * lam[1:]])
    return gx, float(np.dot(lam[1:], e))


def make_inputs(size, seed=0):
    rng = np.random.default_rng(seed)
    x = np.cumsum(0.1 * rng.standard_normal(size)) + np.sin(np.arange(size) / 30.0)
    return (x, float(rng.uniform(0.2, 0.5)))
