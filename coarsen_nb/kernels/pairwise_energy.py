"""Pairwise Lennard-Jones energy with a cutoff, over all particle pairs i < j.

The classic molecular-dynamics inner loop: for each pair closer than the
cutoff r_c = 2.5σ, add 4ε[(σ/r)¹² − (σ/r)⁶] shifted by its value at r_c (so
the energy is continuous at the cutoff; its derivative still jumps there).
Positions are three coordinate arrays; the pair loop is triangular
(``for j in range(i + 1, n)``) with a branch on the distance.  ``wrt`` is
("x", "y", "z"): the gradient is minus the forces, what every MD step or
energy minimization needs.  Units: ε = σ = 1.
"""

import math

import numpy as np

META = dict(
    name="pairwise_energy",
    wrt=("x", "y", "z"),
    sizes=(100, 300, 1000),
    quick_sizes=(100,),
    test_size=8,
    size_name="particles",
    loop_kind="triangular-branch",
    paper=False,
    description="Lennard-Jones energy over pairs i < j with a shifted cutoff; triangular nested "
                "loops with a distance branch",
)

CUTOFF = 2.5               # r_c; written as a literal in the function, as a user would
SPACING = 1.12


def pairwise_energy(x, y, z):
    n = len(x)
    inv6_c = 1.0 / 2.5**6
    shift = 4.0 * (inv6_c * inv6_c - inv6_c)
    e = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            dx = x[i] - x[j]
            dy = y[i] - y[j]
            dz = z[i] - z[j]
            r = math.sqrt(dx * dx + dy * dy + dz * dz)
            if r < 2.5:
                inv6 = 1.0 / r**6
                e += 4.0 * (inv6 * inv6 - inv6) - shift
    return e


def grad(x, y, z):
    """dE/dr = 4(−12 r⁻¹³ + 6 r⁻⁷) inside the cutoff; pair forces summed with an n × n mask."""
    dx = x[:, None] - x[None, :]
    dy = y[:, None] - y[None, :]
    dz = z[:, None] - z[None, :]
    r2 = dx * dx + dy * dy + dz * dz
    np.fill_diagonal(r2, 1.0)                         # placeholder; masked out below
    r = np.sqrt(r2)
    inside = r < CUTOFF
    np.fill_diagonal(inside, False)
    inv_r = np.where(inside, 1.0 / r, 0.0)
    inv6 = inv_r**6
    coef = np.where(inside, 4.0 * (-12.0 * inv6 * inv6 + 6.0 * inv6) * inv_r * inv_r, 0.0)   # (dE/dr)/r
    # each unordered pair appears twice in the full matrix, once per endpoint: the row sum is exact
    return np.sum(coef * dx, axis=1), np.sum(coef * dy, axis=1), np.sum(coef * dz, axis=1)


def make_inputs(size, seed=0):
    """A jittered simple-cubic lattice near the LJ minimum spacing (no overlapping pairs)."""
    rng = np.random.default_rng(seed)
    side = math.ceil(size ** (1.0 / 3.0) - 1e-9)
    idx = np.arange(side**3)[:size]
    pos = SPACING * np.stack((idx % side, (idx // side) % side, idx // (side * side)), axis=1).astype(float)
    pos += 0.08 * rng.standard_normal(pos.shape)
    return (pos[:, 0].copy(), pos[:, 1].copy(), pos[:, 2].copy())
