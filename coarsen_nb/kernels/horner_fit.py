"""Least-squares loss of a polynomial evaluated by Horner's rule.

Classic curve fitting: mean over N data points of (p(x_i) − y_i)², with
p(x) = c_0 x^D + … + c_D evaluated by Horner's rule (p ← p·x + c_k) in an
inner loop.  The inner loop is the linear recurrence v ← a·v + b_k (the
paper's C7/C8 form).  ``wrt`` is the coefficient vector ``c`` (highest power
first), which is what a fitting loop needs.
"""

import numpy as np

META = dict(
    name="horner_fit",
    wrt=("c",),
    sizes=(10**3, 10**4, 10**5),
    quick_sizes=(10**3,),
    test_size=8,
    size_name="data points (degree 8)",
    loop_kind="linear-recurrence",
    paper=False,
    description="mean squared error of a degree-8 polynomial (Horner's rule) over data points",
)

DEGREE = 8


def horner_fit(c, xs, ys):
    n = len(xs)
    loss = 0.0
    for i in range(n):
        p = 0.0
        for k in range(len(c)):
            p = p * xs[i] + c[k]
        r = p - ys[i]
        loss += r * r
    return loss / n


def grad(c, xs, ys):
    """dp/dc_k = x^(D−k); loss gradient is 2/N · Vᵀ (p − y) with V the Vandermonde matrix."""
    v = np.vander(xs, len(c))          # columns x^(D), ..., x^0: highest power first, as c
    r = v @ c - ys
    return 2.0 * (v.T @ r) / len(xs)


def make_inputs(size, seed=0):
    rng = np.random.default_rng(seed)
    xs = rng.uniform(-1.0, 1.0, size)
    ys = np.sin(3.0 * xs) + 0.1 * rng.standard_normal(size)
    c = 0.5 * rng.standard_normal(DEGREE + 1)
    return (c, xs, ys)
