"""Brachistochrone (Shen et al., OOPSLA 2021): travel time of a bead sliding down a discretized curve.

A bead is released at rest from (0, 0) and slides without friction to
(length, y_end), y_end < 0, along a polyline through n interior points at
equally spaced abscissae with heights ``y`` (all below the start).  By energy
conservation its speed at height h is √(−2 g h); on a straight segment the
acceleration is constant, so the segment takes 2 s / (v_a + v_b) for length s
and end speeds v_a, v_b.  The travel time is the sum over the n + 1 segments.
``wrt`` is the interior heights ``y``: minimizing the time over ``y`` finds the
cycloid (Bernoulli's 1696 problem).

The loop walks the array's elements and carries the previous point (height and
speed) — the way one writes a polyline sum without indexing the ends.
"""

import math

import numpy as np

META = dict(
    name="brachistochrone",
    wrt=("y",),
    sizes=(200, 400, 1000),
    quick_sizes=(200,),
    test_size=10,
    size_name="interior points of the curve",
    loop_kind="carried-state",
    paper=True,
    description="travel time of a frictionless bead along a polyline, w.r.t. the interior heights",
)


def brachistochrone(y, y_end, length, g):
    n = len(y)
    h = length / (n + 1)
    t = 0.0
    y_prev = 0.0
    v_prev = 0.0
    for yi in y:
        v = math.sqrt(-2.0 * g * yi)
        dy = yi - y_prev
        t += 2.0 * math.sqrt(h * h + dy * dy) / (v_prev + v)
        y_prev = yi
        v_prev = v
    v = math.sqrt(-2.0 * g * y_end)
    dy = y_end - y_prev
    t += 2.0 * math.sqrt(h * h + dy * dy) / (v_prev + v)
    return t


def grad(y, y_end, length, g):
    """Each height enters the segment before it and the one after it, through length and speed."""
    n = len(y)
    h = length / (n + 1)
    ys = np.concatenate(([0.0], y, [y_end]))
    v = np.sqrt(-2.0 * g * ys)
    dv = np.zeros_like(ys)
    dv[1:] = -g / v[1:]                      # dv/dh; the start point is fixed (and has v = 0)
    dy = np.diff(ys)
    s = np.sqrt(h * h + dy * dy)
    vs = v[:-1] + v[1:]
    # segment k joins points k and k+1: t_k = 2 s_k / (v_k + v_{k+1})
    dt_ds = 2.0 / vs
    dt_dvs = -2.0 * s / (vs * vs)
    d_left = dt_ds * (-dy / s) + dt_dvs * dv[:-1]     # d t_k / d ys[k]
    d_right = dt_ds * (dy / s) + dt_dvs * dv[1:]      # d t_k / d ys[k+1]
    return d_left[1:] + d_right[:-1]


def make_inputs(size, seed=0):
    """A sagging curve between the ends, perturbed multiplicatively so it stays below the start."""
    rng = np.random.default_rng(seed)
    length, y_end, g = 2.0, -1.0, 9.81
    xs = length * np.arange(1, size + 1) / (size + 1)
    y = y_end * xs / length - 0.5 * np.sin(np.pi * xs / length)
    y = y * (1.0 + 0.05 * rng.standard_normal(size))
    return (y, y_end, length, g)
