"""Piecewise sum: Σ_i (x_i² if x_i > 0 else sin x_i).

Classic micro-workload for branches inside a reduction loop: the `if` on
``x[i]`` is a γ inside a Σ, which coarsening lowers to one masked array
expression.  The function is continuous at 0 (both branches give 0) but its
derivative jumps (0 on the right, cos 0 = 1 on the left), so it also exercises
the parametric-discontinuity report.  ``wrt`` is the data vector ``x``.
"""

import math

import numpy as np

META = dict(
    name="piecewise_sum",
    wrt=("x",),
    sizes=(10**3, 10**4, 10**5),
    quick_sizes=(10**3,),
    test_size=8,
    size_name="elements of x",
    loop_kind="closed-form",
    paper=False,
    description="sum over x of x^2 where x > 0, sin(x) elsewhere; a branch inside a reduction",
)


def piecewise_sum(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 0:
            s += x[i] ** 2
        else:
            s += math.sin(x[i])
    return s


def grad(x):
    """d/dx_i: 2 x_i on the positive side, cos x_i elsewhere."""
    return np.where(x > 0, 2.0 * x, np.cos(x))


def make_inputs(size, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(size),)
