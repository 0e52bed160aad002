"""Extended Rosenbrock function Σ_i 100 (x_{i+1} − x_i²)² + (1 − x_i)².

The classic optimisation test problem (Rosenbrock 1960, chained form).  Its
loop reads ``x[i]`` and ``x[i + 1]``, so each element feeds two terms: a
shifted-index reduction.  ``wrt`` is ``x``.
"""

import numpy as np

META = dict(
    name="rosenbrock",
    wrt=("x",),
    sizes=(10**3, 10**4, 10**5),
    quick_sizes=(10**3,),
    test_size=8,
    size_name="dimension of x",
    loop_kind="closed-form",
    paper=False,
    description="chained Rosenbrock function; loop over x[i], x[i+1]",
)


def rosenbrock(x):
    f = 0.0
    for i in range(len(x) - 1):
        a = x[i + 1] - x[i] * x[i]
        b = 1.0 - x[i]
        f += 100.0 * a * a + b * b
    return f


def grad(x):
    """Each term i contributes to x_i and x_{i+1}; accumulate both shifts."""
    a = x[1:] - x[:-1] ** 2
    b = 1.0 - x[:-1]
    g = np.zeros_like(x)
    g[:-1] += -400.0 * a * x[:-1] - 2.0 * b
    g[1:] += 200.0 * a
    return g


def make_inputs(size, seed=0):
    rng = np.random.default_rng(seed)
    # Around the curved valley, where the function is interesting.
    return (1.0 + 0.5 * rng.standard_normal(size),)
