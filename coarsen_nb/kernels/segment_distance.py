"""Worst squared distance of a point cloud to a segment: a clamped projection inside a running maximum.

The fitting objective of a tolerance check (does every measured point lie
within a band around the nominal edge a–b?), written as a geometer writes it:
for each point, the parameter of its projection onto the line through a and b,
clamped to the segment, ``t = min(max(t, 0.0), 1.0)``; the squared distance to
that foot point; and the worst one so far, ``worst = max(worst, d)``.  The clamp
is a two-sided branch (a ``Piecewise`` of t) inside the loop body, the running
maximum a reduction whose derivative is the arg-maximum point's.  ``wrt`` is
the segment's end points ``ax, ay, bx, by`` (the points are data), so the
gradient says how to move the edge to shrink the worst deviation.
"""

import numpy as np

META = dict(
    name="segment_distance",
    wrt=("ax", "ay", "bx", "by"),
    sizes=(10**3, 10**4, 10**5),
    quick_sizes=(10**3,),
    test_size=9,
    size_name="points",
    loop_kind="closed-form",
    paper=False,
    description="worst squared distance of points to a segment; a clamped projection inside a running maximum",
)


def segment_distance(px, py, ax, ay, bx, by):
    dx = bx - ax
    dy = by - ay
    l2 = dx * dx + dy * dy
    worst = 0.0
    for i in range(len(px)):
        t = ((px[i] - ax) * dx + (py[i] - ay) * dy) / l2
        t = min(max(t, 0.0), 1.0)
        ex = px[i] - (ax + t * dx)
        ey = py[i] - (ay + t * dy)
        worst = max(worst, ex * ex + ey * ey)
    return worst


def vectorized(px, py, ax, ay, bx, by):
    """The same value with array operations: ``np.clip`` for the clamp, ``np.max`` for the running maximum."""
    dx, dy = bx - ax, by - ay
    t = np.clip(((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy), 0.0, 1.0)
    ex, ey = px - (ax + t * dx), py - (ay + t * dy)
    return float(np.max(ex * ex + ey * ey, initial=0.0))


def grad(px, py, ax, ay, bx, by):
    """Only the first arg-maximum point i counts (Python's ``max`` keeps the earlier of equals).  With
    e = p_i − (a + t(b − a)): where 0 < t < 1 the clamp passes t through, and t minimizes |e|², so its own
    derivative drops out (∂|e|²/∂t = −2e·(b − a) = 0); where t is clamped it is constant.  Either way
    ∂d/∂a = −2(1 − t)·e and ∂d/∂b = −2t·e.  If no point is farther than 0, the maximum is the initial 0."""
    dx, dy = bx - ax, by - ay
    t = np.clip(((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy), 0.0, 1.0)
    ex, ey = px - (ax + t * dx), py - (ay + t * dy)
    d = ex * ex + ey * ey
    i = int(np.argmax(d))
    if not d[i] > 0.0:
        return 0.0, 0.0, 0.0, 0.0
    ti, exi, eyi = float(t[i]), float(ex[i]), float(ey[i])
    return -2.0 * (1.0 - ti) * exi, -2.0 * (1.0 - ti) * eyi, -2.0 * ti * exi, -2.0 * ti * eyi


def make_inputs(size, seed=0):
    """Points scattered around the segment (0.1, 0.2)–(0.9, 0.7), some beyond either end, so the clamp
    takes all three arms; the end points are jittered per seed."""
    rng = np.random.default_rng(seed)
    u = rng.uniform(-0.1, 1.1, size)
    off = 0.05 * rng.standard_normal(size)
    ax, ay, bx, by = (float(v) for v in np.array([0.1, 0.2, 0.9, 0.7]) + 0.02 * rng.standard_normal(4))
    px = ax + u * (bx - ax) - off * (by - ay)
    py = ay + u * (by - ay) + off * (bx - ax)
    return (px, py, ax, ay, bx, by)
