"""HookeanSpring (Shen et al., OOPSLA 2021): elastic energy of a 2-D mass-spring lattice.

An n × n grid of vertices at positions (px[i, j], py[i, j]) is joined by
Hookean springs to its right and lower neighbours (rest length ``rest``) and
by shear springs along the diagonal (rest length rest·√2).  The energy is
Σ ½ k (|p_a − p_b| − L_ab)².  ``wrt`` is the positions ("px", "py"): the
gradient is minus the force, what an energy minimizer (gradient descent on
the lattice) needs every step.
"""

import math

import numpy as np

META = dict(
    name="hookean_spring",
    wrt=("px", "py"),
    sizes=(10, 20, 40),
    quick_sizes=(10,),
    test_size=4,
    size_name="vertices per lattice side",
    loop_kind="closed-form",
    paper=True,
    description="mass-spring energy of an n x n lattice (structural + shear springs) w.r.t. positions",
)


def _spring(dx, dy, k, rest):
    d = math.sqrt(dx * dx + dy * dy) - rest
    return 0.5 * k * d * d


def hookean_spring(px, py, k, rest):
    n = px.shape[0]
    diag = rest * math.sqrt(2.0)
    e = 0.0
    for i in range(n):
        for j in range(n - 1):
            e += _spring(px[i, j + 1] - px[i, j], py[i, j + 1] - py[i, j], k, rest)
    for i in range(n - 1):
        for j in range(n):
            e += _spring(px[i + 1, j] - px[i, j], py[i + 1, j] - py[i, j], k, rest)
    for i in range(n - 1):
        for j in range(n - 1):
            e += _spring(px[i + 1, j + 1] - px[i, j], py[i + 1, j + 1] - py[i, j], k, diag)
    return e


def _add_family(gx, gy, px, py, a, b, k, rest):
    """Add one spring family's gradient; a and b are the index slices of its two ends."""
    dx = px[b] - px[a]
    dy = py[b] - py[a]
    length = np.sqrt(dx * dx + dy * dy)
    coef = k * (length - rest) / length       # dE/d(dx) = coef·dx
    gx[b] += coef * dx
    gy[b] += coef * dy
    gx[a] -= coef * dx
    gy[a] -= coef * dy


def grad(px, py, k, rest):
    gx = np.zeros_like(px)
    gy = np.zeros_like(py)
    s = slice(None)
    _add_family(gx, gy, px, py, (s, slice(None, -1)), (s, slice(1, None)), k, rest)
    _add_family(gx, gy, px, py, (slice(None, -1), s), (slice(1, None), s), k, rest)
    _add_family(gx, gy, px, py, (slice(None, -1), slice(None, -1)), (slice(1, None), slice(1, None)),
                k, rest * math.sqrt(2.0))
    return gx, gy


def make_inputs(size, seed=0):
    """A unit-spacing grid, jittered so that every spring is stretched or compressed."""
    rng = np.random.default_rng(seed)
    rest = 1.0
    jj, ii = np.meshgrid(np.arange(size, dtype=float), np.arange(size, dtype=float))
    px = rest * jj + 0.15 * rng.standard_normal((size, size))
    py = rest * ii + 0.15 * rng.standard_normal((size, size))
    return (px, py, 10.0, rest)
