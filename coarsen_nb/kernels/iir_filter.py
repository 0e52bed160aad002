"""First-order IIR filter fitted to a target: Σ_k (s_k − y_k)² with s_k = a·s_{k−1} + g·x_k.

The one-pole low-pass filter of signal processing (and the AR(1) state of a
time-series model), written as a loop over samples whose state ``s`` is read
in the same iteration that updates it: the linear recurrence s ← a·s + b_k
(C7) read every step, which coarsen_nb lifts to a scan — a doubling scan
over the affine maps in the forward code, the reverse scan with the same
coefficient in the adjoint — instead of iterating sample by sample.
``wrt`` is the filter's pole ``a``, its gain ``g`` and the input signal ``x``.
"""

import numpy as np

from coarsen_nb.kernels.doubling_scan import scan

META = dict(
    name="iir_filter",
    wrt=("x", "a", "g"),
    sizes=(10**3, 10**4, 10**5),
    quick_sizes=(10**3,),
    test_size=8,
    size_name="samples",
    loop_kind="linear-recurrence",
    paper=False,
    description="squared error of a one-pole IIR filter's output against a target; the state is read every step",
)


def iir_filter(x, y, a, g):
    s = 0.0
    loss = 0.0
    for k in range(len(x)):
        s = a * s + g * x[k]
        loss += (s - y[k]) ** 2
    return loss


def vectorized(x, y, a, g):
    """The same loss with array operations: the filter's output by the doubling scan, then one sum."""
    s = scan(a, g * x)
    return float(np.sum((s - y) ** 2))


def grad(x, y, a, g):
    """The adjoint recurrence λ_k = 2(s_k − y_k) + a·λ_{k+1} (a reverse scan): ∂/∂x_k = g·λ_k,
    ∂/∂a = Σ_k λ_k·s_{k−1}, ∂/∂g = Σ_k λ_k·x_k."""
    s = scan(a, g * x)
    lam = scan(a, 2.0 * (s - y)[::-1])[::-1]
    s_prev = np.concatenate([[0.0], s[:-1]])
    return g * lam, float(np.dot(lam, s_prev)), float(np.dot(lam, x))


def make_inputs(size, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(size) / 50.0
    x = np.sin(t) + 0.3 * rng.standard_normal(size)
    y = 0.8 * np.sin(t - 0.2)
    return (x, y, float(rng.uniform(0.85, 0.95)), float(rng.uniform(0.05, 0.15)))
